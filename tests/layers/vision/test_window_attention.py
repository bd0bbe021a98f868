"""WindowAttention against a NumPy window-by-window reference, and the shared harness."""

import numpy as np
import pytest
from layer_harness import LayerSpec
from layer_harness import harness_test
from numpy_swin import bias_table_row
from numpy_swin import window_attention

from keras_attention import layers
from keras_attention.layers.vision.window_attention import WindowAttention
from keras_attention.layers.vision.window_attention import relative_position_index

RNG = np.random.default_rng(5)


def _normal(*shape, scale=1.0):
    return (RNG.normal(size=shape) * scale).astype("float32")


def randomized(layer):
    """Random weights everywhere (the bias table starts near 0), returned as NumPy."""
    for variable in layer.weights:
        variable.assign(_normal(*variable.shape, scale=0.5))
    return {
        "qkv_kernel": np.asarray(layer.qkv.kernel),
        "qkv_bias": np.asarray(layer.qkv.bias),
        "table": np.asarray(layer.relative_position_bias),
        "out_kernel": np.asarray(layer.output_projection.kernel),
        "out_bias": np.asarray(layer.output_projection.bias),
    }


def test_is_exported():
    assert layers.WindowAttention is WindowAttention


@pytest.mark.parametrize("window", [1, 2, 3, 7])
def test_relative_position_index_is_the_table_row_of_each_offset(window):
    cells = [(r, c) for r in range(window) for c in range(window)]
    expected = [[bias_table_row(q, k, window) for k in cells] for q in cells]
    index = relative_position_index(window)
    np.testing.assert_array_equal(index, expected)
    # Every offset has its own row, and pairs with the same offset share it.
    assert len(np.unique(index)) == (2 * window - 1) ** 2


@pytest.mark.parametrize("shape,window,heads", [((2, 4, 6, 8), 2, 2), ((1, 6, 3, 6), 3, 3)])
def test_matches_the_numpy_reference(shape, window, heads):
    layer = WindowAttention(num_heads=heads, window_size=window)
    x = _normal(*shape)
    layer.build(shape)
    weights = randomized(layer)
    out, scores = layer(x, return_attention_scores=True)
    expected_out, expected_scores = window_attention(x.astype("float64"), weights, window, heads)
    np.testing.assert_allclose(np.asarray(out), expected_out, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(scores), expected_scores, rtol=1e-4, atol=1e-5)


def test_mask_hides_keys_in_every_image():
    layer = WindowAttention(num_heads=2, window_size=2)
    shape = (3, 4, 4, 4)
    x = _normal(*shape)
    layer.build(shape)
    weights = randomized(layer)
    mask = RNG.random((4, 4, 4)) < 0.5
    mask[:, np.arange(4), np.arange(4)] = True  # every query sees itself
    out, scores = layer(x, attention_mask=mask, return_attention_scores=True)
    expected_out, expected_scores = window_attention(
        x.astype("float64"), weights, 2, 2, visible=lambda w, i, j: mask[w, i, j]
    )
    np.testing.assert_allclose(np.asarray(out), expected_out, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(scores), expected_scores, atol=1e-5)
    assert np.all(np.asarray(scores)[:, ~mask[:, None].repeat(2, 1)] == 0)


def test_a_token_outside_the_window_changes_nothing():
    layer = WindowAttention(num_heads=1, window_size=2)
    x = _normal(1, 4, 4, 4)
    changed = x.copy()
    changed[0, 3, 3] += 10.0  # in the bottom-right window only
    difference = np.abs(np.asarray(layer(changed)) - np.asarray(layer(x))).sum(-1)[0]
    assert np.all(difference[:2] == 0) and np.all(difference[:, :2] == 0)
    assert np.all(difference[2:, 2:] > 0)


@pytest.mark.parametrize(
    "kwargs,argument",
    [
        ({"num_heads": 0, "window_size": 2}, "num_heads"),
        ({"num_heads": 2, "window_size": -1}, "window_size"),
        ({"num_heads": 2, "window_size": 2, "dropout": 1.0}, "dropout"),
        ({"num_heads": 2, "window_size": 2, "use_bias": "yes"}, "use_bias"),
    ],
)
def test_bad_arguments_name_themselves(kwargs, argument):
    with pytest.raises(ValueError, match=argument):
        WindowAttention(**kwargs)


def test_bad_maps_say_what_is_wrong():
    with pytest.raises(ValueError, match="height=5, window_size=2"):
        WindowAttention(num_heads=1, window_size=2)(np.zeros((1, 5, 4, 2)))
    with pytest.raises(ValueError, match="channels=6, num_heads=4"):
        WindowAttention(num_heads=4, window_size=2)(np.zeros((1, 4, 4, 6)))
    with pytest.raises(ValueError, match="a feature map"):
        WindowAttention(num_heads=1, window_size=2)(np.zeros((1, 4, 2)))


_MAP = RNG.normal(size=(2, 4, 8, 8)).astype("float32")

SPECS = [
    LayerSpec("window_attention", WindowAttention, {"num_heads": 2, "window_size": 4}, [_MAP]),
    LayerSpec(
        "window_attention_scores_dropout",
        WindowAttention,
        {"num_heads": 4, "window_size": 2, "dropout": 0.1, "seed": 1, "use_bias": False},
        [_MAP],
        call_kwargs={"return_attention_scores": True},
    ),
]

test_harness = harness_test(SPECS)
