"""One query position (a decoding step) against NumPy: outputs, weights, gradients, NaN.

`dot_product_attention` computes a query of length 1 in the layout of the
keys (`single_query_attention`) on the "xla", "chunked" and "auto" kernels;
these tests hold that path to the published formula, computed in NumPy.
"""

import numpy as np
import pytest
import tensorflow as tf
from numpy_reference import attention_scores_gradient
from numpy_reference import scaled_dot_product_attention as reference
from numpy_reference import sliding_window_band

from keras_attention.ops import attention

rng = np.random.default_rng(11)
BATCH, KEYS, HEADS, HEAD_DIM, VALUE_DIM = 3, 9, 2, 4, 5

MASKS = {
    "none": None,
    "rank2": rng.random((1, KEYS)) > 0.3,
    "rank3": rng.random((BATCH, 1, KEYS)) > 0.3,
    "rank4": rng.random((BATCH, HEADS, 1, KEYS)) > 0.3,
    # The last example sees no key at all: output 0, weights 0.
    "key_padding": np.array([[1] * KEYS, [1] * 4 + [0] * 5, [0] * KEYS], bool)[:, None, None, :],
}


def _inputs():
    q = rng.normal(size=(BATCH, 1, HEADS, HEAD_DIM)).astype("float32")
    k = rng.normal(size=(BATCH, KEYS, HEADS, HEAD_DIM)).astype("float32")
    v = rng.normal(size=(BATCH, KEYS, HEADS, VALUE_DIM)).astype("float32")
    return q, k, v


def _visible(mask, is_causal, window):
    """(B, H, 1, Tk) visibility from the rules (top-left aligned: the query is position 0)."""
    visible = np.ones((BATCH, HEADS, 1, KEYS), bool)
    if mask is not None:
        visible &= mask if mask.ndim == 4 else (mask[:, None] if mask.ndim == 3 else mask)
    if window is not None:
        visible &= sliding_window_band(1, KEYS, window, is_causal)
    elif is_causal:
        visible &= np.arange(KEYS) == 0
    return visible


@pytest.mark.parametrize("implementation", ["xla", "chunked", "auto"])
@pytest.mark.parametrize("mask_name", list(MASKS))
@pytest.mark.parametrize("is_causal, window", [(False, None), (True, None), (False, 3)])
@pytest.mark.parametrize("with_bias", [False, True])
def test_matches_numpy_reference(implementation, mask_name, is_causal, window, with_bias):
    q, k, v = _inputs()
    mask = MASKS[mask_name]
    bias = rng.normal(size=(1, HEADS, 1, KEYS)).astype("float32") if with_bias else None
    visible = _visible(mask, is_causal, window)
    expected, expected_weights = reference(q, k, v, visible, bias=bias)
    output, weights = attention.dot_product_attention(
        q,
        k,
        v,
        mask=mask,
        is_causal=is_causal,
        sliding_window=window,
        bias=bias,
        implementation=implementation,
        return_weights=True,
    )
    np.testing.assert_allclose(np.asarray(output), expected, atol=2e-6)
    np.testing.assert_allclose(np.asarray(weights), expected_weights, atol=2e-6)


def test_compiled_with_xla_and_a_cache_length_known_only_at_run_time():
    q, k, v = _inputs()
    mask = MASKS["key_padding"]
    expected, _ = reference(q, k, v, mask)
    spec = tf.TensorSpec((None, None, HEADS, None), tf.float32)
    run = tf.function(
        lambda q, k, v: attention.dot_product_attention(q, k, v, mask=mask),
        input_signature=[tf.TensorSpec((None, 1, HEADS, HEAD_DIM), tf.float32), spec, spec],
        jit_compile=True,
    )
    np.testing.assert_allclose(np.asarray(run(q, k, v)), expected, atol=2e-6)


def _numpy_gradients(q, k, v, visible, bias, upstream):
    """d sum(output * upstream) / d (q, k, v, bias) from the formula, float64."""
    scale = 1.0 / np.sqrt(HEAD_DIM)
    _, weights = reference(q, k, v, visible, bias=bias)  # (B, H, 1, Tk)
    d_scores = attention_scores_gradient(q, k, v, upstream, visible, bias=bias)
    d_query = np.einsum("bhqk,bkhd->bqhd", d_scores, k) * scale
    d_key = np.einsum("bhqk,bqhd->bkhd", d_scores, q) * scale
    d_value = np.einsum("bhqk,bqhd->bkhd", weights, upstream)
    d_bias = d_scores.sum(axis=0, keepdims=True)
    return d_query, d_key, d_value, d_bias


@pytest.mark.parametrize("mask_name", ["none", "rank4", "key_padding"])
def test_gradients_match_the_formula_and_hidden_nan_reaches_none(mask_name):
    q, k, v = _inputs()
    mask = MASKS[mask_name]
    bias = rng.normal(size=(1, HEADS, 1, KEYS)).astype("float32")
    visible = _visible(mask, False, None)
    upstream = rng.normal(size=(BATCH, 1, HEADS, VALUE_DIM))
    expected = _numpy_gradients(q, k, v, visible, bias, upstream)
    if mask is not None:
        # NaN in every key and value no query may see: gradients stay finite.
        hidden = ~np.broadcast_to(visible, (BATCH, HEADS, 1, KEYS))[:, :, 0, :]  # (B, H, Tk)
        hidden = np.transpose(hidden, (0, 2, 1))[..., None]  # (B, Tk, H, 1)
        k = np.where(hidden, np.nan, k).astype("float32")
        v = np.where(hidden, np.nan, v).astype("float32")
    tensors = [tf.constant(t) for t in (q, k, v, bias)]
    with tf.GradientTape() as tape:
        tape.watch(tensors)
        output = attention.dot_product_attention(*tensors[:3], mask=mask, bias=tensors[3])
        loss = tf.reduce_sum(output * upstream.astype("float32"))
    gradients = tape.gradient(loss, tensors)
    for name, got, want in zip(("query", "key", "value", "bias"), gradients, expected):
        got = np.asarray(got)
        if mask is not None and name in ("key", "value"):
            got = np.where(hidden, 0.0, got)  # those entries are NaN inputs; 0 is expected there
            want = np.where(hidden, 0.0, want)
        assert np.isfinite(got).all(), name
        np.testing.assert_allclose(got, want, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("implementation", ["xla", "chunked"])
def test_nan_reaches_exactly_the_heads_that_see_it(implementation):
    q, k, v = _inputs()
    v[0, 4, 1, 2] = np.nan  # example 0, key 4, head 1: visible
    v[1, 7, :, 0] = np.inf  # example 1, key 7: hidden by the padding
    k[1, 8] = np.nan  # example 1, key 8: hidden by the padding
    mask = MASKS["key_padding"]
    output = np.asarray(
        attention.dot_product_attention(q, k, v, mask=mask, implementation=implementation)
    )
    finite_v = np.where(np.isfinite(v), v, 0.0)
    finite_k = np.where(np.isfinite(k), k, 0.0)
    expected, _ = reference(q, finite_k, finite_v, mask)
    sees = np.zeros((BATCH, 1, HEADS), bool)
    sees[0, 0, 1] = True
    np.testing.assert_array_equal(np.isnan(output).all(-1), sees)
    np.testing.assert_array_equal(np.isnan(output).any(-1), sees)
    np.testing.assert_allclose(output[~sees], expected[~sees], atol=2e-6)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_a_query_that_sees_no_key_gives_zeros(dtype):
    q, k, v = (tf.cast(t, dtype) for t in _inputs())
    mask = MASKS["key_padding"]
    output, weights = attention.dot_product_attention(q, k, v, mask=mask, return_weights=True)
    assert output.dtype == dtype and weights.dtype == dtype
    output, weights = (np.asarray(tf.cast(t, "float32")) for t in (output, weights))
    assert np.isfinite(output).all() and np.isfinite(weights).all()
    np.testing.assert_array_equal(output[2], 0.0)
    np.testing.assert_array_equal(weights[2], 0.0)
    expected, _ = reference(*(np.asarray(tf.cast(t, "float32")) for t in (q, k, v)), mask)
    np.testing.assert_allclose(output[:2], expected[:2], atol=2e-2 if dtype != "float32" else 2e-6)
