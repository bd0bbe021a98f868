"""Backups of the training state that a crash or a full disk cannot corrupt."""

import json
import math
import os
import re
import shutil
import time
import warnings
from typing import NamedTuple

import keras

from keras_attention.durable_files import fsync_directory
from keras_attention.durable_files import fsync_tree
from keras_attention.durable_files import left_by_a_dead_process
from keras_attention.durable_files import make_folder
from keras_attention.durable_files import numbered_entries
from keras_attention.durable_files import write_file_atomically

_PREFIX = "epoch_"
# `epoch_000003`: after 3 epochs; `epoch_000003_step_000001200`: 1200 steps into the 4th.
_BACKUP_NAME = re.compile(r"epoch_(\d+)(?:_step_(\d+))?")
_PARTIAL_PREFIX = ".partial_"
_WEIGHTS = "state.weights.h5"
_METADATA = "training_metadata.json"
# Written when `fit` ends normally: a rerun restores the last backup and trains no more.
_FINISHED = "training_finished.json"


class BackupStatus(NamedTuple):
    """Where the newest backup of a folder stands, as its metadata records it.

    Attributes:
        epoch: epochs trained to their end, or None without a backup.
        step: optimizer steps of the next epoch trained (0 at an epoch's end).
        steps_per_epoch: steps of an epoch of the run that wrote it, or None.
        iterations: the optimizer's step count when it was written, or None
            (a backup that does not record it).
        finished: whether `fit` had ended normally there.
    """

    epoch: int | None = None
    step: int = 0
    steps_per_epoch: int | None = None
    iterations: int | None = None
    finished: bool = False


class SafeBackupAndRestore(keras.callbacks.Callback):
    """`keras.callbacks.BackupAndRestore` that never leaves a broken backup in the way.

    After every epoch, and every `every_steps` optimizer steps or
    `every_seconds` of training within one, the training state (weights,
    optimizer, epoch and step within it) is written to a fresh temporary
    folder inside `backup_dir`, flushed to the disk, then renamed in one
    atomic step to `epoch_NNNNNN` (after NNNNNN epochs) or
    `epoch_NNNNNN_step_MMMMMMMMM` (MMMMMMMMM steps into the next one); only
    then is the previous backup deleted. A run killed mid-write (or a disk
    that fills up) leaves at worst a temporary folder, which the next run
    removes once its writer is gone, and the previous good backup. At the
    start of training the newest backup that loads is restored; one that
    does not load (truncated weights, unreadable metadata) is skipped with
    a warning that names it. `resume_at` then says where training goes on.

    `model.fit` cannot start an epoch in its middle: used alone, a backup
    taken mid-epoch restarts that epoch from its first step (the
    optimizer's step count goes on from the backup's).
    `keras_attention.training.resumable_fit.fit_resuming`, which the
    training scripts use, trains only the rest of that epoch.

    When `fit` ends normally the backup is either removed
    (`delete_at_end=True`) or kept and marked finished: a `fit` started
    again with the same `epochs` then restores it and trains no further
    epoch (also when the first one stopped early), so a run that failed
    after training (evaluating, exporting) goes on from the trained model.

    With `checkpoint_dir`, a `fit` that finds no backup it can read (the
    run finished and its backup was removed, or the backup is lost)
    restores the newest whole `epoch_NNN.keras` there, as
    `AtomicModelCheckpoint` writes them: its weights, optimizer state and
    epoch. `fit` then goes on from epoch NNN: a run asked for more epochs
    continues, and one that had trained all of them trains no epoch again.

    Args:
        backup_dir: folder of the backups; used by nothing else.
        delete_at_end: remove `backup_dir` when `fit` finishes; with False
            the caller removes it once the run's results are written.
        checkpoint_dir: folder of per-epoch `epoch_NNN.keras` checkpoints
            to restore from when no backup can be read, or None.
        every_steps: also back up after this many optimizer steps since
            the last backup, or None.
        every_seconds: also back up after this many seconds of training
            since the last backup (or since training started), or None.
        clock: the function of no argument that gives the time in seconds
            for `every_seconds` (default `time.monotonic`).

    Attributes:
        resume_at: `(epoch, step)` where the last `fit` started: the
            0-based epoch and the optimizer steps of it already trained.
        train_seconds_before: seconds the run trained before this `fit`, as
            the backup it restored records them (each backup records the
            seconds up to it); set it for a run that resumes from elsewhere
            (a checkpoint, with the seconds its `metrics.json` recorded).

    Example:

    >>> import tempfile, numpy as np, keras
    >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    >>> model.compile("sgd", "mse")
    >>> folder = tempfile.mkdtemp()
    >>> backup = SafeBackupAndRestore(folder, delete_at_end=False, every_steps=3)
    >>> history = model.fit(np.ones((8, 2)), np.ones(8), batch_size=2, epochs=2, verbose=0,
    ...                     callbacks=[backup])
    >>> len(history.history["loss"]), backup_status(folder).epoch
    (2, 2)
    """

    writes_backups = True  # False in a subclass that only restores

    def __init__(
        self,
        backup_dir,
        delete_at_end=True,
        checkpoint_dir=None,
        every_steps=None,
        every_seconds=None,
        clock=time.monotonic,
    ):
        super().__init__()
        if not backup_dir:
            raise ValueError(
                f"`backup_dir` must be a folder path. Received: backup_dir={backup_dir!r}"
            )
        self.backup_dir = os.fspath(backup_dir)
        self.delete_at_end = delete_at_end
        self.checkpoint_dir = None if checkpoint_dir is None else os.fspath(checkpoint_dir)
        self.set_frequency(every_steps, every_seconds)
        self.clock = clock
        self.restored_from = None
        self.restored_epoch = None
        self.restored_finished = False
        self.resume_at = (0, 0)
        self._epoch = 0
        self._first_batch = 0
        self._steps_since_backup = 0
        self._last_backup_time = None
        self.train_seconds_before = 0.0
        self._train_begin = None

    def set_frequency(self, every_steps=None, every_seconds=None):
        """Backs up every `every_steps` steps and/or `every_seconds` seconds besides epoch ends.

        Example:

        >>> import tempfile
        >>> backup = SafeBackupAndRestore(tempfile.mkdtemp())
        >>> backup.set_frequency(every_seconds=1800)
        >>> backup.every_steps, backup.every_seconds
        (None, 1800)
        """
        if every_steps is not None and (
            isinstance(every_steps, bool) or not isinstance(every_steps, int) or every_steps < 1
        ):
            raise ValueError(
                "`every_steps` must be a positive integer or None. "
                f"Received: every_steps={every_steps!r}"
            )
        if every_seconds is not None and (
            isinstance(every_seconds, bool)
            or not isinstance(every_seconds, (int, float))
            or not 0 < every_seconds < math.inf
        ):
            raise ValueError(
                "`every_seconds` must be a positive number or None. "
                f"Received: every_seconds={every_seconds!r}"
            )
        self.every_steps = every_steps
        self.every_seconds = every_seconds

    def backups(self):
        """Complete backups, newest first, as folder paths."""
        return [path for *_, path in _backup_entries(self.backup_dir)]

    def on_train_begin(self, logs=None):
        self.restored_from, self.restored_epoch, self.restored_finished = None, None, False
        self.resume_at = (0, 0)
        if self.writes_backups:
            self._remove_partial_writes()
        self._restore_newest()
        finished = os.path.join(self.backup_dir, _FINISHED)
        if self.writes_backups and not self.restored_finished and os.path.exists(finished):
            os.remove(finished)  # this fit trains on: its end is not that one
        self._steps_since_backup, self._last_backup_time = 0, self.clock()
        self._train_begin = time.monotonic()

    def _restore_newest(self):
        failures = []
        found = _first_that_loads(self.backups(), self._restore, "training backup", failures)
        if found is None:
            self._restore_newest_checkpoint(failures)
            return
        self.restored_from, (epoch, step) = found
        self.restored_epoch = epoch
        epochs = self.params.get("epochs")
        self.restored_finished = step == 0 and _read_finished(self.backup_dir) == (epoch, epochs)
        if self.restored_finished:  # the same fit ended there (maybe early): skip to its end
            epoch = max(epoch, epochs or epoch)
        self.resume_at = (epoch, step)
        self.model._initial_epoch = epoch  # a partly trained epoch starts again in plain `fit`

    def _restore_newest_checkpoint(self, failures):
        """No backup could be read: go on from the newest checkpoint that loads.

        When backups or checkpoints exist and none restores, `fit` stops
        (`TrainingStateNotRestored`) instead of training anew over them.
        """
        checkpoints = numbered_entries(self.checkpoint_dir, _PREFIX, ".keras")
        epoch_of = {path: epoch for epoch, path in checkpoints}

        def restore(path):
            self._load_state(path)
            return epoch_of[path]

        paths = [path for _, path in checkpoints]
        found = _first_that_loads(paths, restore, "checkpoint", failures)
        if found is not None:
            self.restored_from, self.restored_epoch = found
            self.resume_at = (self.restored_epoch, 0)
            # Past `epochs` (a run asked for fewer now): fit trains nothing.
            self.model._initial_epoch = self.restored_epoch
        elif failures:
            raise TrainingStateNotRestored(failures)

    def _restore(self, folder):
        record = read_backup_metadata(folder)
        epoch, step = int(record["epoch"]), int(record.get("step", 0))
        self._load_state(backup_weights(folder))
        seconds = record.get("train_seconds")
        if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and seconds >= 0:
            self.train_seconds_before = float(seconds)  # a backup older than this key: as set
        return epoch, step

    def _load_state(self, path):
        """Loads weights and optimizer state from a `.weights.h5` or `.keras` file."""
        if self.model.optimizer is not None and not self.model.optimizer.built:
            # Optimizer variables must exist before their values load.
            self.model.optimizer.build(self.model.trainable_variables)
        self.model.load_weights(path)

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def on_train_batch_begin(self, batch, logs=None):
        self._first_batch = batch

    def on_train_batch_end(self, batch, logs=None):
        # `batch` is the last step of the call: several with `steps_per_execution`.
        self._steps_since_backup += batch - self._first_batch + 1
        step, steps = batch + 1, self.params.get("steps")
        if not self.writes_backups or (steps is not None and step >= steps):
            return  # the epoch's own backup follows
        due_by_steps = self.every_steps is not None and self._steps_since_backup >= self.every_steps
        due_by_time = (
            self.every_seconds is not None
            and self.clock() - self._last_backup_time >= self.every_seconds
        )
        if due_by_steps or due_by_time:
            self._write_backup(self._epoch, step)

    def on_epoch_end(self, epoch, logs=None):
        if self.writes_backups:
            self._write_backup(epoch + 1, 0)

    def _write_backup(self, epoch, step):
        """Publishes the state after `epoch` epochs and `step` steps of the next, whole or not."""
        os.makedirs(self.backup_dir, exist_ok=True)
        previous = self.backups()
        partial = make_folder(self.backup_dir, _PARTIAL_PREFIX)
        record = {
            "epoch": epoch,
            "step": step,
            "steps_per_epoch": self.params.get("steps"),
            "iterations": _optimizer_steps(self.model),
            "train_seconds": round(self.train_seconds(), 1),
        }
        try:
            self.model.save_weights(os.path.join(partial, _WEIGHTS))
            with open(os.path.join(partial, _METADATA), "w") as file:
                json.dump(record, file)
            fsync_tree(partial)  # on the disk before the rename that publishes it
            final = os.path.join(self.backup_dir, _backup_name(epoch, step))
            if os.path.exists(final):
                # A backup of this very point is already whole (a run restarted
                # its epoch and came back here): keep it rather than delete the
                # one good copy before the new one is in place.
                shutil.rmtree(partial, ignore_errors=True)
            else:
                os.rename(partial, final)  # atomic: the backup is whole or absent
                fsync_directory(self.backup_dir)
        except BaseException:
            shutil.rmtree(partial, ignore_errors=True)
            raise
        for folder in previous:
            if folder != final:
                shutil.rmtree(folder, ignore_errors=True)
        self._steps_since_backup, self._last_backup_time = 0, self.clock()

    def train_seconds(self):
        """Seconds the run has trained: `train_seconds_before` and those of this `fit`."""
        elapsed = 0.0 if self._train_begin is None else time.monotonic() - self._train_begin
        return self.train_seconds_before + elapsed

    def on_train_end(self, logs=None):
        if not self.writes_backups:
            return
        if self.delete_at_end:
            shutil.rmtree(self.backup_dir, ignore_errors=True)
            return
        entries = _backup_entries(self.backup_dir)
        if entries and entries[0][1] == 0:  # an epoch's end
            record = {"epoch": entries[0][0], "epochs": self.params.get("epochs")}
            write_file_atomically(os.path.join(self.backup_dir, _FINISHED), json.dumps(record))

    def _remove_partial_writes(self):
        """Removes the temporary folders of writers that are gone (never a live one's)."""
        if os.path.isdir(self.backup_dir):
            for name in os.listdir(self.backup_dir):
                if left_by_a_dead_process(name, _PARTIAL_PREFIX):
                    shutil.rmtree(os.path.join(self.backup_dir, name), ignore_errors=True)


def backup_status(backup_dir):
    """What a run would resume from: a `BackupStatus` of the newest backup whose metadata reads.

    Reads only the small metadata files: the weights are checked when they
    are restored (an unreadable backup is skipped then, with a warning).

    Example:

    >>> import tempfile
    >>> status = backup_status(tempfile.mkdtemp())
    >>> status.epoch, status.step, status.finished
    (None, 0, False)
    """
    for epoch, step, folder in _backup_entries(backup_dir):
        try:
            record = read_backup_metadata(folder)
            epoch, step = int(record["epoch"]), int(record.get("step", 0))
        except (OSError, ValueError, KeyError, TypeError):
            continue
        steps_per_epoch, iterations = record.get("steps_per_epoch"), record.get("iterations")
        finished = _read_finished(backup_dir)
        return BackupStatus(
            epoch=epoch,
            step=step,
            steps_per_epoch=steps_per_epoch if isinstance(steps_per_epoch, int) else None,
            iterations=iterations if isinstance(iterations, int) else None,
            finished=step == 0 and finished is not None and finished[0] == epoch,
        )
    return BackupStatus()


def read_backup_metadata(folder):
    """The metadata of the backup in `folder`: `epoch`, `step`, `steps_per_epoch`, `iterations`.

    Backups written before a field was recorded lack it.

    Raises:
        OSError, ValueError: the metadata cannot be read.

    Example:

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> with open(os.path.join(folder, "training_metadata.json"), "w") as file:
    ...     _ = file.write('{"epoch": 3}')
    >>> read_backup_metadata(folder)
    {'epoch': 3}
    """
    with open(os.path.join(folder, _METADATA)) as file:
        record = json.load(file)
    if not isinstance(record, dict):
        raise ValueError(f"backup metadata must be a JSON object; {folder} holds {record!r}")
    return record


def backup_weights(folder):
    """The path of the weights (and optimizer state) file of the backup in `folder`.

    Example:

    >>> os.path.basename(backup_weights("backup/epoch_000003"))
    'state.weights.h5'
    """
    return os.path.join(folder, _WEIGHTS)


def _backup_name(epoch, step):
    name = f"{_PREFIX}{epoch:06d}"
    return f"{name}_step_{step:09d}" if step else name


def _backup_entries(backup_dir):
    """`(epoch, step, path)` of the complete backups in `backup_dir`, newest first."""
    if not os.path.isdir(backup_dir):
        return []
    found = []
    for name in os.listdir(backup_dir):
        match = _BACKUP_NAME.fullmatch(name)
        if match:
            found.append((int(match[1]), int(match[2] or 0), os.path.join(backup_dir, name)))
    return sorted(found, reverse=True)


def _optimizer_steps(model):
    optimizer = getattr(model, "optimizer", None)
    if optimizer is None:
        return None
    return int(keras.ops.convert_to_numpy(optimizer.iterations))


def _first_that_loads(paths, restore, kind, failures):
    """`(path, restore(path))` for the first of `paths` that restores; the others are named.

    Each one that does not restore is warned of and appended to `failures`
    as `(path, error)`.
    """
    for index, path in enumerate(paths):
        try:
            return path, restore(path)
        except Exception as error:  # h5py's OSError, a cut zip, JSON, missing keys, wrong shapes
            failures.append((path, error))
            older = " Trying an older one." if index + 1 < len(paths) else ""
            warnings.warn(
                f"Skipping the {kind} {path}: it cannot be restored into this model "
                f"({type(error).__name__}: {_first_line(error)}).{older}",
                stacklevel=4,
            )
    return None


def _first_line(error):
    """The first line of an error's message: Keras' loading errors run on for pages."""
    return str(error).strip().split("\n", 1)[0]


class TrainingStateNotRestored(ValueError):
    """A run's backups or checkpoints exist, and none restores into the model built now.

    Training anew would write over them (the per-epoch checkpoints keep
    their names), so `fit` stops instead: the run's saved state is a
    model of other shapes (its data changed: other classes, another
    vocabulary or length), or every file of it is damaged.

    Args:
        failures: `[(path, error)]` of what was tried, newest first.
    """

    def __init__(self, failures):
        newest, error = failures[0]
        folder = os.path.dirname(os.path.dirname(newest))
        super().__init__(
            f"none of the {len(failures)} saved training state(s) in {folder} restores into the "
            f"model built now; the newest, {os.path.relpath(newest, folder)}: "
            f"{type(error).__name__}: {_first_line(error)}. The run stops rather than train "
            "anew over them. If its data changed since (other classes, vocabulary or lengths), "
            "train in another --output-dir; --overwrite replaces this run."
        )
        self.failures = failures


def _read_finished(backup_dir):
    """(last epoch, epochs asked) of the `fit` that ended normally with these backups, or None."""
    try:
        with open(os.path.join(backup_dir, _FINISHED)) as file:
            record = json.load(file)
        return int(record["epoch"]), record["epochs"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
