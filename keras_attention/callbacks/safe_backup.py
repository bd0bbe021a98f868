"""Backups of the training state that a crash or a full disk cannot corrupt."""

import json
import os
import shutil
import tempfile
import warnings

import keras

_PREFIX = "epoch_"
_WEIGHTS = "state.weights.h5"
_METADATA = "training_metadata.json"


class SafeBackupAndRestore(keras.callbacks.Callback):
    """`keras.callbacks.BackupAndRestore` that never leaves a broken backup in the way.

    After every epoch the training state (weights, optimizer, epoch) is
    written to a fresh temporary folder inside `backup_dir`, then renamed to
    `epoch_NNNNNN` in one atomic step; only then is the previous backup
    deleted. A run killed mid-write (or a disk that fills up) leaves at worst
    a temporary folder, which the next run removes, and the previous good
    backup. At the start of training the newest backup that loads is
    restored; one that does not load (truncated weights, unreadable metadata)
    is skipped with a warning that names it. The backup folder is removed
    when training ends.

    Args:
        backup_dir: folder of the backups; used by nothing else.
        delete_at_end: remove `backup_dir` when `fit` finishes.

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

    def __init__(self, backup_dir, delete_at_end=True):
        super().__init__()
        if not backup_dir:
            raise ValueError(
                f"`backup_dir` must be a folder path. Received: backup_dir={backup_dir!r}"
            )
        self.backup_dir = os.fspath(backup_dir)
        self.delete_at_end = delete_at_end
        self.restored_from = None

    def backups(self):
        """Complete backups, newest first, as folder paths."""
        if not os.path.isdir(self.backup_dir):
            return []
        names = [
            name
            for name in os.listdir(self.backup_dir)
            if name.startswith(_PREFIX) and name[len(_PREFIX) :].isdigit()
        ]
        names.sort(key=lambda name: int(name[len(_PREFIX) :]), reverse=True)
        return [os.path.join(self.backup_dir, name) for name in names]

    def on_train_begin(self, logs=None):
        self._remove_partial_writes()
        for folder in self.backups():
            try:
                epoch = self._restore(folder)
            except Exception as error:  # h5py's OSError, JSON, missing keys, wrong shapes
                warnings.warn(
                    f"Skipping the training backup {folder}: it cannot be read "
                    f"({type(error).__name__}: {error}). Trying an older one.",
                    stacklevel=2,
                )
                continue
            self.model._initial_epoch = epoch
            self.restored_from = folder
            return

    def _restore(self, folder):
        with open(os.path.join(folder, _METADATA)) as file:
            epoch = int(json.load(file)["epoch"])
        if self.model.optimizer is not None and not self.model.optimizer.built:
            # Optimizer variables must exist before their values load.
            self.model.optimizer.build(self.model.trainable_variables)
        self.model.load_weights(os.path.join(folder, _WEIGHTS))
        return epoch

    def on_epoch_end(self, epoch, logs=None):
        os.makedirs(self.backup_dir, exist_ok=True)
        previous = self.backups()
        partial = tempfile.mkdtemp(prefix=".partial_", dir=self.backup_dir)
        try:
            self.model.save_weights(os.path.join(partial, _WEIGHTS))
            with open(os.path.join(partial, _METADATA), "w") as file:
                json.dump({"epoch": epoch + 1}, file)
                file.flush()
                os.fsync(file.fileno())
            final = os.path.join(self.backup_dir, f"{_PREFIX}{epoch + 1:06d}")
            if os.path.exists(final):
                shutil.rmtree(final)
            os.rename(partial, final)  # atomic: the backup is whole or absent
        except BaseException:
            shutil.rmtree(partial, ignore_errors=True)
            raise
        for folder in previous:
            if folder != final:
                shutil.rmtree(folder, ignore_errors=True)

    def on_train_end(self, logs=None):
        if self.delete_at_end:
            shutil.rmtree(self.backup_dir, ignore_errors=True)

    def _remove_partial_writes(self):
        if os.path.isdir(self.backup_dir):
            for name in os.listdir(self.backup_dir):
                if name.startswith(".partial_"):
                    shutil.rmtree(os.path.join(self.backup_dir, name), ignore_errors=True)
