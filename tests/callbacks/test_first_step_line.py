"""FirstStepLine: one line, once, saying how long after the start the first step was done."""

import io
import sys

import keras
import numpy as np

from keras_attention.callbacks.first_step_line import FirstStepLine


def _model():
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    return model


def test_the_line_counts_from_the_start_and_comes_once_for_every_fit():
    clock = iter([112.34, 500.0])  # the end of the first step, then anything later
    stream = io.StringIO()
    line = FirstStepLine(100.0, clock=lambda: next(clock), stream=stream)
    model = _model()
    for _ in range(2):  # a run that fits twice is one run
        model.fit(np.ones((8, 2)), np.ones(8), batch_size=2, epochs=2, verbose=0, callbacks=[line])
    assert stream.getvalue() == "first training step done 12.3 s after the run started\n"
    assert abs(line.seconds - 12.34) < 1e-9


def test_the_line_is_printed_before_the_progress_bar_draws(monkeypatch):
    printed = io.StringIO()
    monkeypatch.setattr(sys, "stdout", printed)
    line = FirstStepLine(0.0, clock=lambda: 3.0)
    _model().fit(np.ones((4, 2)), np.ones(4), batch_size=2, epochs=1, verbose=1, callbacks=[line])
    text = printed.getvalue()
    assert text.startswith("first training step done 3.0 s after the run started\n"), text
    assert "2/2" in text  # the bar came after, on lines of its own
