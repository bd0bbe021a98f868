"""One run at a time in a run folder: an advisory lock held for the whole run.

Two processes training into the same `--output-dir` would each resume the
other's backup and delete its files in progress. The first run holds an
exclusive `fcntl.flock` on `OUTPUT_DIR/.run.lock`, in which it records who it
is (process id, host, start time, command line); a second run is refused at
once with those details. The operating system releases the lock when the
process ends, however it ends (a `kill -9` included), so a lock is never
left stale. Where `fcntl` is missing (Windows) runs are not locked.

Pure Python (no TensorFlow).

Example:

>>> import tempfile
>>> folder = tempfile.mkdtemp()
>>> lock = hold_run_lock(folder)
>>> hold_run_lock(folder) is lock  # this process holds it already
True
>>> lock.holder()["pid"] == os.getpid()
True
>>> release_run_lock(folder)
"""

import datetime
import json
import os
import shlex
import socket
import sys

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None

from keras_attention.training.run_folder import LOCK_FILE
from keras_attention.training.run_folder import RunFolderError

# Locks this process holds, by the real path of their folder: a script's
# `main` called again in the same process (tests, notebooks) keeps its lock.
_HELD = {}


class RunFolderInUseError(RunFolderError):
    """Another process is running in this run folder."""


class RunLock:
    """The exclusive lock on a run folder; see `hold_run_lock`."""

    def __init__(self, folder):
        self.folder = os.path.realpath(folder)
        self.path = os.path.join(self.folder, LOCK_FILE)
        self._descriptor = None

    def acquire(self):
        """Takes the lock without waiting; `RunFolderInUseError` names its holder if taken."""
        descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            if fcntl is not None:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(descriptor)
            raise RunFolderInUseError(self._in_use_message()) from None
        except BaseException:
            os.close(descriptor)
            raise
        self._descriptor = descriptor
        record = json.dumps(
            {
                "pid": os.getpid(),
                "host": socket.gethostname(),
                "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
                "command": shlex.join([sys.executable, *sys.argv]),
            }
        )
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, record.encode("utf-8"), 0)
        os.fsync(descriptor)
        return self

    def release(self):
        """Gives the lock up (the lock file stays: removing it would race with a new run)."""
        if self._descriptor is not None:
            os.close(self._descriptor)  # closing the descriptor releases the flock
            self._descriptor = None

    def holder(self):
        """What the lock file records of the process that holds (or last held) the lock."""
        try:
            with open(self.path, encoding="utf-8") as file:
                return json.load(file)
        except (OSError, ValueError):
            return {}

    def _in_use_message(self):
        holder = self.holder()
        if holder:
            who = (
                f"process {holder.get('pid')} on host {holder.get('host')!r}, "
                f"started {holder.get('started')}, command: {holder.get('command')}"
            )
        else:
            who = "a process that has not yet recorded itself"
        return (
            f"--output-dir {self.folder!r} is in use by another run: {who} "
            f"(lock file {self.path}). Wait for that run to end, stop it, or choose "
            "another --output-dir."
        )


def hold_run_lock(folder):
    """Locks the run folder `folder` for this process, until `release_run_lock` or exit.

    Args:
        folder: an existing run folder.

    Returns:
        the `RunLock`; the same one when this process holds it already.

    Raises:
        RunFolderInUseError: another process holds it; the message names
            that process (pid, host, start time, command line).
    """
    key = os.path.realpath(folder)
    if key not in _HELD:
        _HELD[key] = RunLock(key).acquire()
    return _HELD[key]


def release_run_lock(folder):
    """Releases this process's lock on `folder`, if it holds one."""
    lock = _HELD.pop(os.path.realpath(folder), None)
    if lock is not None:
        lock.release()


def holds_run_lock(folder):
    """Whether this process holds the lock of `folder`."""
    return os.path.realpath(folder) in _HELD
