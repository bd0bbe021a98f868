"""SafeBackupAndRestore within epochs: how often it backs up, what a backup records, plain `fit`."""

import json
import os

import keras
import numpy as np
import pytest

from keras_attention.callbacks.safe_backup import BackupStatus
from keras_attention.callbacks.safe_backup import SafeBackupAndRestore
from keras_attention.callbacks.safe_backup import backup_status

X, Y = np.ones((12, 3), "float32"), np.zeros((12, 1), "float32")  # 6 batches of 2


def _model(steps_per_execution=1):
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(keras.optimizers.SGD(0.1), "mse", steps_per_execution=steps_per_execution)
    return model


class _Look(keras.callbacks.Callback):
    """The backups in a folder after every step."""

    def __init__(self, folder):
        super().__init__()
        self.folder, self.seen = folder, []

    def on_train_batch_end(self, batch, logs=None):
        self.seen.append(sorted(os.listdir(self.folder)) if os.path.isdir(self.folder) else [])


@pytest.mark.parametrize(
    "every_steps, every_seconds, message",
    [
        (0, None, "`every_steps` must be a positive integer or None. Received: every_steps=0"),
        (2.5, None, "Received: every_steps=2.5"),
        (True, None, "Received: every_steps=True"),
        (None, -1, "`every_seconds` must be a positive number or None. Received: every_seconds=-1"),
        (None, float("inf"), "Received: every_seconds=inf"),
    ],
)
def test_bad_frequencies_are_refused_naming_them(tmp_path, every_steps, every_seconds, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        SafeBackupAndRestore(tmp_path, every_steps=every_steps, every_seconds=every_seconds)


def test_every_n_steps_a_backup_records_the_epoch_the_step_and_the_step_count(tmp_path):
    look = _Look(tmp_path)
    backup = SafeBackupAndRestore(tmp_path, delete_at_end=False, every_steps=4)
    _model().fit(X, Y, batch_size=2, epochs=2, verbose=0, callbacks=[backup, look])
    newest = [names[0] if names else None for names in look.seen]
    # Steps 4 and, counting from the backup at the end of epoch 1 (step 6), 10: never one at
    # an epoch's last step, whose own backup follows.
    expected = [None] * 3 + ["epoch_000000_step_000000004"] * 3 + ["epoch_000001"] * 3
    assert newest == expected + ["epoch_000001_step_000000004"] * 3
    assert sorted(os.listdir(tmp_path)) == ["epoch_000002", "training_finished.json"]
    metadata = json.loads((tmp_path / "epoch_000002" / "training_metadata.json").read_text())
    seconds = metadata.pop("train_seconds")  # the run's training time up to this backup
    assert isinstance(seconds, float) and seconds >= 0
    assert metadata == {"epoch": 2, "step": 0, "steps_per_epoch": 6, "iterations": 12}
    assert backup_status(str(tmp_path)) == BackupStatus(2, 0, 6, 12, finished=True)


def test_steps_run_several_at_a_time_are_all_counted(tmp_path):
    look = _Look(tmp_path)
    backup = SafeBackupAndRestore(tmp_path, delete_at_end=False, every_steps=3)
    _model(steps_per_execution=2).fit(
        X, Y, batch_size=2, epochs=1, verbose=0, callbacks=[backup, look]
    )
    assert look.seen[1] == ["epoch_000000_step_000000004"]  # 4 steps done, 3 asked: one backup


def test_plain_fit_starts_a_partly_trained_epoch_again(tmp_path):
    """Keras' `fit` cannot start mid-epoch: `fit_resuming` is what trains only the rest."""

    class Stop(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            if int(self.model.optimizer.iterations) == 8:
                raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _model().fit(
            X,
            Y,
            batch_size=2,
            epochs=3,
            verbose=0,
            callbacks=[SafeBackupAndRestore(tmp_path, False, every_steps=2), Stop()],
        )
    assert os.listdir(tmp_path) == ["epoch_000001_step_000000002"]
    backup, model = SafeBackupAndRestore(tmp_path, False), _model()
    history = model.fit(X, Y, batch_size=2, epochs=3, verbose=0, callbacks=[backup])
    assert backup.resume_at == (1, 2) and backup.restored_epoch == 1
    assert len(history.history["loss"]) == 2  # epochs 2 (whole again) and 3
    assert int(model.optimizer.iterations) == 8 + 12  # the count goes on from the backup's
    assert not backup_status(str(tmp_path)).step


def _file_bytes(folder):
    return {
        os.path.relpath(os.path.join(root, name), folder): open(
            os.path.join(root, name), "rb"
        ).read()
        for root, _, names in os.walk(folder)
        for name in names
    }


def test_a_run_whose_saved_state_fits_no_longer_stops_and_writes_nothing(tmp_path):
    from keras_attention.callbacks.atomic_checkpoint import AtomicModelCheckpoint
    from keras_attention.callbacks.safe_backup import TrainingStateNotRestored

    checkpoints, backups = tmp_path / "checkpoints", tmp_path / "backup"
    callbacks = [
        AtomicModelCheckpoint(str(checkpoints / "epoch_{epoch:03d}.keras")),
        SafeBackupAndRestore(backups, delete_at_end=True, checkpoint_dir=checkpoints),
    ]
    _model().fit(X, Y, batch_size=2, epochs=1, verbose=0, callbacks=callbacks)
    saved = _file_bytes(tmp_path)
    assert list(saved) == ["checkpoints/epoch_001.keras"]
    # The data changed under the run: two outputs now, where the checkpoint has one.
    wider = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    wider.compile(keras.optimizers.SGD(0.1), "mse")
    backup = SafeBackupAndRestore(backups, delete_at_end=True, checkpoint_dir=checkpoints)
    with pytest.warns(UserWarning, match=r"epoch_001\.keras: it cannot be restored into this"):
        with pytest.raises(
            TrainingStateNotRestored,
            match=r"^none of the 1 saved training state\(s\) in .* restores into the model built "
            r"now; the newest, checkpoints/epoch_001\.keras: ValueError: .*The run stops rather "
            r"than train anew over them\.",
        ):
            wider.fit(X, np.zeros((12, 2)), batch_size=2, epochs=2, verbose=0, callbacks=[backup])
    assert _file_bytes(tmp_path) == saved  # the finished epoch is as it was


def test_a_damaged_backup_alone_stops_the_run_too(tmp_path):
    from keras_attention.callbacks.safe_backup import TrainingStateNotRestored

    backups = tmp_path / "backup"
    callback = SafeBackupAndRestore(backups, delete_at_end=False)
    _model().fit(X, Y, batch_size=2, epochs=1, verbose=0, callbacks=[callback])
    (kept,) = callback.backups()
    for name in os.listdir(kept):  # every file cut short
        path = os.path.join(kept, name)
        with open(path, "r+b") as file:
            file.truncate(os.path.getsize(path) // 2)
    with pytest.warns(UserWarning, match="Skipping the training backup"):
        with pytest.raises(TrainingStateNotRestored, match="none of the 1 saved training state"):
            _model().fit(X, Y, batch_size=2, epochs=2, verbose=0, callbacks=[callback])
