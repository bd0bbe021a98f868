"""A non-chief worker's backup callback: restores the chief's backup, writes none."""

from keras_attention.callbacks.safe_backup import SafeBackupAndRestore


class RestoreOnlyBackup(SafeBackupAndRestore):
    """`SafeBackupAndRestore` that reads `backup_dir` at the start of training and never writes it.

    Every worker of a multi-worker run must restart at the same epoch with
    the same weights, so each restores the chief's backup (in the shared
    `--output-dir`), or the chief's newest checkpoint where it has no
    backup (`checkpoint_dir`); only the chief writes and finally removes it.

    Example:

    >>> import os, tempfile, numpy as np, keras
    >>> folder = os.path.join(tempfile.mkdtemp(), "backup")
    >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    >>> model.compile("sgd", "mse")
    >>> history = model.fit(np.ones((4, 2)), np.ones(4), epochs=1, verbose=0,
    ...                     callbacks=[RestoreOnlyBackup(folder)])
    >>> os.path.exists(folder)
    False
    """

    writes_backups = False  # not even to clear leftovers: the chief's may be on another machine

    def __init__(self, backup_dir, checkpoint_dir=None):
        super().__init__(backup_dir, delete_at_end=False, checkpoint_dir=checkpoint_dir)

    def on_epoch_end(self, epoch, logs=None):
        pass  # the chief writes the backups

    def on_train_end(self, logs=None):
        pass  # ... and removes them
