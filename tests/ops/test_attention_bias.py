"""`dot_product_attention(bias=...)` on every kernel, against NumPy."""

import keras
import numpy as np
import pytest
import tensorflow as tf
from numpy_reference import attention_scores_gradient
from numpy_reference import scaled_dot_product_attention as reference

from keras_attention.ops import attention
from keras_attention.ops.chunked_attention import chunked_attention

IMPLEMENTATIONS = ["xla", "chunked", "fused", "auto"]
rng = np.random.default_rng(1)


def _qkv(query_length=5, key_length=7):
    """query (2, Tq, 3, 4), key (2, Tk, 3, 4), value (2, Tk, 3, 6)."""
    shapes = ((2, query_length, 3, 4), (2, key_length, 3, 4), (2, key_length, 3, 6))
    return [rng.normal(size=shape).astype("float32") for shape in shapes]


def _bias(shape):
    return rng.normal(scale=2.0, size=shape).astype("float32")


# Shapes against (B, H, Tq, Tk) = (2, 3, 5, 7): every rank, and size-1 axes.
BIAS_SHAPES = {
    "rank2": (5, 7),
    "rank3": (2, 5, 7),
    "rank4": (2, 3, 5, 7),
    "per head and key": (1, 3, 1, 7),
    "per example and query": (2, 1, 5, 1),
}
MASKS = {
    "none": None,
    "rank3": rng.random((2, 5, 7)) > 0.3,
    "key_padding": np.array([[1] * 7, [1] * 4 + [0] * 3], bool)[:, None, None, :],
}


def _reduce_to(gradient, shape):
    """Sum a (B, H, Tq, Tk) gradient over the axes a bias of `shape` broadcasts along."""
    rank4 = (1,) * (4 - len(shape)) + tuple(shape)
    if len(shape) == 3:  # (B, Tq, Tk) stands for (B, 1, Tq, Tk)
        rank4 = (shape[0], 1, shape[1], shape[2])
    axes = tuple(a for a, size in enumerate(rank4) if size == 1)
    return gradient.sum(axis=axes, keepdims=True).reshape(shape)


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
@pytest.mark.parametrize("bias_name", list(BIAS_SHAPES))
@pytest.mark.parametrize("mask_name", list(MASKS))
@pytest.mark.parametrize("is_causal", [False, True])
def test_bias_matches_numpy_reference(implementation, bias_name, mask_name, is_causal):
    q, k, v = _qkv()
    bias, mask = _bias(BIAS_SHAPES[bias_name]), MASKS[mask_name]
    expected, expected_weights = reference(q, k, v, mask, is_causal, bias=bias)
    kwargs = {"mask": mask, "is_causal": is_causal, "bias": bias}
    output = attention.dot_product_attention(q, k, v, implementation=implementation, **kwargs)
    np.testing.assert_allclose(np.asarray(output), expected, atol=1e-5)
    if implementation != "fused":
        _, weights = attention.dot_product_attention(
            q, k, v, implementation=implementation, return_weights=True, **kwargs
        )
        np.testing.assert_allclose(np.asarray(weights), expected_weights, atol=1e-5)


def _gradients(q, k, v, upstream, bias, implementation, mask=None, is_causal=False, jit=False):
    variables = [tf.Variable(t) for t in (q, k, v, bias)]

    def run():
        with tf.GradientTape() as tape:
            out = attention.dot_product_attention(
                *variables[:3],
                mask=mask,
                is_causal=is_causal,
                bias=variables[3],
                implementation=implementation,
            )
            loss = tf.reduce_sum(tf.cast(out, "float32") * upstream)
        return out, tape.gradient(loss, variables)

    if jit:
        run = tf.function(run, jit_compile=True)
    out, gradients = run()
    return np.asarray(tf.cast(out, "float32")), [
        np.asarray(tf.cast(g, "float32")) for g in gradients
    ]


@pytest.mark.parametrize("implementation", ["xla", "chunked", "fused"])
@pytest.mark.parametrize("bias_name", list(BIAS_SHAPES))
@pytest.mark.parametrize("is_causal", [False, True])
def test_bias_gradient_matches_numpy(implementation, bias_name, is_causal):
    q, k, v = _qkv()
    bias, mask = _bias(BIAS_SHAPES[bias_name]), MASKS["rank3"]
    upstream = rng.normal(size=(2, 5, 3, 6)).astype("float32")
    _, gradients = _gradients(q, k, v, upstream, bias, implementation, mask, is_causal)
    d_scores = attention_scores_gradient(q, k, v, upstream, mask, is_causal, bias=bias)
    np.testing.assert_allclose(gradients[3], _reduce_to(d_scores, bias.shape), atol=1e-5)
    _, weights = reference(q, k, v, mask, is_causal, bias=bias)
    np.testing.assert_allclose(
        gradients[2], np.einsum("bhqk,bqhd->bkhd", weights, upstream), atol=1e-5
    )


@pytest.mark.parametrize("block_size", [1, 3, 4, 16])
@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("bias_shape", [(2, 3, 10, 10), (1, 3, 1, 10), (2, 1, 10, 1), (1, 1, 1, 1)])
@pytest.mark.parametrize("query_length", [10, 6])
def test_chunked_bias_gradients_over_tiles_equal_materialised(
    block_size, is_causal, bias_shape, query_length
):
    # Lengths that are not multiples of the block size pad the last tiles;
    # a bias with size-1 axes is read, and its gradient summed, per tile.
    q, k, v = _qkv(query_length=query_length, key_length=10)
    shape = list(bias_shape)
    if shape[2] != 1:
        shape[2] = query_length
    bias = _bias(tuple(shape))
    mask = np.asarray(attention.normalize_mask(rng.random((2, query_length, 10)) > 0.3, q, k))
    upstream = rng.normal(size=(2, query_length, 3, 6)).astype("float32")
    _, expected = _gradients(q, k, v, upstream, bias, "xla", mask, is_causal)
    variables = [tf.Variable(t) for t in (q, k, v, bias)]
    with tf.GradientTape() as tape:
        out = chunked_attention(
            *variables[:3], mask, is_causal, 0.5, block_size=block_size, bias=variables[3]
        )
        loss = tf.reduce_sum(out * upstream)
    got = tape.gradient(loss, variables)
    expected_output, _ = reference(q, k, v, mask, is_causal, scale=0.5, bias=bias)
    np.testing.assert_allclose(np.asarray(out), expected_output, atol=1e-5)
    # Scale 0.5 is the default 1 / sqrt(head_dim) of the materialised call.
    for g, e in zip(got, expected):
        np.testing.assert_allclose(np.asarray(g), e, atol=1e-5)


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_masked_positions_stay_masked_whatever_the_bias(implementation, dtype):
    q, k, v = _qkv()
    mask = np.ones((2, 1, 5, 7), bool)
    mask[0, 0, 1] = False  # query 1 of example 0 sees nothing
    mask[:, :, :, 5:] = False
    bias = _bias((2, 3, 5, 7))
    loud = np.where(mask, bias, 1e4).astype("float32")  # huge where hidden
    expected, _ = reference(q, k, v, mask, bias=bias)
    tensors = [keras.ops.cast(t, dtype) for t in (q, k, v)]
    upstream = rng.normal(size=(2, 5, 3, 6)).astype("float32")
    output, gradients = _gradients(*tensors, upstream, loud, implementation, mask)
    tolerance = {"float32": 1e-5, "float16": 2e-2, "bfloat16": 1e-1}[dtype]
    np.testing.assert_allclose(output, expected, atol=tolerance)
    np.testing.assert_array_equal(output[0, 1], 0.0)
    for gradient in gradients:
        assert np.all(np.isfinite(gradient))
    np.testing.assert_array_equal(gradients[3][~np.broadcast_to(mask, (2, 3, 5, 7))], 0.0)


@pytest.mark.parametrize("implementation", ["xla", "chunked"])
@pytest.mark.parametrize(
    "dtype, tolerance", [("float32", 1e-5), ("float16", 2e-2), ("bfloat16", 1e-1)]
)
@pytest.mark.parametrize("is_causal", [False, True])
def test_bias_under_xla_matches_numpy(implementation, dtype, tolerance, is_causal):
    # Compiled, the "xla" kernel divides the output by the row sums (the
    # deferred normalisation); the bias must enter it the same way.
    q, k, v = _qkv()
    bias = _bias((1, 3, 1, 7))
    mask = np.ones((2, 1, 5, 7), bool)
    mask[1, 0, 4] = False
    upstream = rng.normal(size=(2, 5, 3, 6)).astype("float32")
    tensors = [keras.ops.cast(t, dtype) for t in (q, k, v)]
    output, gradients = _gradients(
        *tensors, upstream, bias, implementation, mask, is_causal, jit=True
    )
    expected, _ = reference(q, k, v, mask, is_causal, bias=bias)
    np.testing.assert_allclose(output, expected, atol=tolerance)
    np.testing.assert_array_equal(output[1, 4], 0.0)
    d_scores = attention_scores_gradient(q, k, v, upstream, mask, is_causal, bias=bias)
    np.testing.assert_allclose(gradients[3], _reduce_to(d_scores, bias.shape), atol=tolerance * 10)


def test_auto_chooses_chunked_with_a_bias_and_matches_numpy():
    q = rng.normal(size=(1, 4096, 1, 4)).astype("float32")
    bias = _bias((1, 1, 1, 4096))
    assert attention._choose_implementation(q, q, q, None, bias, None, False, False) == "chunked"
    got = attention.dot_product_attention(q[:, :8], q, q, bias=bias, implementation="auto")
    expected, _ = reference(q[:, :8], q, q, bias=bias)
    np.testing.assert_allclose(np.asarray(got), expected, atol=1e-5)


@pytest.mark.parametrize(
    "bias, match",
    [
        (np.zeros((7,), "float32"), r"`bias` must have rank.*Received: bias.shape=\(7,\)"),
        (np.zeros((1, 1, 1, 5, 7), "float32"), r"`bias`.*rank.*Received: bias.shape"),
        (np.zeros((2, 4, 7), "float32"), r"`bias` must broadcast.*bias.shape=\(2, 4, 7\)"),
        (np.zeros((2, 3, 5, 6), "float32"), r"`bias` must broadcast.*bias.shape=\(2, 3, 5, 6\)"),
        (np.zeros((5, 7), "int32"), r"`bias` must be a float.*bias.dtype=int32"),
        (np.zeros((5, 7), bool), r"`bias` must be a float.*bias.dtype=bool"),
    ],
)
def test_bad_bias_raises(bias, match):
    q, k, v = _qkv()
    with pytest.raises(ValueError, match=match):
        attention.dot_product_attention(q, k, v, bias=bias)


def _bias_hiding_whole_rows():
    """A (2, 3, 5, 7) bias with -inf where keys may not be attended, and the (2, 1, 5, 7) mask.

    Query 1 of example 0: -inf on every key of every head. Query 3 of
    example 1: the mask hides keys 0..3 and the bias (-inf) the others, on
    head 2 only. Query 2 of example 1: -inf on two keys, a normal row.
    """
    bias = _bias((2, 3, 5, 7))
    mask = np.ones((2, 1, 5, 7), bool)
    bias[0, :, 1] = -np.inf
    mask[1, 0, 3, :4] = False
    bias[1, 2, 3, 4:] = -np.inf
    bias[1, :, 2, [0, 5]] = -np.inf
    return bias, mask


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
@pytest.mark.parametrize(
    "dtype, tolerance", [("float32", 1e-5), ("float16", 2e-2), ("bfloat16", 1e-1)]
)
@pytest.mark.parametrize("jit", [False, True])
def test_rows_the_bias_hides_entirely_give_zeros_on_every_kernel(
    implementation, dtype, tolerance, jit
):
    # A -inf bias means "may not attend": a query whose every key is masked
    # or has a -inf bias is an empty row, output 0 and weights 0, not NaN.
    q, k, v = _qkv()
    bias, mask = _bias_hiding_whole_rows()
    bias = np.asarray(
        keras.ops.cast(keras.ops.cast(bias, dtype), "float32")
    )  # as the kernel reads it
    expected, expected_weights = reference(q, k, v, mask, bias=bias)
    assert np.all(expected[0, 1] == 0) and np.all(expected[1, 3, 2] == 0)
    upstream = rng.normal(size=(2, 5, 3, 6)).astype("float32")
    tensors = [keras.ops.cast(t, dtype) for t in (q, k, v, bias)]
    output, gradients = _gradients(
        *tensors[:3], upstream, tensors[3], implementation, mask, jit=jit
    )
    np.testing.assert_allclose(output, expected, atol=tolerance)
    np.testing.assert_array_equal(output[0, 1], 0.0)
    np.testing.assert_array_equal(output[1, 3, 2], 0.0)
    for gradient in gradients:
        assert np.all(np.isfinite(gradient))
    d_scores = attention_scores_gradient(q, k, v, upstream, mask, bias=bias)
    np.testing.assert_allclose(gradients[3], d_scores, atol=tolerance * 10)
    np.testing.assert_allclose(
        gradients[2], np.einsum("bhqk,bqhd->bkhd", expected_weights, upstream), atol=tolerance * 10
    )
    if implementation != "fused":
        _, weights = attention.dot_product_attention(
            *tensors[:3],
            mask=mask,
            bias=tensors[3],
            implementation=implementation,
            return_weights=True,
        )
        weights = np.asarray(keras.ops.cast(weights, "float32"))
        np.testing.assert_allclose(weights, expected_weights, atol=tolerance)
        np.testing.assert_array_equal(weights[0, :, 1], 0.0)
        np.testing.assert_array_equal(weights[1, 2, 3], 0.0)
