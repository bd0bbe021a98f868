"""Interrupting an example's training after an epoch, and watching it resume."""

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
