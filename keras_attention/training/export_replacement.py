"""Putting a new export in place of the old one, so that the path always holds a whole one.

`replace_folder` writes the export into a hidden folder beside its target
(`.NAME.partial_<pid>_<random>`), marks it as this library's
(`run_folder.EXPORT_MARKER`, written last), flushes it to the disk, then
swaps it with the old folder in one atomic step (Linux' `renameat2`
exchange) and deletes the old one. Where the system cannot swap, the old
folder is renamed aside (`.NAME.old_<pid>_<random>`) and the new one renamed
into place. `recover_export_leftovers` clears what a killed export left
beside the target, and puts an old export back when the kill fell between
those two renames. Only a folder that is absent, empty or an earlier export
of this library is ever replaced (`run_folder.check_export_target`).

Pure Python (no TensorFlow).
"""

import datetime
import json
import os
import shutil

from keras_attention.durable_files import exchange_paths
from keras_attention.durable_files import fsync_directory
from keras_attention.durable_files import fsync_tree
from keras_attention.durable_files import left_by_a_dead_process
from keras_attention.durable_files import make_folder
from keras_attention.durable_files import temporary_name
from keras_attention.training.run_folder import EXPORT_MARKER
from keras_attention.training.run_folder import check_export_target
from keras_attention.training.run_folder import is_library_export
from keras_attention.training.run_folder import source_key


def replace_folder(path, write, name="--export", source=None):
    """Calls `write(temporary_path)`, then puts the result at `path` in place of what was there.

    Nothing is left from an earlier folder at `path` (no stale files beside
    the new ones), a failure in `write` leaves the earlier folder as it was,
    and at every moment `path` holds the old or the new folder, whole (on
    Linux; elsewhere it is missing for the instant between two renames).
    The new folder has the permissions of the user's umask.

    Args:
        path: the target folder: absent, empty, or an earlier export of
            this library (else `RunFolderError`, and nothing is written).
        write: a function that writes the export into the folder it gets.
        name: the argument `path` came from, for messages.
        source: the run folder or checkpoint the export is written from,
            recorded in its mark; an earlier export of another source is
            refused (`check_export_target`). None: not recorded, not checked.

    Returns:
        `path`.

    Example:

    >>> import os, tempfile
    >>> target = os.path.join(tempfile.mkdtemp(), "served")
    >>> _ = replace_folder(target, lambda tmp: open(os.path.join(tmp, "a"), "w").close())
    >>> _ = replace_folder(target, lambda tmp: open(os.path.join(tmp, "b"), "w").close())
    >>> sorted(os.listdir(target))
    ['b', 'keras_attention_export.json']
    """
    path = os.path.abspath(path)
    parent, base = os.path.split(path)
    check_export_target(path, name, source)
    os.makedirs(parent, exist_ok=True)
    staging = make_folder(parent, f".{base}.partial_")
    try:
        write(staging)
        _write_marker(staging, source)
        fsync_tree(staging)  # whole on the disk before any rename publishes it
        check_export_target(
            path, name, source
        )  # still ours to replace, after the minutes of writing
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if not os.path.lexists(path):
        os.rename(staging, path)
        fsync_directory(parent)
        return path
    if exchange_paths(staging, path):
        fsync_directory(parent)
        shutil.rmtree(staging)  # which now holds the old export
        return path
    old = os.path.join(parent, temporary_name(f".{base}.old_"))
    os.rename(path, old)
    os.rename(staging, path)
    fsync_directory(parent)
    shutil.rmtree(old)
    return path


def recover_export_leftovers(path, any_writer=False):
    """Clears what killed exports to `path` left beside it; puts an old export back if needed.

    Only leftovers of processes that are gone are touched (a live export's
    folders are its work in progress), or every leftover when `any_writer`
    (the caller holds the lock of the run folder `path` lies in). When
    `path` is missing and a left-aside old export is there, it is renamed
    back to `path`.

    Args:
        path: the export folder.
        any_writer: treat the leftovers of every process as gone.

    Returns:
        (paths removed, path restored or None).

    Example:

    >>> import os, tempfile
    >>> parent = tempfile.mkdtemp()
    >>> os.mkdir(os.path.join(parent, ".served.partial_4021_ab12cd34"))
    >>> removed, restored = recover_export_leftovers(os.path.join(parent, "served"), True)
    >>> [os.path.basename(path) for path in removed], restored
    (['.served.partial_4021_ab12cd34'], None)
    """
    path = os.path.abspath(path)
    parent, base = os.path.split(path)
    if not os.path.isdir(parent):
        return [], None
    leftovers = {}
    for prefix in (f".{base}.old_", f".{base}.partial_"):
        leftovers[prefix] = sorted(
            os.path.join(parent, entry)
            for entry in os.listdir(parent)
            if entry.startswith(prefix) and (any_writer or left_by_a_dead_process(entry, prefix))
        )
    old_exports = [folder for folder in leftovers[f".{base}.old_"] if is_library_export(folder)]
    restored = None
    if old_exports and not os.path.lexists(path):
        newest = max(old_exports, key=os.path.getmtime)
        os.rename(newest, path)
        fsync_directory(parent)
        restored = path
    removed = []
    for folder in leftovers[f".{base}.old_"] + leftovers[f".{base}.partial_"]:
        if os.path.isdir(folder) and not os.path.islink(folder):
            shutil.rmtree(folder)
        elif os.path.lexists(folder):
            os.remove(folder)
        else:
            continue
        removed.append(folder)
    return removed, restored


def _write_marker(folder, source):
    record = {
        "written_by": "keras_attention",
        "written": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
    }
    if source is not None:
        record["source"] = source_key(source)
    with open(os.path.join(folder, EXPORT_MARKER), "w", encoding="utf-8") as file:
        json.dump(record, file)
