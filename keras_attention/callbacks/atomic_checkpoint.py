"""Per-epoch `.keras` checkpoints that are complete or absent, never half written."""

import os

import keras

from keras_attention.durable_files import fsync_directory
from keras_attention.durable_files import fsync_file
from keras_attention.durable_files import left_by_a_dead_process

_PARTIAL_PREFIX = ".partial_"


class AtomicModelCheckpoint(keras.callbacks.Callback):
    """Saves the model to `filepath` after every epoch through a temporary file.

    The model is written to a hidden temporary file beside the target
    (`.partial_<pid>_<name>`), flushed to the disk and renamed onto it
    (`os.replace`, atomic on one file system), so a crash, a power cut or a
    full disk mid-write never leaves a truncated checkpoint under the final
    name, and an existing checkpoint is replaced only by a complete one. At
    the start of training, temporary files of writers that are gone (killed
    mid-write) are removed.

    Args:
        filepath: target path ending in `.keras`; may hold `{epoch}`, e.g.
            `"checkpoints/epoch_{epoch:03d}.keras"` (epochs count from 1).

    Example:

    >>> import os, tempfile, numpy as np, keras
    >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    >>> model.compile("sgd", "mse")
    >>> folder = tempfile.mkdtemp()
    >>> pattern = os.path.join(folder, "epoch_{epoch:03d}.keras")
    >>> _ = model.fit(np.ones((4, 2)), np.ones(4), epochs=2, verbose=0,
    ...               callbacks=[AtomicModelCheckpoint(pattern)])
    >>> sorted(os.listdir(folder))
    ['epoch_001.keras', 'epoch_002.keras']
    """

    def __init__(self, filepath):
        super().__init__()
        filepath = os.fspath(filepath)
        if not filepath.endswith(".keras"):
            raise ValueError(f"`filepath` must end in '.keras'. Received: filepath={filepath!r}")
        self.filepath = filepath

    def on_train_begin(self, logs=None):
        folder = os.path.dirname(self.filepath) or "."
        if "{" in folder or not os.path.isdir(folder):
            return
        for name in os.listdir(folder):
            if left_by_a_dead_process(name, _PARTIAL_PREFIX):
                os.remove(os.path.join(folder, name))

    def on_epoch_end(self, epoch, logs=None):
        path = self.filepath.format(epoch=epoch + 1, **(logs or {}))
        folder, name = os.path.split(path)
        if folder:
            os.makedirs(folder, exist_ok=True)
        partial = os.path.join(folder, f"{_PARTIAL_PREFIX}{os.getpid()}_{name}")
        try:
            self.model.save(partial)
            fsync_file(partial)  # on the disk before the rename that publishes it
            os.replace(partial, path)
            fsync_directory(folder or ".")
        finally:
            if os.path.exists(partial):
                os.remove(partial)
