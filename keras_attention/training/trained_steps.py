"""How many optimizer steps a run folder holds, read from its files without building a model.

A run's backup records the optimizer's step count in its metadata; a
backup written without it, or a `.keras` checkpoint (after the backup of a
finished run is removed), holds it among the optimizer's variables, which
are read from the weights file alone (with h5py, which Keras saves with).
`.keras` files store their weights uncompressed, so the one value is read
in place, not the whole file.
"""

import functools
import io
import os
import struct
import zipfile

_BACKUP_FOLDER = "backup"
_CHECKPOINT_FOLDER = "checkpoints"
_WEIGHTS_IN_KERAS_FILE = "model.weights.h5"
# A Keras 3 optimizer's first variable is its step count; a LossScaleOptimizer's
# step count is its inner optimizer's.
_STEP_COUNTS = ("optimizer/inner_optimizer/vars/0", "optimizer/vars/0")
_LOCAL_HEADER = struct.Struct("<4s22xHH")  # zip local file header: names' lengths at 26


def trained_steps(run_folder):
    """The optimizer steps the newest backup of `run_folder`, or else its newest checkpoint, holds.

    The newest one that can be read, as `SafeBackupAndRestore` restores it.

    Args:
        run_folder: a run's `--output-dir`, with `backup/` and `checkpoints/`.

    Returns:
        int: 0 when the folder holds none that can be read.

    Example:

    >>> import tempfile
    >>> from keras_attention.training.trained_steps import trained_steps
    >>> trained_steps(tempfile.mkdtemp())
    0
    """
    from keras_attention.callbacks.safe_backup import SafeBackupAndRestore
    from keras_attention.durable_files import numbered_entries

    readers = [
        functools.partial(_backup_step_count, folder)
        for folder in SafeBackupAndRestore(os.path.join(run_folder, _BACKUP_FOLDER)).backups()
    ]
    checkpoints = os.path.join(run_folder, _CHECKPOINT_FOLDER)
    readers += [
        functools.partial(keras_file_step_count, path)
        for _, path in numbered_entries(checkpoints, "epoch_", ".keras")
    ]
    for read in readers:
        try:
            return read()
        except Exception:  # unreadable: the restore skips it too, naming it
            continue
    return 0


def _backup_step_count(folder):
    from keras_attention.callbacks.safe_backup import backup_weights
    from keras_attention.callbacks.safe_backup import read_backup_metadata

    record = read_backup_metadata(folder)
    int(record["epoch"])  # what the restore needs
    iterations = record.get("iterations")
    if isinstance(iterations, int):
        return iterations
    return weights_step_count(backup_weights(folder))


def weights_step_count(weights):
    """The optimizer's step count saved in a `.weights.h5` file (a path or a file object).

    Raises:
        KeyError: the file holds no optimizer.
        OSError: it is not a readable HDF5 file.

    Example:

    >>> import os, tempfile, numpy as np, keras
    >>> from keras_attention.training.trained_steps import weights_step_count
    >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    >>> model.compile("sgd", "mse")
    >>> _ = model.fit(np.ones((6, 2)), np.ones(6), batch_size=2, verbose=0)
    >>> path = os.path.join(tempfile.mkdtemp(), "state.weights.h5")
    >>> model.save_weights(path)
    >>> weights_step_count(path)
    3
    """
    import h5py

    with h5py.File(weights, "r") as file:
        for name in _STEP_COUNTS:
            if name in file:
                return int(file[name][()])
    raise KeyError(f"no optimizer step count in {weights!r}")


def keras_file_step_count(path):
    """The optimizer's step count saved in a `.keras` file, reading only what it needs.

    Example:

    >>> import os, tempfile, numpy as np, keras
    >>> from keras_attention.training.trained_steps import keras_file_step_count
    >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    >>> model.compile("sgd", "mse")
    >>> _ = model.fit(np.ones((4, 2)), np.ones(4), batch_size=2, epochs=2, verbose=0)
    >>> path = os.path.join(tempfile.mkdtemp(), "epoch_002.keras")
    >>> model.save(path)
    >>> keras_file_step_count(path)
    4
    """
    with zipfile.ZipFile(path) as archive:
        member = archive.getinfo(_WEIGHTS_IN_KERAS_FILE)
        if member.compress_type != zipfile.ZIP_STORED:
            with archive.open(member) as weights:
                return weights_step_count(weights)
    with open(path, "rb") as file:
        file.seek(member.header_offset)
        signature, name_length, extra_length = _LOCAL_HEADER.unpack(file.read(_LOCAL_HEADER.size))
        if signature != b"PK\x03\x04":
            raise zipfile.BadZipFile(f"no local file header for {member.filename} in {path}")
        start = member.header_offset + _LOCAL_HEADER.size + name_length + extra_length
        return weights_step_count(_Window(file, start, member.file_size))


class _Window(io.RawIOBase):
    """The bytes `[start, start + size)` of an open file, as a file of their own."""

    def __init__(self, file, start, size):
        super().__init__()
        self._file, self._start, self._size, self._position = file, start, size, 0

    def readable(self):
        return True

    def seekable(self):
        return True

    def tell(self):
        return self._position

    def seek(self, offset, whence=io.SEEK_SET):
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self._size}[whence]
        self._position = max(0, base + offset)
        return self._position

    def readinto(self, buffer):
        count = max(0, min(len(buffer), self._size - self._position))
        self._file.seek(self._start + self._position)
        data = self._file.read(count)
        buffer[: len(data)] = data
        self._position += len(data)
        return len(data)
