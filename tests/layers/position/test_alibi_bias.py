"""AlibiBias against keras-hub and against the slopes of Press et al. in NumPy."""

import math

import keras
import keras_hub
import numpy as np
import pytest
import tensorflow as tf
from layer_harness import LayerSpec
from layer_harness import assert_docstring_examples_pass
from layer_harness import harness_test

from keras_attention.layers.position import alibi_bias
from keras_attention.layers.position.alibi_bias import AlibiBias
from keras_attention.layers.position.alibi_bias import alibi_slopes

RNG = np.random.default_rng(5)


def numpy_slopes(num_heads, alibi_bias_max=8.0):
    """Press et al.: a geometric sequence for 2^k heads; else interleave the next power."""

    def geometric(n):
        ratio = 2.0 ** (-alibi_bias_max / n)
        return [ratio ** (h + 1) for h in range(n)]

    if math.log2(num_heads) == int(math.log2(num_heads)):
        return np.array(geometric(num_heads))
    lower = 2 ** int(math.log2(num_heads))
    between = geometric(2 * lower)[::2][: num_heads - lower]
    return np.array(geometric(lower) + between)


def numpy_alibi(num_heads, query_positions, key_length, alibi_bias_max=8.0):
    """(H, Tq, Tk): -slope * |i - j|, one query row at a time."""
    slopes = numpy_slopes(num_heads, alibi_bias_max)
    bias = np.zeros((num_heads, len(query_positions), key_length))
    for row, i in enumerate(query_positions):
        for j in range(key_length):
            bias[:, row, j] = -slopes * abs(i - j)
    return bias


def _softmax(x, mask):
    x = np.where(mask, x, -np.inf)
    x = np.exp(x - x.max(-1, keepdims=True))
    return x / x.sum(-1, keepdims=True)


SPECS = [
    LayerSpec(
        "scores",
        AlibiBias,
        {"alibi_bias_max": 6},
        inputs=[RNG.normal(size=(2, 3, 4, 5)).astype("float32")],
        dynamic_axes=[(2, 3)],
        trainable=False,
    ),
]

test_harness = harness_test(SPECS)


@pytest.mark.parametrize("num_heads", [1, 2, 3, 5, 8, 12, 14])
@pytest.mark.parametrize("alibi_bias_max", [8, 6, 12])
def test_slopes_match_numpy_reference(num_heads, alibi_bias_max):
    np.testing.assert_allclose(
        alibi_slopes(num_heads, alibi_bias_max), numpy_slopes(num_heads, alibi_bias_max), rtol=1e-12
    )


@pytest.mark.parametrize("num_heads", [4, 8, 3, 6, 12, 14])
@pytest.mark.parametrize("alibi_bias_max", [8, 5])
def test_matches_keras_hub_on_the_same_scores(num_heads, alibi_bias_max):
    scores = RNG.normal(size=(2, num_heads, 5, 7)).astype("float32")
    ours = AlibiBias(alibi_bias_max=alibi_bias_max)(scores)
    theirs = keras_hub.layers.AlibiBias(alibi_bias_max=alibi_bias_max)(scores)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6, atol=1e-6)


def test_called_on_scores_adds_the_slope_times_distance_to_the_last_key():
    scores = RNG.normal(size=(1, 3, 2, 4)).astype("float32")
    got = np.asarray(AlibiBias()(scores))
    slopes = numpy_slopes(3)
    expected = scores + slopes[None, :, None, None] * (np.arange(4) - 3.0)[None, None, None, :]
    np.testing.assert_allclose(got, expected, atol=1e-6)


@pytest.mark.parametrize("num_heads", [4, 6])
def test_bias_matches_numpy_reference_with_an_offset(num_heads):
    got = np.asarray(AlibiBias().bias(num_heads, query_length=3, key_length=9, query_offset=4))
    assert got.shape == (1, num_heads, 3, 9)
    np.testing.assert_allclose(got[0], numpy_alibi(num_heads, [4, 5, 6], 9), atol=1e-6)


def test_bias_and_keras_hub_give_the_same_causal_softmax():
    # keras-hub's bias differs from ALiBi's by a constant per query row.
    scores = RNG.normal(size=(2, 4, 6, 6)).astype("float32")
    layer = AlibiBias()
    causal = np.tril(np.ones((6, 6), bool))
    hub = _softmax(np.asarray(keras_hub.layers.AlibiBias()(scores), "float64"), causal)
    ours = _softmax(scores + np.asarray(layer.bias(4, 6, 6), "float64"), causal)
    np.testing.assert_allclose(ours, hub, atol=1e-6)


def test_bias_with_tensor_lengths_under_xla():
    layer = AlibiBias()

    @tf.function(jit_compile=True)
    def bias(offset):
        return layer.bias(2, 1, 5, query_offset=offset)

    got = np.asarray(bias(np.int32(3)))
    np.testing.assert_allclose(got[0], numpy_alibi(2, [3], 5), atol=1e-6)


@pytest.mark.parametrize("policy", ["float16", "bfloat16", "mixed_float16"])
def test_lower_precision_dtypes(policy):
    layer = AlibiBias(dtype=policy)
    scores = np.zeros((1, 8, 4, 4), "float32")
    compute = keras.DTypePolicy(policy).compute_dtype
    assert keras.backend.standardize_dtype(layer(scores).dtype) == compute
    bias = layer.bias(8, 4, 4)
    assert keras.backend.standardize_dtype(bias.dtype) == compute
    atol = 1e-2 if "bfloat16" in policy else 1e-3
    expected = numpy_alibi(8, range(4), 4)
    np.testing.assert_allclose(np.asarray(keras.ops.cast(bias, "float32"))[0], expected, atol=atol)


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="alibi_bias_max"):
        AlibiBias(alibi_bias_max=0)
    with pytest.raises(ValueError, match="attention_scores"):
        AlibiBias()(np.zeros((2, 3, 4), "float32"))
    with pytest.raises(ValueError, match="num_heads"):
        AlibiBias().bias(0, 3, 3)
    with pytest.raises(ValueError, match="num_heads"):
        alibi_slopes(2.5)


def test_docstring_examples():
    assert_docstring_examples_pass(alibi_bias)
