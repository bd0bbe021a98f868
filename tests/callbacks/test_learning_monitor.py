"""LearningMonitor and prior_cross_entropy: warnings when training does not learn or diverges."""

import io
import math

import keras
import numpy as np
import pytest

from keras_attention.callbacks.learning_monitor import LearningMonitor
from keras_attention.losses.prior_cross_entropy import prior_cross_entropy


def _run(monitor, losses, key="val_loss"):
    for epoch, loss in enumerate(losses):
        monitor.on_epoch_end(epoch, {"loss": loss, key: loss})
    return monitor.warnings


def test_prior_cross_entropy_is_the_entropy_of_the_label_frequencies():
    labels = np.array([[1, 1, 1, 2, 0], [3, 0, 0, 0, 0]])
    p = np.array([3, 1, 1]) / 5
    assert prior_cross_entropy(labels, ignore=0) == pytest.approx(-(p * np.log(p)).sum())
    assert prior_cross_entropy([labels[:1], labels[1:]], ignore=0) == pytest.approx(
        prior_cross_entropy(labels, ignore=0)
    )
    assert prior_cross_entropy(np.arange(10)) == pytest.approx(math.log(10))
    assert prior_cross_entropy([7, 7, 7]) == 0.0


def test_prior_cross_entropy_is_what_a_model_without_input_learns():
    """A model that sees only a constant input converges to the prior's loss."""
    rng = np.random.default_rng(0)
    labels = rng.choice(4, size=2000, p=[0.6, 0.2, 0.15, 0.05])
    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(4)])
    model.compile(
        keras.optimizers.Adam(0.05),
        keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    history = model.fit(np.zeros((2000, 1)), labels, epochs=30, batch_size=500, verbose=0)
    assert history.history["loss"][-1] == pytest.approx(prior_cross_entropy(labels), abs=2e-3)


def test_prior_cross_entropy_rejects_bad_labels():
    with pytest.raises(ValueError, match=r"`labels` must hold integer labels. Received: .*float"):
        prior_cross_entropy(np.array([0.5, 1.5]))
    with pytest.raises(
        ValueError,
        match=r"`labels` must hold at least one label other than "
        r"ignore=0",
    ):
        prior_cross_entropy([0, 0], ignore=0)


def test_warns_once_when_the_loss_stays_at_the_baseline():
    stream = io.StringIO()
    monitor = LearningMonitor(baseline=3.5, patience=3, stream=stream, hints="Try X.")
    warnings = _run(monitor, [3.9, 3.52, 3.50, 3.51, 3.50, 3.49])
    assert len(warnings) == 1 and "not learning" in warnings[0]
    assert "after 3 epochs the best val_loss is 3.5000, not below 3.5000" in warnings[0]
    assert warnings[0].endswith("Try X.")
    assert stream.getvalue().count("WARNING:") == 1


def test_no_warning_when_learning_or_before_patience():
    assert _run(LearningMonitor(baseline=3.5, patience=3), [3.6, 2.0, 0.5, 0.1]) == []
    assert _run(LearningMonitor(baseline=3.5, patience=5), [3.5, 3.5, 3.5]) == []


def test_watches_the_training_loss_without_validation():
    monitor = LearningMonitor(baseline=1.0, patience=2)
    for epoch in range(2):
        monitor.on_epoch_end(epoch, {"loss": 1.0})
    assert len(monitor.warnings) == 1 and "best loss" in monitor.warnings[0]


def test_one_epoch_is_not_enough_to_judge():
    # A run of one epoch (the patience cut to the epochs) is never called not learning.
    assert _run(LearningMonitor(baseline=1.0, patience=1), [1.0]) == []
    # A second epoch without learning is.
    warnings = _run(LearningMonitor(baseline=1.0, patience=1), [1.0, 1.0])
    assert len(warnings) == 1 and "after 2 epochs the best val_loss is 1.0000" in warnings[0]


def test_the_warning_is_a_line_of_its_own_after_the_progress_bar(capsys):
    import sys

    x = np.zeros((64, 2), "float32")  # inputs that say nothing about the labels
    y = np.tile([0, 1], 32)
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(2)])
    model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    monitor = LearningMonitor(baseline=prior_cross_entropy(y), patience=2, stream=sys.stdout)
    model.fit(x, y, validation_split=0.25, epochs=2, verbose=1, callbacks=[monitor])
    lines = capsys.readouterr().out.splitlines()
    warned = [line for line in lines if "WARNING" in line]
    assert len(warned) == 1 and warned[0].startswith("WARNING: training is not learning")
    # Without a bar (one line an epoch, or no output), no empty line is added.
    stream = io.StringIO()
    monitor = LearningMonitor(baseline=prior_cross_entropy(y), patience=2, stream=stream)
    model.fit(x, y, epochs=2, verbose=2, callbacks=[monitor])
    assert stream.getvalue().startswith("WARNING: training is not learning")


@pytest.mark.parametrize("losses", [[1.0, float("nan")], [1.0, 2.0, 3.5], [1.0, float("inf")]])
def test_warns_when_training_diverges(losses):
    warnings = _run(LearningMonitor(baseline=10.0, patience=100), losses)
    assert len(warnings) == 1 and warnings[0].startswith("training diverges")


def test_works_inside_fit():
    stream = io.StringIO()
    x = np.zeros((64, 2), "float32")  # inputs that say nothing about the labels
    y = np.tile([0, 1], 32)
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(2)])
    model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    monitor = LearningMonitor(baseline=prior_cross_entropy(y), patience=2, stream=stream)
    model.fit(x, y, validation_split=0.25, epochs=3, verbose=0, callbacks=[monitor])
    assert "not learning" in stream.getvalue()


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"baseline": 0.0}, r"`baseline` must be a positive finite number. Received: baseline=0.0"),
        ({"baseline": float("nan")}, r"Received: baseline=nan"),
        (
            {"baseline": 1.0, "patience": 0},
            r"`patience` must be a positive integer. "
            r"Received: patience=0",
        ),
        (
            {"baseline": 1.0, "margin": 1.0},
            r"`margin` must be a number in \[0, 1\). "
            r"Received: margin=1.0",
        ),
        (
            {"baseline": 1.0, "divergence_factor": 1},
            r"`divergence_factor` must be a number "
            r"above 1. Received: divergence_factor=1",
        ),
    ],
)
def test_bad_arguments(arguments, message):
    with pytest.raises(ValueError, match=message):
        LearningMonitor(**arguments)
