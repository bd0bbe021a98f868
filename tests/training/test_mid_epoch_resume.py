"""Epochs of a fixed number of steps, backups within them, and runs resumed at the backed-up step."""

import argparse
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import time
import warnings

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_attention.callbacks.safe_backup import SafeBackupAndRestore
from keras_attention.callbacks.safe_backup import backup_status
from keras_attention.tasks.training_run import TrainingRun
from keras_attention.training.resumable_fit import fit_resuming
from keras_attention.training.run_lock import release_run_lock

ROOT = pathlib.Path(__file__).resolve().parents[2]
RUN = pathlib.Path(__file__).with_name("resume_process.py")
sys.path.insert(0, str(RUN.parent))

from resume_process import tiny_data  # noqa: E402
from resume_process import tiny_model  # noqa: E402

FIRST_STEP_LINE = re.compile(r"(?m)^first training step done (\d+\.\d) s after the run started$")


def _schedule_rate(step):
    """The learning rate of `tiny_model`'s schedule at an optimizer step."""
    return 0.1 * (1 - step / 100)


def _steps(model):
    return int(keras.ops.convert_to_numpy(model.optimizer.iterations))


class _Stop(Exception):
    """Stands for a kill at a chosen optimizer step."""


class _StopAtStep(keras.callbacks.Callback):
    def __init__(self, step):
        super().__init__()
        self.step = step

    def on_train_batch_end(self, batch, logs=None):
        if _steps(self.model) == self.step:
            raise _Stop


class _Record(keras.callbacks.Callback):
    """What the callbacks see: begin and end of training, epochs, batch numbers, rates."""

    def __init__(self):
        super().__init__()
        self.events, self.rates = [], []

    def on_train_begin(self, logs=None):
        self.events.append("begin")

    def on_epoch_begin(self, epoch, logs=None):
        self.events.append(f"epoch {epoch}")

    def on_train_batch_begin(self, batch, logs=None):
        self.rates.append(float(self.model.optimizer.learning_rate))

    def on_train_batch_end(self, batch, logs=None):
        self.events.append(batch)

    def on_train_end(self, logs=None):
        self.events.append("end")


def _fresh_model(seed=0):
    keras.utils.set_random_seed(seed)
    return tiny_model()


def test_a_fit_stopped_mid_epoch_trains_the_rest_of_it_then_the_other_epochs(tmp_path):
    reference = _fresh_model()
    fit_resuming(reference, tiny_data(), epochs=3, steps_per_epoch=4, verbose=0)

    first = _fresh_model()
    with pytest.raises(_Stop):
        fit_resuming(
            first,
            tiny_data(),
            epochs=3,
            steps_per_epoch=4,
            callbacks=[SafeBackupAndRestore(tmp_path, False, every_steps=2), _StopAtStep(7)],
            verbose=0,
        )
    assert os.listdir(tmp_path) == ["epoch_000001_step_000000002"]  # step 6 of 12
    assert backup_status(str(tmp_path))[:4] == (1, 2, 4, 6)

    second, record = _fresh_model(seed=1), _Record()  # a new process: other initial weights
    backup = SafeBackupAndRestore(tmp_path, False, every_steps=2)
    history = fit_resuming(
        second, tiny_data(), epochs=3, steps_per_epoch=4, callbacks=[backup, record], verbose=0
    )
    assert backup.resume_at == (1, 2)
    # One training for the callbacks: the rest of epoch 2 numbered from its step 3, then epoch 3.
    assert record.events == ["begin", "epoch 1", 2, 3, "epoch 2", 0, 1, 2, 3, "end"]
    assert len(history.history["loss"]) == 2 and second.history is history
    assert int(second.optimizer.iterations) == 12  # as many steps as the uninterrupted run
    np.testing.assert_allclose(record.rates, [_schedule_rate(step) for step in range(6, 12)])
    assert float(second.optimizer.learning_rate) == pytest.approx(_schedule_rate(12))
    for got, want in zip(second.get_weights(), reference.get_weights(), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    assert sorted(os.listdir(tmp_path)) == ["epoch_000003", "training_finished.json"]


def test_a_run_killed_after_a_step_backup_resumes_at_that_step(tmp_path):
    flags = ["--epochs", "3", "--steps-per-epoch", "5", "--backup-every", "3"]
    flags += ["--output-dir", str(tmp_path / "run")]
    killed = _run(tmp_path, 8, flags)  # backups at steps 3, 5 (epoch 1's end) and 8, then SIGKILL
    assert killed.returncode == -signal.SIGKILL, killed.stdout
    assert os.listdir(tmp_path / "run" / "backup") == ["epoch_000001_step_000000003"]

    resumed = _run(tmp_path, 0, flags)
    assert resumed.returncode == 0, resumed.stdout
    assert "resuming from its backup at step 3 of epoch 2 (of 5 steps)" in resumed.stdout
    assert len(FIRST_STEP_LINE.findall(resumed.stdout)) == 1
    record = json.loads((tmp_path / "record.json").read_text())
    assert record["resume_step"] == 8
    assert (record["start_iterations"], record["start_batch"]) == (8, 3)
    # The schedule goes on from step 8, not from 0; 15 steps in all, as without the kill.
    assert record["start_learning_rate"] == pytest.approx(_schedule_rate(8))
    assert record["epoch_steps"] == [[1, 2], [2, 5]]
    assert record["iterations"] == 15
    assert record["learning_rate"] == pytest.approx(_schedule_rate(15))
    reference = _fresh_model()
    fit_resuming(reference, tiny_data(), epochs=3, steps_per_epoch=5, verbose=0)
    for got, want in zip(record["weights"], reference.get_weights(), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5)


def _run(tmp_path, kill_at, flags):
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "KERAS_BACKEND": "tensorflow",
        "TF_CPP_MIN_LOG_LEVEL": "2",
        "CUDA_VISIBLE_DEVICES": "",
    }
    command = [sys.executable, str(RUN), str(tmp_path / "record.json"), str(kill_at), *flags]
    return subprocess.run(
        command,
        env=environment,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
    )


class _Clock:
    """A fake clock that a callback moves on by `seconds_per_step` after every step."""

    def __init__(self, seconds_per_step):
        self.now, self.seconds_per_step = 1000.0, seconds_per_step

    def __call__(self):
        return self.now


def test_backups_every_m_minutes_follow_the_clock(tmp_path):
    clock = _Clock(25.0)
    tick = keras.callbacks.LambdaCallback(
        on_train_batch_end=lambda batch, logs: setattr(clock, "now", clock.now + 25.0)
    )
    backup = SafeBackupAndRestore(tmp_path, False, every_seconds=60, clock=clock)
    seen = []
    look = keras.callbacks.LambdaCallback(
        on_train_batch_end=lambda batch, logs: seen.append(sorted(os.listdir(tmp_path)))
    )
    fit_resuming(
        tiny_model(),
        tiny_data(),
        epochs=1,
        steps_per_epoch=10,
        callbacks=[tick, backup, look],
        verbose=0,
    )
    # 25 s a step: a backup after steps 3, 6 and 9 (75 s each), the epoch's own at step 10.
    names = [names[0] if names else None for names in seen]
    expected = [None, None, *["epoch_000000_step_000000003"] * 3]
    expected += [*["epoch_000000_step_000000006"] * 3, *["epoch_000000_step_000000009"] * 2]
    assert names == expected
    assert sorted(os.listdir(tmp_path)) == ["epoch_000001", "training_finished.json"]

    stopped = _Clock(0.0)  # time stands still: only the epochs' ends are backed up
    folder = tmp_path / "still"
    backup = SafeBackupAndRestore(folder, False, every_seconds=60, clock=stopped)
    looks = []
    look = keras.callbacks.LambdaCallback(
        on_train_batch_end=lambda batch, logs: looks.append(os.path.isdir(folder))
    )
    fit_resuming(tiny_model(), tiny_data(), 1, 10, callbacks=[backup, look], verbose=0)
    assert looks == [False] * 10
    assert sorted(os.listdir(folder)) == ["epoch_000001", "training_finished.json"]


def _run_args(tmp_path, **flags):
    return argparse.Namespace(
        output_dir=str(tmp_path / "run"),
        export=None,
        overwrite=False,
        seed=0,
        mixed_precision=False,
        strategy="default",
        **flags,
    )


class _Counted:
    """A generator dataset of unknown length that counts the passes started over it."""

    def __init__(self, batches):
        self.batches, self.passes, self.produced = batches, 0, []

    def __call__(self):
        self.passes += 1
        for index in range(self.batches):
            self.produced.append(index)
            value = np.full((2, 3), index, "float32")
            yield value, value.sum(-1, keepdims=True)

    def dataset(self):
        spec = (tf.TensorSpec((2, 3), tf.float32), tf.TensorSpec((2, 1), tf.float32))
        return tf.data.Dataset.from_generator(self, output_signature=spec)


@pytest.mark.parametrize("batches, steps", [(3, 7), (10, 4)])
def test_steps_per_epoch_streams_the_training_data_round_and_round(tmp_path, batches, steps):
    run = TrainingRun(_run_args(tmp_path, epochs=3, steps_per_epoch=steps))
    train, record = _Counted(batches), _Record()
    assert run.steps_per_epoch(batches) == steps  # the flag wins over one pass
    run.fit(tiny_model(), train.dataset(), None, 3, 10.0, "", callbacks=[record], verbose=0)
    epochs = [event for event in record.events if isinstance(event, str) and "epoch" in event]
    assert epochs == ["epoch 0", "epoch 1", "epoch 2"]
    assert record.events.count(steps - 1) == 3 and record.events.count(steps) == 0
    assert len(record.rates) == 3 * steps
    # The data go on where the last epoch stopped, pass after pass.
    assert train.produced[: 3 * steps] == [i % batches for i in range(3 * steps)]
    release_run_lock(run.args.output_dir)


def test_no_pass_over_the_data_is_spent_counting_them(tmp_path):
    run = TrainingRun(_run_args(tmp_path, epochs=2))
    train, validation = _Counted(20), _Counted(3)
    with pytest.raises(ValueError, match=r"Pass the count.*--steps-per-epoch"):
        run.steps_per_epoch(train.dataset())  # its length is unknown: not counted
    steps = run.steps_per_epoch(2)
    model = tiny_model()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run.fit(model, train.dataset(), validation.dataset(), 2, 10.0, "", steps, verbose=0)
    assert not [w for w in caught if "ran out of data" in str(w.message)]
    assert int(model.optimizer.iterations) == 4
    assert train.passes == 1  # 4 of its 20 batches trained on, none counted beforehand
    assert validation.passes == 2  # one whole pass after each epoch, none to count it
    assert len(validation.produced) == 6
    release_run_lock(run.args.output_dir)


def test_steps_per_epoch_takes_a_count_or_a_dataset_of_known_length(tmp_path):
    run = TrainingRun(_run_args(tmp_path, epochs=1))
    assert run.steps_per_epoch(12) == 12
    assert run.steps_per_epoch(tf.data.Dataset.range(25).batch(5)) == 5
    for bad in (0, -3, 2.5, tf.data.Dataset.range(4).repeat()):
        with pytest.raises(ValueError, match="batches_per_pass"):
            run.steps_per_epoch(bad)
    release_run_lock(run.args.output_dir)


def test_the_first_step_line_comes_once_on_a_line_of_its_own(tmp_path, capsys):
    before = time.monotonic()
    run = TrainingRun(_run_args(tmp_path, epochs=2))
    model = tiny_model()
    run.fit(model, tiny_data(), tiny_data(), 2, 10.0, "", 5, verbose=1)  # with progress bars
    run.fit(model, tiny_data(), None, 3, 10.0, "", 5, verbose=1)  # the same run trains on
    elapsed = time.monotonic() - before
    printed = capsys.readouterr().out
    found = FIRST_STEP_LINE.findall(printed)
    assert len(found) == 1 and 0 <= float(found[0]) <= elapsed + 0.05
    assert printed.index("first training step done") < printed.index("Epoch 2/2")
    release_run_lock(run.args.output_dir)


def test_a_mirrored_run_resumes_mid_epoch_too(tmp_path):
    strategy = tf.distribute.MirroredStrategy(
        ["/cpu:0", "/cpu:1"], cross_device_ops=tf.distribute.ReductionToOneDevice()
    )

    def fit(callbacks):
        with strategy.scope():
            model = tiny_model()
        fit_resuming(model, tiny_data(), 2, 4, callbacks=callbacks, verbose=0)
        return model

    with pytest.raises(_Stop):
        fit([SafeBackupAndRestore(tmp_path, False, every_steps=1), _StopAtStep(6)])
    record, backup = _Record(), SafeBackupAndRestore(tmp_path, False)
    model = fit([backup, record])
    assert backup.resume_at == (1, 2)
    assert record.events == ["begin", "epoch 1", 2, 3, "end"]
    assert _steps(model) == 8
