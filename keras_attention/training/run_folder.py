"""A training run's folder: checked before training, resumed or refused when reused.

A run writes only into its `--output-dir` and its `--export` folder, and
never replaces or deletes what it did not write:

- `prepare_run_folder` claims `--output-dir`: a new or empty folder, or one
  that holds this same run (its `run_arguments.json`), which is resumed; one
  whose run never trained (it failed on its data, say) is started anew with
  the new arguments; `--overwrite` empties only a folder of an earlier run;
- `check_export_path` refuses, before training, an `--export` that is
  `--output-dir`, holds it, or is one of the run's own entries, and a
  folder that holds anything but an export this library wrote (marked by
  `EXPORT_MARKER` inside it);
- `remove_run_leftovers` clears what killed writes left in a run folder.

Pure Python (no TensorFlow), so a script can check its paths right after
parsing its arguments, before it spends time importing or training.
"""

import json
import os
import shutil
import tempfile

from keras_attention.durable_files import numbered_entries
from keras_attention.durable_files import write_file_atomically

ARGUMENTS_FILE = "run_arguments.json"
LOCK_FILE = ".run.lock"
# Written last inside every export: a folder holding it is a whole export of this library.
EXPORT_MARKER = "keras_attention_export.json"
# Inside the folder of a script that writes files of fixed names (`claim_output_folder`).
OUTPUT_MARKER = ".keras_attention_output.json"
# What a run writes in its folder that an export must never replace.
RUN_FOLDERS = ("backup", "checkpoints", "logs", "vocabulary")
RUN_FILES = (ARGUMENTS_FILE, LOCK_FILE, "metrics.json", "attention_explorer.html")
# Hidden names of a run folder's temporary writes (see `remove_run_leftovers`).
_PROBE_PREFIX = ".write_probe_"
REMOVED_BACKUP_PREFIX = ".backup.removing_"
_LEFTOVER_PREFIXES = (
    _PROBE_PREFIX,
    REMOVED_BACKUP_PREFIX,
    *(f".{name}.partial_" for name in (ARGUMENTS_FILE, "metrics.json")),
)
_LISTED_ENTRIES = 3  # entries a message shows of a folder that is refused
# Arguments that name a file or folder (after a "format:" prefix): see `_spelled_as_now`.
_PATH_ARGUMENTS = ("dataset", "init_from", "data_dir")
# The key of the arguments file that records where those led when the run started.
RESOLVED_PATHS_KEY = "_resolved_paths"
# The one argument a run goes on with when it changes: more epochs continue it.
_CONTINUED_BY = "epochs"
# What a run writes in its folder before its first training step; the folders
# that training fills (empty until then). See `never_trained`.
_WRITTEN_BEFORE_TRAINING = (ARGUMENTS_FILE, "vocabulary")
_FILLED_BY_TRAINING = ("backup", "checkpoints", "logs")


class RunFolderError(ValueError):
    """The output folder or an output path cannot be used as asked."""


def check_writable(path, name):
    """Raises `RunFolderError` unless a folder can be created and written at `path`.

    The folder (and its parents) is created when missing; a probe file is
    written and removed.

    Args:
        path: a folder path.
        name: the argument it came from, e.g. "--export", for the message.

    Example:

    >>> import tempfile, os
    >>> check_writable(os.path.join(tempfile.mkdtemp(), "new"), "--output-dir")
    """
    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=_PROBE_PREFIX):
            pass
    except OSError as error:
        raise RunFolderError(
            f"`{name}` must be a folder that can be written. Received: {name}={path!r} "
            f"({error.strerror or error})"
        ) from None


def check_export_path(path, output_dir=None, name="--export", source=None):
    """Checks before training that a SavedModel can later be written to `path`.

    `path` may be absent, an empty folder, or an earlier export of this
    library (which the new one replaces whole); its parent must be
    writable. Beside a run folder `output_dir`, `path` must not be that
    folder nor hold it, and inside it must not be one of the run's own
    entries (`checkpoints`, `backup`, `logs`, `vocabulary`, ...):
    `OUTPUT_DIR/served` is fine.

    An earlier export written from another run or checkpoint (its mark
    names its `source`) is refused: it is that run's finished work.

    Args:
        path: the export folder.
        output_dir: the run's `--output-dir`, or None.
        name: the argument `path` came from, for the messages.
        source: what the export is written from (a run folder, a
            checkpoint); default `output_dir`. None with no `output_dir`:
            any earlier export of this library may be replaced.

    Raises:
        RunFolderError: naming the path and why it cannot be used.

    Example:

    >>> import os, tempfile
    >>> run = tempfile.mkdtemp()
    >>> check_export_path(os.path.join(run, "served"), run)
    >>> check_export_path(os.path.dirname(run), run)
    Traceback (most recent call last):
    ...
    keras_attention.training.run_folder.RunFolderError: `--export` must not hold the --output-dir...
    """
    path = os.path.abspath(path)
    if output_dir is not None:
        _check_apart_from_run(path, output_dir, name)
    check_export_target(path, name, output_dir if source is None else source)
    try:
        check_writable(os.path.dirname(path), name)
    except RunFolderError as error:
        raise RunFolderError(
            f"`{name}` must be a folder path whose parent can be written. "
            f"Received: {name}={path!r} ({error})"
        ) from None


def claim_output_folder(path, writer, name="--output-dir"):
    """Makes `path` the folder of `writer`'s files, refusing a folder of anyone else's.

    For a script that writes a few files of fixed names (a model, a plot)
    rather than a training run: `path` may be absent, an empty folder, or a
    folder this `writer` claimed before (marked by `OUTPUT_MARKER` inside,
    written here), whose files a new run replaces. A folder holding
    anything else (your files, a training run's folder, the files of an
    older version without the mark) is refused before any work, naming a
    few of its entries.

    Args:
        path: the output folder.
        writer: who writes there, e.g. "examples/quickstart.py".
        name: the argument `path` came from, for the messages.

    Raises:
        RunFolderError: naming the folder and what it holds.

    Example:

    >>> import os, tempfile
    >>> folder = os.path.join(tempfile.mkdtemp(), "out")
    >>> claim_output_folder(folder, "quickstart.py")
    >>> _ = open(os.path.join(folder, "model.keras"), "w").write("its own")
    >>> claim_output_folder(folder, "quickstart.py")  # its own folder: a run again is fine
    >>> claim_output_folder(os.path.dirname(folder), "quickstart.py")
    Traceback (most recent call last):
    ...
    keras_attention.training.run_folder.RunFolderError: `--output-dir` must be a new or empty ...
    """
    path = os.path.abspath(path)
    if os.path.exists(path) and not os.path.isdir(path):
        raise RunFolderError(f"`{name}` must be a folder. Received: {name}={path!r}, a file")
    marker = os.path.join(path, OUTPUT_MARKER)
    entries = run_folder_entries(path) if os.path.isdir(path) else []
    claimed_by = (_read_json_object(marker) or {}).get("written_by") if entries else None
    if entries and claimed_by != writer:
        whose = f"the files of {claimed_by}" if claimed_by else _list_entries(entries)
        raise RunFolderError(
            f"`{name}` must be a new or empty folder, or one {writer} wrote before; {path} "
            f"holds {whose}, which it would replace. Choose another {name}."
        )
    check_writable(path, name)
    if claimed_by is None:
        write_file_atomically(marker, json.dumps({"written_by": writer}) + "\n")


def check_export_target(path, name="--export", source=None):
    """Raises `RunFolderError` unless `path` is absent, an empty folder or an export of ours.

    With `source` (the run folder or checkpoint the new export comes from),
    an earlier export of ours must have been written from that same source
    (or by a version that did not record one): one of another run is
    refused, naming both.

    Called before training and again right before an export replaces
    `path`, so that files put there in between are not lost either.

    Example:

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> check_export_target(folder)  # empty: fine
    >>> open(os.path.join(folder, "thesis.tex"), "w").close()
    >>> check_export_target(folder)
    Traceback (most recent call last):
    ...
    keras_attention.training.run_folder.RunFolderError: `--export` must be absent...'thesis.tex'...
    """
    if not os.path.lexists(path):
        return
    if not os.path.isdir(path) or os.path.islink(path):
        kind = "a link" if os.path.islink(path) else "a file"
        raise RunFolderError(
            f"`{name}` must be a folder path. Received: {name}={path!r}, which is {kind}"
        )
    entries = sorted(os.listdir(path))
    if entries and not is_library_export(path):
        raise RunFolderError(
            f"`{name}` must be absent, an empty folder or an earlier export of keras_attention "
            f"(marked by {EXPORT_MARKER}), which it replaces. Received: {name}={path!r}, which "
            f"holds {_list_entries(entries)}. Choose another {name}, or move these files away."
        )
    written_from = export_source(path) if entries else None
    if source is not None and written_from is not None and written_from != source_key(source):
        raise RunFolderError(
            f"`{name}` holds the export of {written_from}, which an export of {source} does not "
            f"replace. Received: {name}={path!r}. Choose another {name}, or remove that folder "
            "first."
        )


def export_source(path):
    """The run folder or checkpoint the export at `path` was written from, or None.

    None for a folder that is no export of this library, or one written by
    a version that did not record its source.

    Example:

    >>> import tempfile
    >>> export_source(tempfile.mkdtemp()) is None
    True
    """
    written_from = (_read_json_object(os.path.join(path, EXPORT_MARKER)) or {}).get("source")
    return written_from if isinstance(written_from, str) else None


def source_key(source):
    """How an export's source is recorded and compared: its resolved absolute path.

    Example:

    >>> import os
    >>> source_key("runs/nmt") == os.path.join(os.path.realpath("."), "runs", "nmt")
    True
    """
    return os.path.realpath(os.path.expanduser(os.fspath(source)))


def is_library_export(path):
    """Whether `path` is a folder holding a whole export written by this library.

    Example:

    >>> import tempfile
    >>> is_library_export(tempfile.mkdtemp())
    False
    """
    return os.path.isfile(os.path.join(path, EXPORT_MARKER))


def _check_apart_from_run(path, output_dir, name):
    export = os.path.realpath(path)
    run = os.path.realpath(output_dir)
    received = f"Received: {name}={path!r}, --output-dir={output_dir!r}"
    if os.path.commonpath([export, run]) == export:
        what = "be" if export == run else "hold"
        raise RunFolderError(
            f"`{name}` must not {what} the --output-dir: the export replaces its folder "
            f"whole, which would delete the run's checkpoints, backup and results. "
            f"{received}. Export to a folder of its own, e.g. {os.path.join(run, 'served')!r}."
        )
    if os.path.commonpath([export, run]) == run:
        entry = os.path.relpath(export, run).split(os.sep)[0]
        if entry in RUN_FOLDERS + RUN_FILES:
            raise RunFolderError(
                f"`{name}` must not be the run's own {entry!r} nor lie inside it: the run "
                f"writes there. {received}. Export to another sub-folder, e.g. "
                f"{os.path.join(run, 'served')!r}."
            )


def prepare_run_folder(output_dir, arguments, overwrite=False, ignored=()):
    """Claims `output_dir` for a run with `arguments`; says whether it resumes one.

    - an absent or empty folder: a new run;
    - a folder whose `run_arguments.json` holds the same arguments: the same
      run, resumed from its backup (returns "resume");
    - the same arguments but `epochs`: the same run, trained on to the new
      count (returns "continue"); fewer epochs than its checkpoints hold
      are refused, naming both counts;
    - a folder of a run with other arguments that never trained (`never_trained`:
      it stopped before its first step, e.g. on a typo in its data set): its
      entries, all written by that run, are removed and the new run starts
      there (returns "restart"), with or without `overwrite`;
    - a folder of another run (other arguments) that trained: `RunFolderError`
      naming the arguments that differ, unless `overwrite`, which empties it first;
    - a folder with files but no `run_arguments.json` (not a run of these
      scripts: a home folder, a user's documents): `RunFolderError` naming
      some of them, with or without `overwrite`.

    The arguments are written to `output_dir/run_arguments.json`.
    `run_folder_state` makes the same decision without writing anything.

    Args:
        output_dir: the run's folder.
        arguments: dict of the run's JSON-serialisable arguments.
        overwrite: empty a folder that holds another run instead of refusing.
        ignored: argument names that do not change the run (e.g. "export").

    Returns:
        "new", "resume", "continue", "restart" or "overwrite".

    Example:

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> prepare_run_folder(folder, {"epochs": 2, "dataset": "builtin"})
    'new'
    >>> prepare_run_folder(folder, {"epochs": 2, "dataset": "builtin"})
    'resume'
    >>> prepare_run_folder(folder, {"epochs": 3, "dataset": "builtin"})
    'continue'
    >>> prepare_run_folder(folder, {"epochs": 3, "dataset": "tsv:a.tsv"})  # never trained
    'restart'
    >>> os.makedirs(os.path.join(folder, "checkpoints"))
    >>> open(os.path.join(folder, "checkpoints", "epoch_001.keras"), "w").close()
    >>> prepare_run_folder(folder, {"epochs": 3, "dataset": "builtin"})
    Traceback (most recent call last):
    ...
    keras_attention.training.run_folder.RunFolderError: ...dataset='tsv:a.tsv' there, dataset=...
    """
    arguments = _recorded(arguments, ignored)
    state = run_folder_state(output_dir, arguments, overwrite, ignored)
    if state in ("overwrite", "restart"):  # "restart": every entry is the run's own
        for name in run_folder_entries(output_dir):
            _remove(os.path.join(output_dir, name))
    places = {key: list(place) for key in _PATH_ARGUMENTS if (place := _place(arguments.get(key)))}
    recorded = {**arguments, RESOLVED_PATHS_KEY: places} if places else arguments
    write_file_atomically(os.path.join(output_dir, ARGUMENTS_FILE), json.dumps(recorded, indent=2))
    return state


def run_folder_state(output_dir, arguments, overwrite=False, ignored=()):
    """What `prepare_run_folder` would do with `output_dir`, deciding without writing.

    Returns:
        "new", "resume", "continue", "restart" or "overwrite".

    Raises:
        RunFolderError: the folder cannot be used (see `prepare_run_folder`).
    """
    arguments = _set(_recorded(arguments, ignored))
    check_writable(output_dir, "--output-dir")
    existing = run_folder_entries(output_dir)
    if not existing:
        return "new"
    previous = _previous_arguments(output_dir, arguments, ignored)
    if previous is None:
        where = os.path.abspath(output_dir)
        where = repr(output_dir) + ("" if where == output_dir else f" ({where})")
        raise RunFolderError(
            f"--output-dir {where} holds files that are not a run of these scripts "
            f"(no readable {ARGUMENTS_FILE}; the arguments are not recorded): "
            f"{_list_entries(existing)}. --overwrite empties only the folder of an earlier "
            "run; choose another --output-dir (or a new sub-folder of this one)."
        )
    if previous == arguments:
        return "resume"
    if _without_epochs(previous) == _without_epochs(arguments) and not overwrite:
        _check_more_epochs(output_dir, previous, arguments)
        return "continue"
    if never_trained(output_dir):
        return "restart"
    if overwrite:
        return "overwrite"
    raise RunFolderError(
        f"--output-dir {output_dir!r} holds {_describe(previous, arguments)}. "
        "Run with the same arguments to resume it, pass --overwrite to replace it, "
        "or choose another --output-dir."
    )


def _spelled_as_now(previous, arguments, places):
    """`previous` with each path argument as `arguments` spells it, where both name one place.

    `folder:pets`, `folder:pets/` and `folder:/data/pets` (run from `/data`)
    are one data set: a run resumed with another spelling is the same run.
    The place of the earlier spelling is the one `places` recorded when the
    run started (a relative path means what it meant then); a folder
    written before places were recorded resolves it from here.
    """
    aligned = dict(previous)
    for key in _PATH_ARGUMENTS:
        before, now = previous.get(key), arguments.get(key)
        if isinstance(before, str) and isinstance(now, str) and before != now:
            place = tuple(places[key]) if key in places else _place(before)
            if place is not None and place == _place(now):
                aligned[key] = now
    return aligned


def _previous_arguments(output_dir, arguments, ignored):
    """The arguments the folder's run recorded, as `arguments` are compared with them.

    Read once from its arguments file: the `ignored` names left out (a
    folder written when `ignored` named fewer flags still recorded them; one
    written before a flag existed lacks it, which reads as the flag left
    unset), and each path spelled as in `arguments` where both lead to the
    same place (`_spelled_as_now`). None when the file cannot be read.

    Args:
        output_dir: the run's folder.
        arguments: the arguments now, `_set(_recorded(...))`.
        ignored: argument names that do not change the run.
    """
    record = _read_json_object(os.path.join(output_dir, ARGUMENTS_FILE))
    if record is None:
        return None
    places = record.get(RESOLVED_PATHS_KEY)
    previous = _set(
        {
            key: value
            for key, value in record.items()
            if key not in set(ignored) and key != RESOLVED_PATHS_KEY
        }
    )
    return _spelled_as_now(previous, arguments, places if isinstance(places, dict) else {})


def _place(value):
    """`(prefix, resolved path)` of a `prefix:PATH` or `PATH` that exists, else None."""
    if not isinstance(value, str):
        return None
    prefix, colon, rest = value.partition(":")
    if not colon or os.sep in prefix:
        prefix, rest = "", value
    path = os.path.realpath(os.path.expanduser(os.path.expandvars(rest)))
    return (prefix, path) if rest and os.path.exists(path) else None


def never_trained(output_dir):
    """Whether `output_dir` holds only what a run writes before its first training step.

    That is its `run_arguments.json`, perhaps its `vocabulary` and empty
    `checkpoints`, `backup` or `logs` folders: no checkpoint, no backup, no
    TensorBoard log (written from the first step on), no `metrics.json`, no
    figure or export, and no file of anyone else. Such a run stopped before
    training (a typo in its data set, a column that is not there): nothing
    of it is worth keeping, and a run with corrected arguments may start
    there in its place.

    Example:

    >>> import os, tempfile
    >>> run = tempfile.mkdtemp()
    >>> open(os.path.join(run, "run_arguments.json"), "w").close()
    >>> os.makedirs(os.path.join(run, "checkpoints"))
    >>> never_trained(run)
    True
    >>> open(os.path.join(run, "checkpoints", "epoch_001.keras"), "w").close()
    >>> never_trained(run)
    False
    """
    entries = run_folder_entries(output_dir)
    if ARGUMENTS_FILE not in entries:
        return False
    for name in entries:
        path = os.path.join(output_dir, name)
        if name in _WRITTEN_BEFORE_TRAINING:
            continue
        if name not in _FILLED_BY_TRAINING or os.path.islink(path) or not os.path.isdir(path):
            return False
        if os.listdir(path):
            return False
    return True


def changed_arguments(output_dir, arguments, ignored=()):
    """ "name='a' there, name='b' now; ...": how `arguments` differ from the folder's run.

    Returns:
        the text, or None when the folder records no readable arguments.

    Example:

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> prepare_run_folder(folder, {"epochs": 2, "dataset": "foldr:x"})
    'new'
    >>> changed_arguments(folder, {"epochs": 2, "dataset": "folder:x"})
    "dataset='foldr:x' there, dataset='folder:x' now"
    """
    arguments = _set(_recorded(arguments, ignored))
    previous = _previous_arguments(output_dir, arguments, ignored)
    return None if previous is None else _changes(previous, arguments)


def trained_epochs(output_dir):
    """The epochs a run folder's newest checkpoint (`checkpoints/epoch_NNN.keras`) holds, or 0.

    Example:

    >>> import os, tempfile
    >>> run = tempfile.mkdtemp()
    >>> os.makedirs(os.path.join(run, "checkpoints"))
    >>> open(os.path.join(run, "checkpoints", "epoch_007.keras"), "w").close()
    >>> trained_epochs(run)
    7
    """
    checkpoints = numbered_entries(os.path.join(output_dir, "checkpoints"), "epoch_", ".keras")
    return checkpoints[0][0] if checkpoints else 0


def _set(arguments):
    """The arguments given a value: a flag left unset (None) is as one not recorded."""
    return {key: value for key, value in arguments.items() if value is not None}


def _without_epochs(arguments):
    return {key: value for key, value in arguments.items() if key != _CONTINUED_BY}


def _check_more_epochs(output_dir, previous, arguments):
    """A run goes on to more epochs, never back to fewer than it trained."""
    asked = arguments.get(_CONTINUED_BY)
    trained = trained_epochs(output_dir)
    if isinstance(asked, int) and asked < trained:
        raise RunFolderError(
            f"--output-dir {output_dir!r} holds this run trained for {trained} epochs "
            f"(epochs={previous.get(_CONTINUED_BY)!r} there, epochs={asked!r} now): a run "
            f"continues to more epochs, never back to fewer. Ask for --epochs {trained} or "
            "more, evaluate one of its checkpoints, or choose another --output-dir."
        )


def remove_run_leftovers(output_dir):
    """Removes what killed writes left in a run folder; call it while holding its lock.

    Temporary checkpoint files (`checkpoints/.partial_*`), backups
    (`backup/.partial_*`), metrics and argument files and a backup being
    removed. With the folder locked no other run writes there, so every
    such leftover is of a process that is gone.

    Returns:
        the paths removed.

    Example:

    >>> import os, tempfile
    >>> run = tempfile.mkdtemp()
    >>> os.makedirs(os.path.join(run, "checkpoints"))
    >>> open(os.path.join(run, "checkpoints", ".partial_77_epoch_002.keras"), "w").close()
    >>> [os.path.basename(path) for path in remove_run_leftovers(run)]
    ['.partial_77_epoch_002.keras']
    """
    removed = []
    places = [
        (output_dir, _LEFTOVER_PREFIXES),
        (os.path.join(output_dir, "checkpoints"), (".partial_",)),
        (os.path.join(output_dir, "backup"), (".partial_",)),
    ]
    for folder, prefixes in places:
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if name.startswith(prefixes):
                path = os.path.join(folder, name)
                _remove(path)
                removed.append(path)
    return removed


def _recorded(arguments, ignored):
    arguments = {key: value for key, value in sorted(arguments.items()) if key not in set(ignored)}
    return json.loads(json.dumps(arguments, default=str))  # tuples -> lists, as stored


def run_folder_entries(output_dir):
    """The folder's entries, sorted, without the lock file and the write probes."""
    return sorted(
        name
        for name in os.listdir(output_dir)
        if name != LOCK_FILE and not name.startswith(_PROBE_PREFIX)
    )


def _list_entries(entries):
    shown = ", ".join(repr(name) for name in entries[:_LISTED_ENTRIES])
    more = len(entries) - _LISTED_ENTRIES
    return shown + (f" and {more} more" if more > 0 else "")


def recorded_arguments(output_dir):
    """The arguments a run folder's `run_arguments.json` records, or None where none is read.

    Without where its paths led (`RESOLVED_PATHS_KEY`), which is no argument.

    Example:

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> recorded_arguments(folder) is None
    True
    >>> prepare_run_folder(folder, {"epochs": 2, "dataset": "builtin"})
    'new'
    >>> recorded_arguments(folder)
    {'dataset': 'builtin', 'epochs': 2}
    """
    record = _read_json_object(os.path.join(output_dir, ARGUMENTS_FILE))
    if record is None:
        return None
    return {key: value for key, value in record.items() if key != RESOLVED_PATHS_KEY}


def _read_json_object(path):
    """The JSON object (a dict) in the file at `path`, or None where there is none to read."""
    try:
        with open(path) as file:
            value = json.load(file)
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _describe(previous, arguments):
    return "a run with other arguments: " + _changes(previous, arguments)


def _changes(previous, arguments):
    names = sorted(set(previous) | set(arguments))
    return "; ".join(
        f"{name}={previous.get(name)!r} there, {name}={arguments.get(name)!r} now"
        for name in names
        if previous.get(name) != arguments.get(name)
    )


def _remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    else:
        os.remove(path)
