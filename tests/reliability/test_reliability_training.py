"""Training never loses work: atomic backups and checkpoints, paths checked before training.

Each test is named for the case it covers; tiny Dense models keep them fast.
"""

import json
import os
import shutil

import keras
import numpy as np
import pytest
from example_scripts import load_example

from keras_attention.callbacks.atomic_checkpoint import AtomicModelCheckpoint
from keras_attention.callbacks.safe_backup import SafeBackupAndRestore
from keras_attention.training.run_folder import RunFolderError
from keras_attention.training.run_folder import check_export_path
from keras_attention.training.run_folder import prepare_run_folder
from keras_attention.training.run_folder import replace_folder

X, Y = np.ones((8, 3), "float32"), np.zeros((8, 1), "float32")


def _model():
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(keras.optimizers.SGD(0.1), "mse")
    return model


def _fit(model, epochs, callbacks):
    return model.fit(X, Y, epochs=epochs, batch_size=4, verbose=0, callbacks=callbacks)


def _two_backups(folder):
    """Backups after epochs 1 and 2 (as a run killed before removing the older one)."""
    backup = SafeBackupAndRestore(folder, delete_at_end=False)
    _fit(_model(), 1, [backup])
    kept = os.path.join(folder, "kept")
    shutil.copytree(os.path.join(folder, "epoch_000001"), kept)
    _fit(_model(), 2, [SafeBackupAndRestore(folder, delete_at_end=False)])
    os.rename(kept, os.path.join(folder, "epoch_000001"))
    return os.path.join(folder, "epoch_000002")


def test_truncated_backup_weights_are_skipped_with_a_warning_naming_them(tmp_path):
    newest = _two_backups(str(tmp_path))
    weights = os.path.join(newest, "state.weights.h5")
    with open(weights, "r+b") as file:
        file.truncate(os.path.getsize(weights) // 2)  # the disk filled mid-write
    backup = SafeBackupAndRestore(str(tmp_path))
    with pytest.warns(UserWarning, match=r"Skipping the training backup .*epoch_000002"):
        history = _fit(_model(), 3, [backup])
    assert backup.restored_from.endswith("epoch_000001")
    assert len(history.history["loss"]) == 2  # epochs 2 and 3 of 3


def test_truncated_backup_metadata_is_skipped_with_a_warning_naming_it(tmp_path):
    newest = _two_backups(str(tmp_path))
    with open(os.path.join(newest, "training_metadata.json"), "w") as file:
        file.write('{"epo')
    with pytest.warns(UserWarning, match=r"epoch_000002.*JSONDecodeError"):
        history = _fit(_model(), 3, [SafeBackupAndRestore(str(tmp_path))])
    assert len(history.history["loss"]) == 2


def test_backup_interrupted_mid_write_keeps_the_previous_good_one(tmp_path, monkeypatch):
    model = _model()
    backup = SafeBackupAndRestore(str(tmp_path), delete_at_end=False)
    _fit(model, 1, [backup])
    expected = [w.copy() for w in model.get_weights()]

    def full_disk(path, *args, **kwargs):
        open(path, "wb").write(b"\x89HDF")  # a few bytes, then the disk is full
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(model, "save_weights", full_disk)
    with pytest.raises(OSError, match="No space left"):
        _fit(model, 2, [backup])
    assert sorted(os.listdir(tmp_path)) == ["epoch_000001"]  # no partial left behind
    monkeypatch.undo()
    fresh = _model()
    resume = SafeBackupAndRestore(str(tmp_path))
    fresh.fit(X, Y, epochs=1, verbose=0, callbacks=[resume, _Freeze()])
    for restored, saved in zip(fresh.get_weights(), expected):
        np.testing.assert_array_equal(restored, saved)


class _Freeze(keras.callbacks.Callback):
    """Stops training before any step, to look at what was restored."""

    def on_train_begin(self, logs=None):
        self.model.stop_training = True


def test_checkpoint_that_fails_mid_write_leaves_the_previous_one_whole(tmp_path, monkeypatch):
    path = str(tmp_path / "model.keras")
    model = _model()
    _fit(model, 1, [AtomicModelCheckpoint(path)])
    before = open(path, "rb").read()

    def full_disk(target, *args, **kwargs):
        open(target, "wb").write(b"PK")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(model, "save", full_disk)
    with pytest.raises(OSError):
        _fit(model, 1, [AtomicModelCheckpoint(path)])
    assert open(path, "rb").read() == before
    assert os.listdir(tmp_path) == ["model.keras"]
    keras.models.load_model(path)  # still a valid model


def test_unwritable_export_path_is_refused_before_training(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    message = r"`--export` must be a folder path whose parent can be written.*a_file/served"
    with pytest.raises(RunFolderError, match=message):
        check_export_path(str(blocker / "served"))
    train_nmt = _load_example("train_nmt")
    argv = ["--output-dir", str(tmp_path / "run"), "--export", str(blocker / "served")]
    with pytest.raises(SystemExit, match=r"--export.*a_file/served"):
        train_nmt.main(argv)  # fails in well under a second: nothing was loaded or trained
    assert not (tmp_path / "run" / "metrics.json").exists()


def test_reused_output_dir_with_the_same_arguments_is_resumed(tmp_path):
    assert prepare_run_folder(str(tmp_path), {"epochs": 2, "dataset": "builtin"}) == "new"
    (tmp_path / "backup").mkdir()
    assert prepare_run_folder(str(tmp_path), {"dataset": "builtin", "epochs": 2}) == "resume"
    assert (tmp_path / "backup").exists()


def test_reused_output_dir_with_other_arguments_is_refused_naming_them(tmp_path):
    prepare_run_folder(str(tmp_path), {"epochs": 2, "dataset": "builtin"})
    with pytest.raises(RunFolderError, match=r"epochs=2 there, epochs=5 now.*--overwrite"):
        prepare_run_folder(str(tmp_path), {"epochs": 5, "dataset": "builtin"})
    train_vit = _load_example("train_vit")
    run = str(tmp_path / "vit")
    os.makedirs(run)
    open(os.path.join(run, "metrics.json"), "w").write("{}")  # a run from before the record
    with pytest.raises(SystemExit, match="arguments are not recorded"):
        train_vit.main(["--output-dir", run, "--epochs", "1"])


def test_overwrite_empties_an_output_dir_of_another_run(tmp_path):
    prepare_run_folder(str(tmp_path), {"epochs": 2})
    (tmp_path / "rollout_0.png").write_text("old")
    assert prepare_run_folder(str(tmp_path), {"epochs": 3}, overwrite=True) == "overwrite"
    assert sorted(os.listdir(tmp_path)) == ["run_arguments.json"]
    assert json.load(open(tmp_path / "run_arguments.json")) == {"epochs": 3}


def test_export_replaces_the_old_folder_whole_leaving_no_stale_files(tmp_path):
    target = str(tmp_path / "served")
    replace_folder(target, lambda folder: open(os.path.join(folder, "old.pb"), "w").close())

    def failing(folder):
        open(os.path.join(folder, "half.pb"), "w").close()
        raise OSError("disk full")

    with pytest.raises(OSError):
        replace_folder(target, failing)
    assert os.listdir(target) == ["old.pb"]  # a failed export keeps the previous one
    replace_folder(target, lambda folder: open(os.path.join(folder, "new.pb"), "w").close())
    assert os.listdir(target) == ["new.pb"]
    assert os.listdir(tmp_path) == ["served"]


def _load_example(name):
    return load_example(name, "_reliability")
