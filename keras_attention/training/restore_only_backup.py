"""A non-chief worker's backup callback: restores the chief's backup, writes none."""

from keras_attention.callbacks.safe_backup import SafeBackupAndRestore


class RestoreOnlyBackup(SafeBackupAndRestore):
    """`SafeBackupAndRestore` that reads `backup_dir` at the start of training and never writes it.

    Every worker of a multi-worker run must restart at the same epoch and
    step with the same weights, so each restores the chief's backup (in the
    shared `--output-dir`), or the chief's newest checkpoint where it has no
    backup (`checkpoint_dir`); only the chief writes (at epoch ends, and
    every so many steps or minutes within them) and finally removes it. A
    backup the chief writes is published whole by one rename, and the
    workers read the folder before the first step, when the chief cannot
    write (its next backup needs steps that every worker takes together):
    all of them resume from the same backup, at the same step.

    Example:

    >>> import os, tempfile, numpy as np, keras
    >>> folder = os.path.join(tempfile.mkdtemp(), "backup")
    >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    >>> model.compile("sgd", "mse")
    >>> history = model.fit(np.ones((4, 2)), np.ones(4), epochs=1, verbose=0,
    ...                     callbacks=[RestoreOnlyBackup(folder, every_steps=1)])
    >>> os.path.exists(folder)
    False
    """

    writes_backups = False  # not even to clear leftovers: the chief's may be on another machine

    def __init__(self, backup_dir, checkpoint_dir=None, **frequency):
        super().__init__(
            backup_dir, delete_at_end=False, checkpoint_dir=checkpoint_dir, **frequency
        )
