"""The run set-up every training script shares: flags, precision, strategy, callbacks, metrics."""

import argparse
import json
import os
import pathlib

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_attention.training import run_setup
from keras_attention.training.command_line import BackupFrequency
from keras_attention.training.command_line import add_common_arguments


def test_common_flags():
    parser = add_common_arguments(
        argparse.ArgumentParser(), epochs=2, batch_size=8, output_dir="out"
    )
    args = parser.parse_args([])
    assert (args.dataset, args.epochs, args.batch_size, args.output_dir) == ("builtin", 2, 8, "out")
    assert (args.export, args.strategy, args.mixed_precision) == (None, "default", False)
    args = parser.parse_args(
        [
            "--dataset",
            "cifar10",
            "--epochs",
            "3",
            "--batch-size",
            "4",
            "--output-dir",
            "o",
            "--export",
            "e",
            "--strategy",
            "mirrored",
            "--mixed-precision",
        ]
    )
    assert (args.dataset, args.epochs, args.batch_size, args.export) == ("cifar10", 3, 4, "e")
    assert args.strategy == "mirrored" and args.mixed_precision
    assert parser.parse_args(["--strategy", "multiworker"]).strategy == "multiworker"
    assert parser.parse_args(["--strategy", "tpu"]).strategy == "tpu"
    assert args.steps_per_epoch is None  # one pass over the training data
    assert parser.parse_args([]).backup_every == BackupFrequency(seconds=1800.0)
    args = parser.parse_args(["--steps-per-epoch", "1200", "--backup-every", "2h"])
    assert (args.steps_per_epoch, args.backup_every) == (1200, BackupFrequency(seconds=7200.0))
    for text, expected in (("500", (500, None)), ("90s", (None, 90.0)), ("epoch", (None, None))):
        assert parser.parse_args(["--backup-every", text]).backup_every == expected
    bad_flags = (["--steps-per-epoch", "0"], ["--backup-every", "soon"], ["--backup-every", "0"])
    for bad in (["--strategy", "gpu"], ["--epochs", "0"], *bad_flags):
        with pytest.raises(SystemExit):
            parser.parse_args(bad)


def test_precision_and_strategy():
    assert run_setup.configure_precision(True) == "mixed_bfloat16"  # no GPU in the tests
    assert keras.config.dtype_policy().name == "mixed_bfloat16"
    assert run_setup.configure_precision(False) == "float32"
    assert isinstance(run_setup.make_strategy("mirrored"), tf.distribute.MirroredStrategy)
    assert run_setup.make_strategy("default") is tf.distribute.get_strategy()
    assert run_setup.jit_compile_for(tf.distribute.get_strategy())
    # XLA cannot run replicas on several logical CPUs (tests/conftest.py makes two).
    assert not run_setup.jit_compile_for(tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]))
    assert run_setup.jit_compile_for(tf.distribute.MirroredStrategy(["/cpu:0"]))
    with pytest.raises(
        ValueError,
        match=r"`strategy` must be one of \('default', 'mirrored', 'multiworker', 'tpu'\). "
        r"Received: strategy='gpu'",
    ):
        run_setup.make_strategy("gpu")


class _Interrupt(keras.callbacks.Callback):
    def __init__(self, epoch):
        super().__init__()
        self.epoch = epoch

    def on_epoch_begin(self, epoch, logs=None):
        if epoch == self.epoch:
            raise RuntimeError("interrupted")


def test_interrupted_training_resumes(tmp_path):
    x = np.random.default_rng(0).normal(size=(8, 3)).astype("float32")
    y = x.sum(-1, keepdims=True)

    def model():
        m = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
        m.compile(keras.optimizers.SGD(0.1), "mse")
        return m

    initial = model().get_weights()
    reference = model()
    reference.set_weights(initial)
    reference.fit(x, y, epochs=5, batch_size=8, verbose=0)

    first = model()
    first.set_weights(initial)
    callbacks = run_setup.training_callbacks(str(tmp_path))
    with pytest.raises(RuntimeError, match="interrupted"):
        first.fit(x, y, epochs=5, batch_size=8, verbose=0, callbacks=callbacks + [_Interrupt(3)])
    second = model()  # a new process builds a new model with other initial weights
    history = second.fit(
        x,
        y,
        epochs=5,
        batch_size=8,
        verbose=0,
        callbacks=run_setup.training_callbacks(str(tmp_path)),
    )
    assert len(history.history["loss"]) == 2  # only epochs 4 and 5 run again
    # Full-batch SGD: resuming gives exactly the weights of an uninterrupted run.
    for got, want in zip(second.get_weights(), reference.get_weights()):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    assert sorted(p.name for p in (tmp_path / "checkpoints").glob("*.keras")) == [
        f"epoch_00{i}.keras" for i in range(1, 6)
    ]


def test_tensorboard_callback_when_installed(tmp_path, monkeypatch):
    monkeypatch.setattr(run_setup, "tensorboard_available", lambda: True)
    names = [type(c).__name__ for c in run_setup.training_callbacks(str(tmp_path))]
    assert names == ["AtomicModelCheckpoint", "SafeBackupAndRestore", "TensorBoard"]
    assert run_setup.training_callbacks(str(tmp_path))[2].log_dir == str(tmp_path / "logs")
    monkeypatch.setattr(run_setup, "tensorboard_available", lambda: False)
    names = [type(c).__name__ for c in run_setup.training_callbacks(str(tmp_path))]
    assert names == ["AtomicModelCheckpoint", "SafeBackupAndRestore"]


def test_write_metrics(tmp_path):
    path = run_setup.write_metrics(str(tmp_path / "new"), {"accuracy": 0.25, "epochs": 2})
    assert json.loads(pathlib.Path(path).read_text()) == {"accuracy": 0.25, "epochs": 2}
    assert os.path.basename(path) == "metrics.json"
