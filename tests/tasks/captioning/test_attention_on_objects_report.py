"""The attention-on-objects line and metrics, against the summary they report."""

import io
import json

import numpy as np
import pytest

from keras_attention.tasks.captioning.attention_on_objects import attention_on_objects_summary
from keras_attention.tasks.captioning.attention_on_objects_report import attention_on_objects_report


def test_report_is_the_summary_in_a_line_and_json_ready_metrics():
    rng = np.random.default_rng(0)
    left, right = np.zeros((8, 8), bool), np.zeros((8, 8), bool)
    left[:, :4], right[2:6, 4:] = True, True
    objects = [[{"shape": "circle", "mask": left}, {"shape": "square", "mask": right}]] * 3
    words = [["a", "circle", "a", "square"], ["a", "square"], ["a"]]
    attention = rng.dirichlet(np.ones(16), size=(3, 4)).reshape(3, 4, 4, 4)
    stream = io.StringIO()
    metrics = attention_on_objects_report(words, attention, objects, stream=stream)
    summary = attention_on_objects_summary(words, attention, objects)
    assert stream.getvalue() == (
        f"attention on the named object: {summary['fraction']:.3f} of the mass "
        f"(chance {summary['chance']:.3f}) over 3 of 6 objects\n"
    )
    assert metrics == {
        "attention_on_object": summary["fraction"],
        "attention_on_object_chance": summary["chance"],
        "objects_measured": 3,
    }
    # By hand: the circle covers half of the image, the square a quarter (16 of 64 pixels);
    # measured: the circle and the square of scene 0, the square of scene 1.
    assert summary["chance"] == pytest.approx(np.mean([0.5, 0.25, 0.25]))
    json.dumps(metrics, allow_nan=False)


def test_nothing_measured_gives_none_not_nan(capsys):
    objects = [[{"shape": "circle", "mask": np.ones((4, 4), bool)}]]
    metrics = attention_on_objects_report([["a"]], np.ones((1, 1, 2, 2)) / 4, objects, stream=False)
    assert capsys.readouterr().out == ""
    assert metrics == {
        "attention_on_object": None,
        "attention_on_object_chance": None,
        "objects_measured": 0,
    }
    json.dumps(metrics, allow_nan=False)
