"""A run's recorded training time and warnings survive its restarts, never replaced by a rerun's."""

import argparse
import json
import time

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_attention.callbacks.safe_backup import read_backup_metadata
from keras_attention.tasks.training_run import TrainingRun

EPOCH_SECONDS = 0.3  # each epoch sleeps this long, so that the times are measurable


class _SlowEpochs(keras.callbacks.Callback):
    def __init__(self, interrupt_at_epoch=None):
        super().__init__()
        self.interrupt_at_epoch = interrupt_at_epoch

    def on_epoch_begin(self, epoch, logs=None):
        if epoch == self.interrupt_at_epoch:
            raise KeyboardInterrupt
        time.sleep(EPOCH_SECONDS)


def _args(folder):
    return argparse.Namespace(
        output_dir=str(folder), export=None, overwrite=False, seed=0,
        mixed_precision=False, strategy="default", epochs=2,
    )  # fmt: skip


def _fit(folder, interrupt_at_epoch=None):
    run = TrainingRun(_args(folder))
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    data = tf.data.Dataset.from_tensor_slices((np.ones((4, 2)), np.ones(4))).batch(2)
    callbacks = [_SlowEpochs(interrupt_at_epoch)]
    run.fit(model, data, None, 2, 1.0, "", 2, callbacks=callbacks, verbose=0)
    return run


def test_rerunning_a_finished_run_keeps_its_training_seconds(tmp_path):
    first = _fit(tmp_path)
    assert first.train_seconds >= 2 * EPOCH_SECONDS
    first.finish(first.metrics(loss=0.5), None)
    recorded = json.loads((tmp_path / "metrics.json").read_text())["train_seconds"]
    assert recorded >= 2 * EPOCH_SECONDS

    again = _fit(tmp_path)  # trained to its end: no epoch is trained again
    assert recorded <= again.train_seconds < recorded + 2 * EPOCH_SECONDS
    again.finish(again.metrics(loss=0.5), None)
    rewritten = json.loads((tmp_path / "metrics.json").read_text())["train_seconds"]
    assert rewritten >= recorded


def test_a_resumed_run_adds_the_seconds_its_backup_recorded(tmp_path):
    with pytest.raises(SystemExit):  # Ctrl-C as the second epoch begins
        _fit(tmp_path, interrupt_at_epoch=1)
    backup = next((tmp_path / "backup").iterdir())
    before = read_backup_metadata(str(backup))["train_seconds"]
    assert before >= EPOCH_SECONDS

    resumed = _fit(tmp_path)  # trains the second epoch only
    assert resumed.train_seconds >= before + EPOCH_SECONDS


def test_a_rerun_keeps_the_warnings_the_run_recorded(tmp_path):
    first = _fit(tmp_path)
    warning = "loss 1.00 after epoch 2 is still the baseline's"
    first.finish(first.metrics(loss=0.5) | {"not_learning_warnings": [warning]}, None)

    again = _fit(tmp_path)
    assert again.metrics(loss=0.5)["not_learning_warnings"] == [warning]


def test_a_damaged_metrics_file_is_passed_over(tmp_path):
    first = _fit(tmp_path)
    first.finish(first.metrics(loss=0.5), None)
    (tmp_path / "metrics.json").write_text('{"train_seconds": "long"')

    again = _fit(tmp_path)
    assert again.train_seconds < EPOCH_SECONDS  # only this start's time is known
    assert again.metrics(loss=0.5)["not_learning_warnings"] == []
