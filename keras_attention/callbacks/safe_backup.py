"""Backups of the training state that a crash or a full disk cannot corrupt."""

import json
import os
import shutil
import warnings

import keras

from keras_attention.durable_files import fsync_directory
from keras_attention.durable_files import fsync_tree
from keras_attention.durable_files import left_by_a_dead_process
from keras_attention.durable_files import make_folder
from keras_attention.durable_files import numbered_entries
from keras_attention.durable_files import write_file_atomically

_PREFIX = "epoch_"
_PARTIAL_PREFIX = ".partial_"
_WEIGHTS = "state.weights.h5"
_METADATA = "training_metadata.json"
# Written when `fit` ends normally: a rerun restores the last backup and trains no more.
_FINISHED = "training_finished.json"


class SafeBackupAndRestore(keras.callbacks.Callback):
    """`keras.callbacks.BackupAndRestore` that never leaves a broken backup in the way.

    After every epoch the training state (weights, optimizer, epoch) is
    written to a fresh temporary folder inside `backup_dir`, flushed to the
    disk, then renamed to `epoch_NNNNNN` in one atomic step; only then is the
    previous backup deleted. A run killed mid-write (or a disk that fills
    up) leaves at worst a temporary folder, which the next run removes once
    its writer is gone, and the previous good backup. At the start of
    training the newest backup that loads is restored; one that does not
    load (truncated weights, unreadable metadata) is skipped with a warning
    that names it.

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

    Example:

    >>> import tempfile, numpy as np, keras
    >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    >>> model.compile("sgd", "mse")
    >>> folder = tempfile.mkdtemp()
    >>> history = model.fit(np.ones((4, 2)), np.ones(4), epochs=2, verbose=0,
    ...                     callbacks=[SafeBackupAndRestore(folder)])
    >>> len(history.history["loss"])
    2
    """

    writes_backups = True  # False in a subclass that only restores

    def __init__(self, backup_dir, delete_at_end=True, checkpoint_dir=None):
        super().__init__()
        if not backup_dir:
            raise ValueError(
                f"`backup_dir` must be a folder path. Received: backup_dir={backup_dir!r}"
            )
        self.backup_dir = os.fspath(backup_dir)
        self.delete_at_end = delete_at_end
        self.checkpoint_dir = None if checkpoint_dir is None else os.fspath(checkpoint_dir)
        self.restored_from = None
        self.restored_epoch = None
        self.restored_finished = False

    def backups(self):
        """Complete backups, newest first, as folder paths."""
        return [path for _, path in numbered_entries(self.backup_dir, _PREFIX)]

    def on_train_begin(self, logs=None):
        self.restored_from, self.restored_epoch, self.restored_finished = None, None, False
        if self.writes_backups:
            self._remove_partial_writes()
        self._restore_newest()
        finished = os.path.join(self.backup_dir, _FINISHED)
        if self.writes_backups and not self.restored_finished and os.path.exists(finished):
            os.remove(finished)  # this fit trains on: its end is not that one

    def _restore_newest(self):
        found = _first_that_loads(self.backups(), self._restore, "training backup")
        if found is None:
            self._restore_newest_checkpoint()
            return
        self.restored_from, epoch = found
        self.restored_epoch = epoch
        epochs = self.params.get("epochs")
        self.restored_finished = _read_finished(self.backup_dir) == (epoch, epochs)
        if self.restored_finished:  # the same fit ended there (maybe early): skip to its end
            epoch = max(epoch, epochs or epoch)
        self.model._initial_epoch = epoch

    def _restore_newest_checkpoint(self):
        """No backup could be read: go on from the newest checkpoint that loads."""
        checkpoints = numbered_entries(self.checkpoint_dir, _PREFIX, ".keras")
        epoch_of = {path: epoch for epoch, path in checkpoints}

        def restore(path):
            self._load_state(path)
            return epoch_of[path]

        found = _first_that_loads([path for _, path in checkpoints], restore, "checkpoint")
        if found is not None:
            self.restored_from, self.restored_epoch = found
            # Past `epochs` (a run asked for fewer now): fit trains nothing.
            self.model._initial_epoch = self.restored_epoch

    def _restore(self, folder):
        with open(os.path.join(folder, _METADATA)) as file:
            epoch = int(json.load(file)["epoch"])
        self._load_state(os.path.join(folder, _WEIGHTS))
        return epoch

    def _load_state(self, path):
        """Loads weights and optimizer state from a `.weights.h5` or `.keras` file."""
        if self.model.optimizer is not None and not self.model.optimizer.built:
            # Optimizer variables must exist before their values load.
            self.model.optimizer.build(self.model.trainable_variables)
        self.model.load_weights(path)

    def on_epoch_end(self, epoch, logs=None):
        os.makedirs(self.backup_dir, exist_ok=True)
        previous = self.backups()
        partial = make_folder(self.backup_dir, _PARTIAL_PREFIX)
        try:
            self.model.save_weights(os.path.join(partial, _WEIGHTS))
            with open(os.path.join(partial, _METADATA), "w") as file:
                json.dump({"epoch": epoch + 1}, file)
            fsync_tree(partial)  # on the disk before the rename that publishes it
            final = os.path.join(self.backup_dir, f"{_PREFIX}{epoch + 1:06d}")
            if os.path.exists(final):
                shutil.rmtree(final)
            os.rename(partial, final)  # atomic: the backup is whole or absent
            fsync_directory(self.backup_dir)
        except BaseException:
            shutil.rmtree(partial, ignore_errors=True)
            raise
        for folder in previous:
            if folder != final:
                shutil.rmtree(folder, ignore_errors=True)

    def on_train_end(self, logs=None):
        if self.delete_at_end:
            shutil.rmtree(self.backup_dir, ignore_errors=True)
            return
        backups = self.backups()
        if backups:
            epoch = int(os.path.basename(backups[0])[len(_PREFIX) :])
            record = {"epoch": epoch, "epochs": self.params.get("epochs")}
            write_file_atomically(os.path.join(self.backup_dir, _FINISHED), json.dumps(record))

    def _remove_partial_writes(self):
        """Removes the temporary folders of writers that are gone (never a live one's)."""
        if os.path.isdir(self.backup_dir):
            for name in os.listdir(self.backup_dir):
                if left_by_a_dead_process(name, _PARTIAL_PREFIX):
                    shutil.rmtree(os.path.join(self.backup_dir, name), ignore_errors=True)


def backup_status(backup_dir):
    """What a run would resume from: (epoch of the newest backup or None, whether fit had ended).

    Reads only the small metadata files: the weights are checked when they
    are restored (an unreadable backup is skipped then, with a warning).

    Example:

    >>> import tempfile
    >>> backup_status(tempfile.mkdtemp())
    (None, False)
    """
    for folder in SafeBackupAndRestore(backup_dir).backups():
        try:
            with open(os.path.join(folder, _METADATA)) as file:
                epoch = int(json.load(file)["epoch"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        finished = _read_finished(backup_dir)
        return epoch, finished is not None and finished[0] == epoch
    return None, False


def _first_that_loads(paths, restore, kind):
    """`(path, restore(path))` for the first of `paths` that restores; the others are named."""
    for path in paths:
        try:
            return path, restore(path)
        except Exception as error:  # h5py's OSError, a cut zip, JSON, missing keys, wrong shapes
            warnings.warn(
                f"Skipping the {kind} {path}: it cannot be read "
                f"({type(error).__name__}: {error}). Trying an older one.",
                stacklevel=4,
            )
    return None


def _read_finished(backup_dir):
    """(last epoch, epochs asked) of the `fit` that ended normally with these backups, or None."""
    try:
        with open(os.path.join(backup_dir, _FINISHED)) as file:
            record = json.load(file)
        return int(record["epoch"]), record["epochs"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
