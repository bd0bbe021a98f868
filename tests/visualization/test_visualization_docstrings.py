"""The `Example:` sections of the visualization docstrings run and give what they show."""

import doctest
import importlib

import pytest

MODULES = [
    "keras_attention.visualization.alignment",
    "keras_attention.visualization.confusion",
    "keras_attention.visualization.figures",
    "keras_attention.visualization.image_attention",
    "keras_attention.visualization.rollout",
    "keras_attention.visualization.explorer.captioning",
    "keras_attention.visualization.explorer.page",
    "keras_attention.visualization.explorer.translation",
    "keras_attention.visualization.explorer.image_classification",
    "keras_attention.visualization.explorer.words",
]


@pytest.mark.parametrize("module_name", MODULES)
def test_docstring_examples(module_name):
    module = importlib.import_module(module_name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
