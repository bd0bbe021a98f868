"""AlibiBias2D against the 2D ALiBi formula in NumPy, and in a Transformer encoder block."""

import keras
import numpy as np
import pytest
import tensorflow as tf
from layer_harness import LayerSpec
from layer_harness import assert_docstring_examples_pass
from layer_harness import harness_test
from numpy_transformer import encoder_block

from keras_attention.layers.position import alibi_bias_2d
from keras_attention.layers.position.alibi_bias_2d import AlibiBias2D
from keras_attention.layers.position.alibi_bias_2d import alibi_2d_slopes
from keras_attention.layers.transformer.transformer_encoder_block import TransformerEncoderBlock

RNG = np.random.default_rng(11)


def numpy_alibi_2d(grid_size, slopes):
    """(H, N, N): -slope * Euclidean distance between patches, one pair at a time."""
    rows, columns = grid_size
    patches = [(r, c) for r in range(rows) for c in range(columns)]  # row-major tokens
    bias = np.zeros((len(slopes), len(patches), len(patches)))
    for i, (r, c) in enumerate(patches):
        for j, (r2, c2) in enumerate(patches):
            distance = np.hypot(r - r2, c - c2)
            for head, slope in enumerate(slopes):
                bias[head, i, j] = -slope * distance
    return bias


SPECS = [
    LayerSpec(
        "scores",
        AlibiBias2D,
        {"grid_size": (2, 3), "slopes": [0.5, 0.25, 0.0]},
        inputs=[RNG.normal(size=(2, 3, 6, 6)).astype("float32")],
        dynamic_axes=[()],
        trainable=False,
    ),
]

test_harness = harness_test(SPECS)


def test_default_slopes_fall_by_four_a_head():
    assert alibi_2d_slopes(4) == [1.0, 0.25, 0.0625, 0.015625]


@pytest.mark.parametrize("grid_size", [(3, 4), (5, 2), (1, 1), (4, 4)])
@pytest.mark.parametrize("slopes", [None, [0.3, 2.0], [0.0]])
def test_bias_matches_numpy_reference(grid_size, slopes):
    layer = AlibiBias2D(grid_size, slopes=slopes)
    num_heads = 3 if slopes is None else len(slopes)
    expected = numpy_alibi_2d(grid_size, [1.0, 0.25, 0.0625] if slopes is None else slopes)
    got = np.asarray(layer.bias(num_heads))
    tokens = grid_size[0] * grid_size[1]
    assert got.shape == (1, num_heads, tokens, tokens)
    np.testing.assert_allclose(got[0], expected, atol=1e-6)
    assert not np.signbit(np.diagonal(got[0], axis1=-2, axis2=-1)).any()  # 0.0, never -0.0


def test_called_on_scores_adds_the_bias():
    scores = RNG.normal(size=(2, 2, 12, 12)).astype("float32")
    got = np.asarray(AlibiBias2D((3, 4))(scores))
    np.testing.assert_allclose(got, scores + numpy_alibi_2d((3, 4), [1.0, 0.25])[None], atol=1e-6)


def test_a_steep_head_attends_to_the_neighbourhood_a_gentle_one_to_the_image():
    # Equal scores: the softmax of the bias alone, from the patch at the centre of 7x7.
    bias = np.asarray(AlibiBias2D((7, 7)).bias(3))[0, :, 24]  # (heads, 49)
    weights = np.exp(bias) / np.exp(bias).sum(-1, keepdims=True)
    distance = numpy_alibi_2d((7, 7), [1.0])[0, 24] * -1
    near = distance <= 1.5  # the patch and its 8 neighbours
    two_rings = distance < 3  # and the patches two away
    assert weights[0][near].sum() > 0.55 and weights[0][two_rings].sum() > 0.85  # slope 1
    assert weights[2][near].sum() < 0.21  # slope 1/16: nearly uniform (9/49 = 0.18)


def test_block_with_the_bias_is_the_block_with_an_equivalent_mask():
    # A bias of 0 or -1e9 hides the same keys as a boolean mask, whose path is
    # checked against NumPy elsewhere; the bias path must agree with it.
    block = TransformerEncoderBlock(num_heads=2, intermediate_dim=16, norm_first=True)
    x = RNG.normal(size=(2, 6, 8)).astype("float32")
    distance = numpy_alibi_2d((2, 3), [1.0])[0] * -1
    near = distance <= 1.0  # (6, 6): each patch and its 4-neighbours
    bias = np.where(near, 0.0, -1e9).astype("float32")[None, None]  # (1, 1, 6, 6)
    with_bias = block(x, attention_bias=np.broadcast_to(bias, (1, 2, 6, 6)))
    with_mask = block(x, attention_mask=np.broadcast_to(near, (2, 6, 6)))
    np.testing.assert_allclose(np.asarray(with_bias), np.asarray(with_mask), atol=1e-5)
    # And the ALiBi bias does change the block's output.
    alibi = AlibiBias2D((2, 3)).bias(2)
    assert not np.allclose(np.asarray(block(x, attention_bias=alibi)), np.asarray(block(x)))


@pytest.mark.parametrize("norm_first", [False, True])
def test_block_with_the_bias_matches_numpy_block_with_the_formula(norm_first):
    # The bias in the NumPy block is the formula's, not the layer's.
    block = TransformerEncoderBlock(num_heads=2, intermediate_dim=16, norm_first=norm_first)
    x = RNG.normal(size=(2, 6, 8)).astype("float32")
    y, weights = block(x, attention_bias=AlibiBias2D((2, 3)).bias(2), return_attention_scores=True)
    bias = numpy_alibi_2d((2, 3), [1.0, 0.25])[None]  # (1, H, N, N)
    weights_in_order = [np.asarray(w, "float64") for w in block.get_weights()]
    expected_y, expected_weights = encoder_block(
        x.astype("float64"), weights_in_order, norm_first=norm_first, bias=bias
    )
    np.testing.assert_allclose(np.asarray(weights), expected_weights, atol=1e-5)
    np.testing.assert_allclose(np.asarray(y), expected_y, atol=1e-4)


def test_gradients_reach_the_block_weights_through_the_biased_attention():
    block = TransformerEncoderBlock(num_heads=2, intermediate_dim=16)
    x = tf.constant(RNG.normal(size=(2, 6, 8)).astype("float32"))
    block(x)
    with tf.GradientTape() as tape:
        loss = keras.ops.sum(block(x, attention_bias=AlibiBias2D((2, 3)).bias(2)) ** 2)
    gradients = tape.gradient(loss, block.trainable_variables)
    assert all(g is not None and np.isfinite(np.asarray(g)).all() for g in gradients)


@pytest.mark.parametrize("policy", ["float16", "bfloat16", "mixed_float16"])
def test_lower_precision_dtypes(policy):
    layer = AlibiBias2D((3, 3), dtype=policy)
    compute = keras.DTypePolicy(policy).compute_dtype
    bias = layer.bias(2)
    assert keras.backend.standardize_dtype(bias.dtype) == compute
    scores = np.zeros((1, 2, 9, 9), "float32")
    assert keras.backend.standardize_dtype(layer(scores).dtype) == compute
    atol = 2e-2 if "bfloat16" in policy else 2e-3
    expected = numpy_alibi_2d((3, 3), [1.0, 0.25])
    np.testing.assert_allclose(np.asarray(keras.ops.cast(bias, "float32"))[0], expected, atol=atol)


def test_bad_arguments_name_themselves():
    for grid_size in [(2,), (0, 3), (2.0, 3), "2x3", None, (True, 2)]:
        with pytest.raises(ValueError, match=r"`grid_size` must be .* Received: grid_size="):
            AlibiBias2D(grid_size)
    for slopes in [[], [-1.0], [float("nan")], "1", ["1"]]:
        with pytest.raises(ValueError, match="slopes"):
            AlibiBias2D((2, 2), slopes=slopes)
    with pytest.raises(ValueError, match=r"`slopes` has 2 values for 3 heads"):
        AlibiBias2D((2, 2), slopes=[1.0, 0.5]).bias(3)
    with pytest.raises(ValueError, match=r"(?s)N = rows \* columns.*shape=\(1, 2, 5, 5\)"):
        AlibiBias2D((2, 2))(np.zeros((1, 2, 5, 5), "float32"))
    with pytest.raises(ValueError, match="attention_scores"):
        AlibiBias2D((2, 2))(np.zeros((2, 4, 4), "float32"))
    with pytest.raises(ValueError, match="num_heads"):
        alibi_2d_slopes(0)


def test_docstring_examples():
    assert_docstring_examples_pass(alibi_bias_2d)
