"""Writes that a crash, a kill or a power cut leave whole or absent, and their leftovers.

A file or folder is written under a hidden temporary name beside its target,
flushed to the disk (`fsync_tree`), then renamed into place, and the folder
holding it is flushed too, so that after a crash the target holds either the
old or the new content, never a mix or nothing. Temporary names carry the
writer's process id (`temporary_name`), so that a later run can tell the
leftovers of a killed writer (`left_by_a_dead_process`) from the work in
progress of a live one. Folders are made with `os.mkdir`, which honours the
user's umask (`tempfile.mkdtemp` makes them readable by their owner only).

This module imports nothing from the package, so every level may use it.

Example:

>>> import os, tempfile
>>> folder = tempfile.mkdtemp()
>>> path = os.path.join(folder, "metrics.json")
>>> write_file_atomically(path, '{"bleu": 31.5}')
>>> open(path).read(), os.listdir(folder)
('{"bleu": 31.5}', ['metrics.json'])
"""

import ctypes
import errno
import os
import secrets

# renameat2(2) flag: swap two existing paths in one step (Linux 3.15+, glibc 2.28+).
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
# Errors that mean "this system or file system cannot exchange": fall back.
_NO_EXCHANGE = (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP)


def temporary_name(prefix):
    """A file or folder name `prefix<pid>_<random>` that tells which process wrote it.

    Example:

    >>> import os
    >>> name = temporary_name(".served.partial_")
    >>> writer_pid(name, ".served.partial_") == os.getpid()
    True
    """
    return f"{prefix}{os.getpid()}_{secrets.token_hex(4)}"


def writer_pid(name, prefix):
    """The process id in a name made by `temporary_name(prefix)`, or None.

    Example:

    >>> writer_pid(".partial_4021_epoch_003.keras", ".partial_")
    4021
    >>> writer_pid(".partial_k2x9q", ".partial_") is None  # no process id in it
    True
    """
    if not name.startswith(prefix):
        return None
    digits = name[len(prefix) :].split("_", 1)[0]
    return int(digits) if digits.isdigit() else None


def process_is_alive(pid):
    """Whether a process with id `pid` runs on this machine (this one included).

    Example:

    >>> import os
    >>> process_is_alive(os.getpid())
    True
    """
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)  # signal 0: only checks that the process exists
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, under another user
    except OSError:
        return True  # cannot tell: keep what it may be writing
    return True


def left_by_a_dead_process(name, prefix):
    """Whether `name`, made by `temporary_name(prefix)`, is the leftover of a process now gone.

    A name without a process id (or of a live process, this one included) is
    not: it may be another writer's work in progress.

    Example:

    >>> import os
    >>> left_by_a_dead_process(temporary_name(".partial_"), ".partial_")  # this process
    False
    """
    pid = writer_pid(name, prefix)
    return pid is not None and not process_is_alive(pid)


def numbered_entries(folder, prefix, suffix=""):
    """`(number, path)` of the entries named `<prefix><digits><suffix>` in `folder`, highest first.

    Writers publish numbered files whole under such names (per-epoch
    checkpoints, backups); hidden temporary names never match.

    Example:

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> for name in ("epoch_002.keras", "epoch_010.keras", ".partial_1_epoch_011.keras"):
    ...     open(os.path.join(folder, name), "w").close()
    >>> [number for number, _ in numbered_entries(folder, "epoch_", ".keras")]
    [10, 2]
    """
    if folder is None or not os.path.isdir(folder):
        return []
    found = []
    for name in os.listdir(folder):
        digits = name[len(prefix) : len(name) - len(suffix)]
        if name.startswith(prefix) and name.endswith(suffix) and digits.isdigit():
            found.append((int(digits), os.path.join(folder, name)))
    return sorted(found, reverse=True)


def make_folder(parent, prefix):
    """Creates a new folder `parent/<temporary_name(prefix)>` with the umask's permissions.

    Returns:
        its path.

    Example:

    >>> import os, tempfile
    >>> path = make_folder(tempfile.mkdtemp(), ".partial_")
    >>> os.path.isdir(path), os.listdir(path)
    (True, [])
    """
    while True:
        path = os.path.join(parent, temporary_name(prefix))
        try:
            os.mkdir(path)  # mode 0o777 minus the umask, as any folder the user makes
            return path
        except FileExistsError:
            continue


def fsync_file(path):
    """Flushes a file's content to the disk."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def fsync_directory(path):
    """Flushes a folder's entries (names created, renamed or removed) to the disk.

    Where a folder cannot be opened or flushed (Windows), this does nothing.
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError as error:
        if error.errno not in (errno.EINVAL, errno.EBADF):
            raise
    finally:
        os.close(descriptor)


def fsync_tree(path):
    """Flushes a file, or a folder with every file and folder inside it, to the disk.

    Call it before renaming what was written into place: a rename is
    atomic, but without the flush a crash right after it can leave the new
    name on files whose content never reached the disk.
    """
    if not os.path.isdir(path):
        fsync_file(path)
        return
    for folder, _, files in os.walk(path, topdown=False):
        for name in files:
            file = os.path.join(folder, name)
            if not os.path.islink(file):
                fsync_file(file)
        fsync_directory(folder)


def write_file_atomically(path, text):
    """Writes `text` to `path` (UTF-8) through a flushed temporary file renamed onto it.

    A kill or a full disk mid-write leaves the previous file whole; the new
    file has the permissions of the umask, as `open(path, "w")` gives.
    """
    folder, name = os.path.split(os.path.abspath(path))
    partial = os.path.join(folder, temporary_name(f".{name}.partial_"))
    try:
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(partial, path)
    except BaseException:
        if os.path.exists(partial):
            os.remove(partial)
        raise
    fsync_directory(folder)


def _load_renameat2():
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        function = libc.renameat2
    except (OSError, AttributeError, TypeError):  # not Linux, or glibc older than 2.28
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p]
    function.argtypes += [ctypes.c_uint]
    function.restype = ctypes.c_int
    return function


_RENAMEAT2 = _load_renameat2()


def exchange_paths(first, second):
    """Swaps two existing paths in one atomic step, where the system can.

    Uses Linux' `renameat2(RENAME_EXCHANGE)`: at every moment each path
    names a whole folder (or file), the old or the new one.

    Returns:
        True when the two were swapped; False when this system or file
        system cannot swap them (nothing was changed then).

    Example:

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> a, b = os.path.join(folder, "a"), os.path.join(folder, "b")
    >>> open(a, "w").write("A"), open(b, "w").write("B")
    (1, 1)
    >>> if exchange_paths(a, b):  # on Linux
    ...     assert (open(a).read(), open(b).read()) == ("B", "A")
    """
    if _RENAMEAT2 is None:
        return False
    result = _RENAMEAT2(
        _AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE
    )
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in _NO_EXCHANGE:
        return False
    raise OSError(code, f"{os.strerror(code)}: cannot exchange {first!r} and {second!r}")
