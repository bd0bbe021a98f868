"""Training never loses work: atomic backups and checkpoints, paths checked before training.

Each test is named for the case it covers; tiny Dense models keep them fast.
"""

import argparse
import json
import os
import shutil

import keras
import numpy as np
import pytest
import tensorflow as tf
from example_scripts import load_example
from file_events import flushed_before
from file_events import needs_proc
from file_events import record_fsyncs_and_renames

from keras_attention.callbacks.atomic_checkpoint import AtomicModelCheckpoint
from keras_attention.callbacks.safe_backup import SafeBackupAndRestore
from keras_attention.training import run_setup
from keras_attention.training.command_line import backup_frequency
from keras_attention.training.export_replacement import replace_folder
from keras_attention.training.resumable_fit import fit_resuming
from keras_attention.training.run_folder import EXPORT_MARKER
from keras_attention.training.run_folder import RunFolderError
from keras_attention.training.run_folder import check_export_path
from keras_attention.training.run_folder import prepare_run_folder
from keras_attention.training.run_lock import release_run_lock

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


class _StopAfter(keras.callbacks.Callback):
    """Ends `fit` normally after an epoch, as early stopping does."""

    def __init__(self, epoch):
        super().__init__()
        self.epoch = epoch

    def on_epoch_end(self, epoch, logs=None):
        if epoch == self.epoch:
            self.model.stop_training = True


class _Interrupt(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        raise KeyboardInterrupt  # Ctrl-C after the first epoch's backup


def test_a_finished_fit_started_again_trains_no_epoch_and_keeps_its_weights(tmp_path):
    first = _model()
    _fit(first, 3, run_setup.training_callbacks(str(tmp_path)))
    trained = first.get_weights()
    assert (tmp_path / "backup").is_dir()  # kept: the run has results still to write
    second = _model()  # a new process after a failed export: other initial weights
    history = _fit(second, 3, run_setup.training_callbacks(str(tmp_path)))
    assert history.history.get("loss", []) == []  # fit went straight to its end
    for restored, saved in zip(second.get_weights(), trained, strict=True):
        np.testing.assert_array_equal(restored, saved)


def test_a_fit_that_stopped_early_is_not_trained_again_by_the_same_command(tmp_path):
    folder = str(tmp_path / "backup")
    history = _fit(_model(), 5, [SafeBackupAndRestore(folder, False), _StopAfter(1)])
    assert len(history.history["loss"]) == 2
    assert len(_fit(_model(), 5, [SafeBackupAndRestore(folder, False)]).history) == 0
    # Asked for another number of epochs, it trains on from the backup.
    assert len(_fit(_model(), 4, [SafeBackupAndRestore(folder, False)]).history["loss"]) == 2


def _run_args(tmp_path):
    return argparse.Namespace(
        output_dir=str(tmp_path / "run"),
        export=str(tmp_path / "served"),
        overwrite=False,
        strategy="default",
        epochs=2,
    )


def test_run_failing_at_export_resumes_at_the_end_of_training_saying_so(tmp_path, capsys):
    args = _run_args(tmp_path)
    run_setup.prepare_output(args)
    assert "a new run, training starts at epoch 1" in capsys.readouterr().out
    _fit(_model(), 2, run_setup.training_callbacks(args.output_dir))

    def full_disk(folder):
        open(os.path.join(folder, "saved_model.pb"), "wb").write(b"\x08")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        run_setup.finish_run(args, {"loss": 0.5}, full_disk)
    assert json.load(open(os.path.join(args.output_dir, "metrics.json"))) == {"loss": 0.5}
    assert os.listdir(os.path.join(args.output_dir, "backup"))  # kept for the rerun
    assert sorted(os.listdir(tmp_path)) == ["run"]  # no half export

    run_setup.prepare_output(args)  # the same command again
    assert "trained to its end (epoch 2): resuming from that backup, no epoch is trained again" in (
        capsys.readouterr().out
    )
    history = _fit(_model(), 2, run_setup.training_callbacks(args.output_dir))
    assert history.history == {}

    def export(folder):
        open(os.path.join(folder, "saved_model.pb"), "wb").write(b"\x08")

    run_setup.finish_run(args, {"loss": 0.5}, export)
    assert not os.path.exists(os.path.join(args.output_dir, "backup"))  # removed at the very end
    assert sorted(os.listdir(args.export)) == [EXPORT_MARKER, "saved_model.pb"]
    run_setup.prepare_output(args)  # once more: the backup is gone, the checkpoints are not
    printed = capsys.readouterr().out
    assert (
        "trained to epoch 2: restoring checkpoints/epoch_002.keras, no epoch is trained again"
        in printed
    )
    assert _fit(_model(), 2, run_setup.training_callbacks(args.output_dir)).history == {}
    release_run_lock(args.output_dir)


def test_more_epochs_continue_a_finished_run_from_its_newest_checkpoint(tmp_path, capsys):
    args = _run_args(tmp_path)
    run_setup.prepare_output(args)
    first = _model()
    _fit(first, 2, run_setup.training_callbacks(args.output_dir))
    trained = first.get_weights()
    run_setup.finish_run(args, {"loss": 0.5}, lambda folder: None)  # the backup is removed
    assert not os.path.exists(os.path.join(args.output_dir, "backup"))

    args.epochs = 4
    assert run_setup.prepare_output(args) == "continue"
    assert "now asked for epochs=4: restoring checkpoints/epoch_002.keras (no backup), " in (
        capsys.readouterr().out
    )
    assert json.load(open(os.path.join(args.output_dir, "run_arguments.json")))["epochs"] == 4
    second, starts = _model(), []
    record = keras.callbacks.LambdaCallback(
        on_train_begin=lambda logs: starts.append(second.get_weights())
    )
    history = _fit(second, 4, run_setup.training_callbacks(args.output_dir) + [record])
    assert len(history.history["loss"]) == 2  # epochs 3 and 4 only
    for restored, saved in zip(starts[0], trained, strict=True):
        np.testing.assert_array_equal(restored, saved)
    assert int(second.optimizer.iterations) == 8  # 2 steps an epoch, the count restored
    run_setup.finish_run(args, {"loss": 0.5}, lambda folder: None)
    assert run_setup.trained_steps(args.output_dir) == 8  # read from epoch_004.keras

    args.epochs = 3  # fewer than the 4 it holds now: refused, both counts named
    with pytest.raises(SystemExit, match=r"trained for 4 epochs \(epochs=4 there, epochs=3 now\)"):
        run_setup.prepare_output(args)
    args.epochs, args.dataset = 4, "another"  # anything else that changes is still refused
    with pytest.raises(SystemExit, match=r"dataset=None there, dataset='another' now"):
        run_setup.prepare_output(args)


def test_interrupted_run_says_from_which_epoch_it_resumes(tmp_path, capsys):
    args = _run_args(tmp_path)
    run_setup.prepare_output(args)
    with pytest.raises(KeyboardInterrupt):
        _fit(_model(), 3, run_setup.training_callbacks(args.output_dir) + [_Interrupt()])
    run_setup.prepare_output(args)
    assert "resuming from its backup after epoch 1, at epoch 2" in capsys.readouterr().out
    history = _fit(_model(), 3, run_setup.training_callbacks(args.output_dir))
    assert len(history.history["loss"]) == 2
    release_run_lock(args.output_dir)


class _InterruptAtStep(keras.callbacks.Callback):
    def __init__(self, step):
        super().__init__()
        self.step = step

    def on_train_batch_end(self, batch, logs=None):
        if int(self.model.optimizer.iterations) == self.step:
            raise KeyboardInterrupt  # Ctrl-C mid-epoch, after the step's backup


def _fit_steps(model, epochs, callbacks, steps_per_epoch=4):
    data = tf.data.Dataset.from_tensor_slices((X, Y)).batch(4)  # 2 batches a pass
    return fit_resuming(model, data, epochs, steps_per_epoch, callbacks=callbacks, verbose=0)


def test_interrupted_run_says_at_which_step_of_which_epoch_it_resumes(tmp_path, capsys):
    args = _run_args(tmp_path)
    run_setup.prepare_output(args)
    every_step = backup_frequency("1")
    callbacks = run_setup.training_callbacks(args.output_dir, every_step)
    with pytest.raises(KeyboardInterrupt):
        _fit_steps(_model(), 2, callbacks + [_InterruptAtStep(7)])
    assert run_setup.trained_steps(args.output_dir) == 7
    run_setup.prepare_output(args)
    printed = capsys.readouterr().out
    assert "resuming from its backup at step 3 of epoch 2 (of 4 steps)" in printed
    model = _model()
    history = _fit_steps(model, 2, run_setup.training_callbacks(args.output_dir, every_step))
    assert len(history.history["loss"]) == 1 and int(model.optimizer.iterations) == 8
    release_run_lock(args.output_dir)


def test_unreadable_mid_epoch_backup_is_skipped_for_the_previous_one(tmp_path):
    folder = str(tmp_path)
    with pytest.raises(KeyboardInterrupt):
        _fit_steps(_model(), 2, [SafeBackupAndRestore(folder, False), _Interrupt()])
    kept = tmp_path / "kept"
    shutil.copytree(tmp_path / "epoch_000001", kept)  # the backup after epoch 1 (step 4)
    with pytest.raises(KeyboardInterrupt):
        _fit_steps(
            _model(), 2, [SafeBackupAndRestore(folder, False, every_steps=2), _InterruptAtStep(7)]
        )
    os.rename(kept, tmp_path / "epoch_000001")  # as a kill before the older one was removed
    newest = tmp_path / "epoch_000001_step_000000002"
    with open(newest / "state.weights.h5", "r+b") as file:
        file.truncate(100)  # the disk filled mid-write
    backup, model = SafeBackupAndRestore(folder, False), _model()
    with pytest.warns(UserWarning, match=r"Skipping the training backup .*_step_000000002"):
        history = _fit_steps(model, 2, [backup])
    assert backup.resume_at == (1, 0) and backup.restored_from.endswith("epoch_000001")
    assert len(history.history["loss"]) == 1 and int(model.optimizer.iterations) == 8


@needs_proc
def test_checkpoint_is_flushed_to_disk_before_the_rename_that_publishes_it(tmp_path, monkeypatch):
    events = record_fsyncs_and_renames(monkeypatch)
    _fit(_model(), 1, [AtomicModelCheckpoint(str(tmp_path / "epoch_{epoch:03d}.keras"))])
    partial = next(path for kind, path in events if kind == "rename")
    assert os.path.basename(partial) == f".partial_{os.getpid()}_epoch_001.keras"
    before, after = flushed_before(events, partial)
    assert partial in before and str(tmp_path) in after


@needs_proc
def test_backup_is_flushed_to_disk_before_the_rename_that_publishes_it(tmp_path, monkeypatch):
    events = record_fsyncs_and_renames(monkeypatch)
    _fit(_model(), 1, [SafeBackupAndRestore(str(tmp_path), delete_at_end=False)])
    partial = next(path for kind, path in events if kind == "rename")
    before, after = flushed_before(events, partial)
    written = [
        os.path.join(partial, name) for name in ("state.weights.h5", "training_metadata.json")
    ]
    assert set(written + [partial]) <= before
    assert str(tmp_path) in after  # the backup folder's new entry


def test_backup_cleanup_leaves_a_live_writers_temporary_folder(tmp_path):
    live = tmp_path / f".partial_{os.getpid()}_1a2b3c4d"  # another run's backup in progress
    live.mkdir()
    _fit(_model(), 1, [SafeBackupAndRestore(str(tmp_path), delete_at_end=False)])
    assert live.exists()


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
    (tmp_path / "checkpoints").mkdir()  # it trained: a run that never did is started anew
    (tmp_path / "checkpoints" / "epoch_001.keras").write_text("")
    with pytest.raises(
        RunFolderError, match=r"dataset='builtin' there, dataset='tsv' now.*--overw"
    ):
        prepare_run_folder(str(tmp_path), {"epochs": 5, "dataset": "tsv"})
    train_vit = _load_example("train_vit")
    run = str(tmp_path / "vit")
    os.makedirs(run)
    open(os.path.join(run, "metrics.json"), "w").write("{}")  # a run from before the record
    with pytest.raises(SystemExit, match="arguments are not recorded"):
        train_vit.main(["--output-dir", run, "--epochs", "1"])


def test_overwrite_empties_an_output_dir_of_another_run(tmp_path):
    """Another run's folder (its `run_arguments.json` differs) is emptied; see also
    test_reliability_output_folders.py for a folder that is not a run."""
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
    assert sorted(os.listdir(target)) == [EXPORT_MARKER, "old.pb"]  # a failed export keeps it
    replace_folder(target, lambda folder: open(os.path.join(folder, "new.pb"), "w").close())
    assert sorted(os.listdir(target)) == [EXPORT_MARKER, "new.pb"]
    assert os.listdir(tmp_path) == ["served"]


def _load_example(name):
    return load_example(name, "_reliability")
