"""Interrupting an example's training after an epoch, and watching it resume."""

import os

import keras


class Interrupted(Exception):
    """Stands for a crash or Ctrl-C in the middle of training."""


class TrainingWatcher(keras.callbacks.Callback):
    """Records where training starts; optionally stops it after an epoch."""

    def __init__(self, interrupt_after_epoch=None):
        super().__init__()
        self.interrupt_after_epoch = interrupt_after_epoch
        self.epochs = []
        self.start_weights = None
        self.last_weights = None

    def on_train_begin(self, logs=None):
        # Runs after BackupAndRestore's, so it sees the restored state.
        self.start_weights = self.model.get_weights()

    def on_epoch_begin(self, epoch, logs=None):
        self.epochs.append(epoch)

    def on_epoch_end(self, epoch, logs=None):
        self.last_weights = self.model.get_weights()
        if epoch == self.interrupt_after_epoch:
            raise Interrupted


def watch_training(monkeypatch):
    """Adds `watchers[-1]` to the callbacks of the next example run; returns `watchers`.

    Every example fits through `tasks.training_run.TrainingRun`, which takes its
    callbacks from `training.run_setup.training_callbacks`.
    """
    from keras_attention.training import run_setup

    original, watchers = run_setup.training_callbacks, []
    monkeypatch.setattr(
        run_setup, "training_callbacks", lambda folder: original(folder) + watchers[-1:]
    )
    return watchers


def interrupt_then_resume(monkeypatch, main, argv, resume_argv=None):
    """Runs `main(argv)` until its first epoch ends, then the same command again.

    The first run stops as if the machine went down; the second (with
    `resume_argv`, by default `argv`) must continue with the second epoch
    from the weights the first one saved, and removes the backup at its end.

    Returns:
        the second run's metrics.
    """
    import numpy as np
    import pytest

    output_dir = argv[argv.index("--output-dir") + 1]
    watchers = watch_training(monkeypatch)
    first = TrainingWatcher(interrupt_after_epoch=0)
    watchers.append(first)
    with pytest.raises(Interrupted):
        main(argv)
    assert first.epochs == [0]
    backup = os.path.join(output_dir, "backup")
    assert os.listdir(backup)

    second = TrainingWatcher()
    watchers.append(second)
    metrics = main(resume_argv if resume_argv is not None else argv)
    assert second.epochs == [1]
    for restored, saved in zip(second.start_weights, first.last_weights, strict=True):
        np.testing.assert_array_equal(restored, saved)
    assert not os.path.exists(backup)  # removed once training ends
    return metrics
