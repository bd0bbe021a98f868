"""`model.fit` in epochs of a fixed number of steps, resumed at the step its backup was taken.

Keras' `fit` starts every epoch at its first step: a backup written in the
middle of an epoch could only restart that epoch whole. `fit_resuming`
trains the rest of the interrupted epoch, then the epochs after it, with
one set of callbacks that sees one training: one `on_train_begin` (where
`SafeBackupAndRestore` restores the backup), the interrupted epoch's steps
numbered from where it stopped (the progress bar shows 1201/1500), one
`History`, one `on_train_end`.

It takes two `fit` calls when a run resumes mid-epoch. The first is asked
for the whole run; once the backup has said where it resumes, that epoch
is ended after its remaining steps (`stop_training`, which Keras reads
after every step) and, unless a callback asked to stop, a second `fit`
trains the epochs after it. The callbacks see neither the end of the first
call nor the beginning of the second.
"""

import warnings

import keras
import tensorflow as tf

from keras_attention.callbacks.safe_backup import SafeBackupAndRestore
from keras_attention.validation import check_positive_int


def fit_resuming(model, train, epochs, steps_per_epoch, callbacks=(), verbose="auto", **options):
    """`model.fit` streaming `train` round and round, resuming mid-epoch from its backup.

    An epoch is `steps_per_epoch` optimizer steps over `train` repeated
    (`train.repeat()`, which reshuffles a dataset shuffled with
    `reshuffle_each_iteration`), so its length is never counted. When a
    `SafeBackupAndRestore` among `callbacks` restores a backup taken at
    step s of epoch e, training goes on with the remaining
    `steps_per_epoch - s` steps of epoch e, then epochs e + 1 to `epochs`:
    as many optimizer steps in all as a run that was never interrupted, the
    learning-rate schedule following the restored step count. Data after a
    resumption are a fresh pass over `train`, not the batches the
    interrupted run would have drawn.

    Args:
        model: a compiled model.
        train: a finite, batched `tf.data.Dataset` (or an infinite one, used
            as it is).
        epochs: the epochs of the whole run.
        steps_per_epoch: optimizer steps in an epoch.
        callbacks: `keras.callbacks.Callback`s, at most one of them a
            `SafeBackupAndRestore`.
        verbose: `fit`'s `verbose`.
        **options: more `fit` arguments: `validation_data` (run to its end
            after every epoch), `shuffle`, ...; not `initial_epoch` nor
            `steps_per_epoch`, which the backup and `steps_per_epoch` set.

    Returns:
        the `History` of the whole training.

    Raises:
        ValueError: `train` holds no batch, `steps_per_epoch` is not a
            positive integer, or several backups are given.

    Example:

    >>> import numpy as np, keras, tensorflow as tf
    >>> from keras_attention.training.resumable_fit import fit_resuming
    >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    >>> model.compile("sgd", "mse")
    >>> data = tf.data.Dataset.from_tensor_slices((np.ones((6, 2)), np.ones(6))).batch(2)
    >>> history = fit_resuming(model, data, epochs=2, steps_per_epoch=5, verbose=0)
    >>> len(history.history["loss"]), int(model.optimizer.iterations)
    (2, 10)
    """
    check_positive_int("steps_per_epoch", steps_per_epoch)
    for name in ("initial_epoch", "steps_per_epoch"):
        if name in options:
            raise ValueError(
                f"`{name}` is set by the backup and `steps_per_epoch`, not passed. "
                f"Received: {name}={options[name]!r}"
            )
    callback_list = _ResumingCallbacks(
        list(callbacks),
        steps_per_epoch,
        add_history=True,
        add_progbar=verbose != 0,
        model=model,
        verbose=verbose,
        epochs=epochs,
        steps=steps_per_epoch,
    )
    options.setdefault("shuffle", False)  # a dataset shuffles itself; True only warns
    stream = _streamed(train)
    common = dict(steps_per_epoch=steps_per_epoch, callbacks=callback_list, verbose=verbose)
    try:
        model.fit(stream, epochs=epochs, **common, **options)
        if callback_list.trains_on:
            callback_list.second_fit = True
            model._initial_epoch = None  # the backup's epoch is done: start after it
            start = callback_list.resumed_epoch + 1
            model.fit(stream, initial_epoch=start, epochs=epochs, **common, **options)
    finally:
        callback_list.end_quiet_validation()  # a validation that raised left them changed
    return model.history


def _streamed(train):
    cardinality = int(train.cardinality())
    if cardinality == 0:
        raise ValueError("`train` must hold at least one batch. Received: a dataset of 0 elements")
    if cardinality == tf.data.INFINITE_CARDINALITY:
        return train
    return train.repeat()  # an unknown length included: it is never counted


class _ResumingCallbacks(keras.callbacks.CallbackList):
    """The callbacks of one training spread over one or two `fit` calls.

    After `on_train_begin`, the backup's `resume_at` gives the step the
    training resumes from: the batch numbers of that epoch are shifted by
    it, and the epoch is ended once it has had `steps_per_epoch` steps.
    A validation set of unknown length is run to its end without Keras'
    "Your input ran out of data" warning, which is meant for training data.

    Attributes:
        resumed_epoch: the epoch resumed mid-way, or None.
        trains_on: whether the epochs after it are to be trained (a second
            `fit`), which the callbacks see as the same training.
        second_fit: set when that second `fit` starts.
    """

    def __init__(self, callbacks, steps_per_epoch, **options):
        super().__init__(callbacks, **options)
        backups = [c for c in self.callbacks if isinstance(c, SafeBackupAndRestore)]
        if len(backups) > 1:
            raise ValueError(
                "`callbacks` must hold at most one SafeBackupAndRestore. "
                f"Received: {len(backups)} of them"
            )
        self._backup = backups[0] if backups else None
        self._steps_per_epoch = steps_per_epoch
        self._offset = 0
        self._began = False
        self._ending_epoch = False
        self.resumed_epoch = None
        self.trains_on = False
        self.second_fit = False
        self._quiet_validation = None

    def on_train_begin(self, logs=None):
        if self._began:
            return  # the second `fit` of the same training
        self._began = True
        super().on_train_begin(logs)
        epoch, step = self._backup.resume_at if self._backup is not None else (0, 0)
        if 0 < step < self._steps_per_epoch:
            self.resumed_epoch, self._offset = epoch, step

    def on_train_batch_begin(self, batch, logs=None):
        super().on_train_batch_begin(batch + self._offset, logs)

    def on_train_batch_end(self, batch, logs=None):
        batch += self._offset
        super().on_train_batch_end(batch, logs)
        if self._offset and batch + 1 >= self._steps_per_epoch and not self.model.stop_training:
            self.model.stop_training = self._ending_epoch = True

    def on_epoch_end(self, epoch, logs=None):
        if self._ending_epoch:
            self.model.stop_training = False  # so that a callback's own stop is seen
        super().on_epoch_end(epoch, logs)
        if self._offset:
            self._offset = 0
            last = epoch + 1 >= self.params["epochs"]
            self.trains_on = not self.model.stop_training and not last
            self.model.stop_training = self.model.stop_training or self.trains_on
        self._ending_epoch = False

    def on_test_begin(self, logs=None):
        if self._quiet_validation is None:
            self._quiet_validation = warnings.catch_warnings()
            self._quiet_validation.__enter__()
            warnings.filterwarnings("ignore", message="Your input ran out of data")
        super().on_test_begin(logs)

    def on_test_end(self, logs=None):
        super().on_test_end(logs)
        self.end_quiet_validation()

    def end_quiet_validation(self):
        """Puts the warning filters back as they were before the validation."""
        if self._quiet_validation is not None:
            self._quiet_validation.__exit__(None, None, None)
            self._quiet_validation = None

    def on_train_end(self, logs=None):
        if self.trains_on and not self.second_fit:
            return  # the end of the first `fit` only
        super().on_train_end(logs)
