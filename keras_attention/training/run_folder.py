"""A training run's folder: checked before training, resumed or refused when reused.

Pure Python (no TensorFlow), so a script can check its paths right after
parsing its arguments, before it spends time importing or training.
"""

import json
import os
import shutil
import tempfile

ARGUMENTS_FILE = "run_arguments.json"


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
        with tempfile.NamedTemporaryFile(dir=path, prefix=".write_probe_"):
            pass
    except OSError as error:
        raise RunFolderError(
            f"`{name}` must be a folder that can be written. Received: {name}={path!r} "
            f"({error.strerror or error})"
        ) from None


def check_export_path(path, name="--export"):
    """Checks before training that a SavedModel can later be written to `path`.

    The export itself goes to a sibling folder that replaces `path` when
    complete (`replace_folder`), so what is checked is the parent folder.
    """
    path = os.path.abspath(path)
    if os.path.exists(path) and not os.path.isdir(path):
        raise RunFolderError(
            f"`{name}` must be a folder path. Received: {name}={path!r}, which is a file"
        )
    try:
        check_writable(os.path.dirname(path), name)
    except RunFolderError as error:
        raise RunFolderError(
            f"`{name}` must be a folder path whose parent can be written. "
            f"Received: {name}={path!r} ({error})"
        ) from None


def replace_folder(path, write):
    """Calls `write(temporary_path)`, then puts the result at `path` in place of what was there.

    Nothing is left from an earlier folder at `path` (no stale files beside
    the new ones), and a failure in `write` leaves the earlier folder as it was.

    Example:

    >>> import os, tempfile
    >>> target = os.path.join(tempfile.mkdtemp(), "served")
    >>> replace_folder(target, lambda tmp: open(os.path.join(tmp, "a"), "w").close())
    >>> replace_folder(target, lambda tmp: open(os.path.join(tmp, "b"), "w").close())
    >>> os.listdir(target)
    ['b']
    """
    path = os.path.abspath(path)
    parent, name = os.path.split(path)
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=f".{name}.partial_", dir=parent)
    try:
        write(staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    old = None
    if os.path.exists(path):
        old = tempfile.mkdtemp(prefix=f".{name}.old_", dir=parent)
        os.rmdir(old)
        os.rename(path, old)
    os.rename(staging, path)
    if old:
        shutil.rmtree(old, ignore_errors=True)


def prepare_run_folder(output_dir, arguments, overwrite=False, ignored=()):
    """Claims `output_dir` for a run with `arguments`; says whether it resumes one.

    - an absent or empty folder: a new run;
    - a folder whose `run_arguments.json` holds the same arguments: the same
      run, resumed from its backup (returns "resume");
    - a folder of another run (other arguments, or files without
      `run_arguments.json`): `RunFolderError` naming the arguments that
      differ, unless `overwrite`, which empties the folder first.

    The arguments are written to `output_dir/run_arguments.json`.

    Args:
        output_dir: the run's folder.
        arguments: dict of the run's JSON-serialisable arguments.
        overwrite: empty a folder that holds another run instead of refusing.
        ignored: argument names that do not change the run (e.g. "export").

    Returns:
        "new", "resume" or "overwrite".

    Example:

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> prepare_run_folder(folder, {"epochs": 2})
    'new'
    >>> prepare_run_folder(folder, {"epochs": 2})
    'resume'
    >>> prepare_run_folder(folder, {"epochs": 3})
    Traceback (most recent call last):
    ...
    keras_attention.training.run_folder.RunFolderError: ... epochs=2 there, epochs=3 now...
    """
    arguments = {key: value for key, value in sorted(arguments.items()) if key not in set(ignored)}
    arguments = json.loads(json.dumps(arguments, default=str))  # tuples -> lists, as stored
    check_writable(output_dir, "--output-dir")
    record = os.path.join(output_dir, ARGUMENTS_FILE)
    existing = [name for name in os.listdir(output_dir) if not name.startswith(".write_probe_")]
    state = "new"
    if existing:
        previous = _read_arguments(record)
        if previous == arguments:
            state = "resume"
        elif overwrite:
            for name in existing:
                _remove(os.path.join(output_dir, name))
            state = "overwrite"
        else:
            raise RunFolderError(
                f"--output-dir {output_dir!r} holds {_describe(previous, arguments)}. "
                "Run with the same arguments to resume it, pass --overwrite to replace it, "
                "or choose another --output-dir."
            )
    with open(record, "w") as file:
        json.dump(arguments, file, indent=2)
    return state


def _read_arguments(path):
    try:
        with open(path) as file:
            return json.load(file)
    except (OSError, ValueError):
        return None


def _describe(previous, arguments):
    if previous is None:
        return "files of an earlier run whose arguments are not recorded"
    names = sorted(set(previous) | set(arguments))
    changes = [
        f"{name}={previous.get(name)!r} there, {name}={arguments.get(name)!r} now"
        for name in names
        if previous.get(name) != arguments.get(name)
    ]
    return "a run with other arguments: " + "; ".join(changes)


def _remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    else:
        os.remove(path)
