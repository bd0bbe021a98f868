"""`dot_product_attention(sliding_window=...)`: banded attention on every kernel."""

import importlib

import numpy as np
import pytest
import tensorflow as tf
from numpy_reference import attention_scores_gradient
from numpy_reference import scaled_dot_product_attention as reference
from numpy_reference import sliding_window_band

from keras_attention.ops import attention
from keras_attention.ops import sliding_window_mask
from keras_attention.ops.chunked_attention import chunked_attention

# The module, not the function of the same name that keras_attention.ops exports.
chunked_module = importlib.import_module("keras_attention.ops.chunked_attention")
rng = np.random.default_rng(2)


def _qkv(query_length, key_length, batch=2, heads=2, head_dim=4, value_dim=3):
    q = rng.normal(size=(batch, query_length, heads, head_dim)).astype("float32")
    k = rng.normal(size=(batch, key_length, heads, head_dim)).astype("float32")
    v = rng.normal(size=(batch, key_length, heads, value_dim)).astype("float32")
    return q, k, v


@pytest.mark.parametrize("window", [1, 3, 64])
@pytest.mark.parametrize("is_causal", [False, True])
def test_band_is_the_rule_of_sliding_window_mask(window, is_causal):
    np.testing.assert_array_equal(
        np.asarray(sliding_window_mask(9, 12, window=window, causal=is_causal)),
        sliding_window_band(9, 12, window, is_causal),
    )


@pytest.mark.parametrize("implementation", ["xla", "chunked", "fused", "auto"])
@pytest.mark.parametrize("window", [1, 2, 5])
@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("lengths", [(9, 9), (6, 9), (12, 5)])
@pytest.mark.parametrize("with_mask_and_bias", [False, True])
def test_sliding_window_matches_numpy(
    implementation, window, is_causal, lengths, with_mask_and_bias
):
    # (12, 5) leaves queries 5 + window - 1 .. 11 with no key in their band:
    # their output is 0.
    query_length, key_length = lengths
    q, k, v = _qkv(query_length, key_length)
    mask = bias = None
    if with_mask_and_bias:
        mask = rng.random((2, query_length, key_length)) > 0.2
        bias = rng.normal(size=(1, 2, 1, key_length)).astype("float32")
    band = sliding_window_band(query_length, key_length, window, is_causal)
    full_mask = band if mask is None else mask & band
    expected, expected_weights = reference(q, k, v, full_mask, bias=bias)
    kwargs = {"mask": mask, "is_causal": is_causal, "bias": bias, "sliding_window": window}
    got = attention.dot_product_attention(q, k, v, implementation=implementation, **kwargs)
    np.testing.assert_allclose(np.asarray(got), expected, atol=1e-5)
    assert np.all(np.isfinite(np.asarray(got)))
    if implementation != "fused":
        _, weights = attention.dot_product_attention(
            q, k, v, implementation=implementation, return_weights=True, **kwargs
        )
        np.testing.assert_allclose(np.asarray(weights), expected_weights, atol=1e-5)


def _chunked_gradients(q, k, v, bias, mask, is_causal, window, block_size, upstream):
    variables = [tf.Variable(t) for t in (q, k, v, bias)]
    with tf.GradientTape() as tape:
        out = chunked_attention(
            *variables[:3],
            mask,
            is_causal,
            0.5,
            block_size=block_size,
            bias=variables[3],
            sliding_window=window,
        )
        loss = tf.reduce_sum(out * upstream)
    return np.asarray(out), [np.asarray(g) for g in tape.gradient(loss, variables)]


@pytest.mark.parametrize("block_size", [1, 3, 4, 16])
@pytest.mark.parametrize("window", [1, 4, 6])
@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("lengths", [(10, 10), (7, 10), (13, 6)])
def test_chunked_band_gradients_equal_materialised(block_size, window, is_causal, lengths):
    # The chunked kernel visits only the band's tiles; the materialised one
    # masks the whole score matrix: same output and gradients, padded tiles
    # (lengths not multiples of the block size) included.
    query_length, key_length = lengths
    q, k, v = _qkv(query_length, key_length)
    bias = rng.normal(size=(2, 1, query_length, key_length)).astype("float32")
    mask = np.asarray(
        attention.normalize_mask(rng.random((2, query_length, key_length)) > 0.2, q, k)
    )
    upstream = rng.normal(size=(2, query_length, 2, 3)).astype("float32")
    output, got = _chunked_gradients(q, k, v, bias, mask, is_causal, window, block_size, upstream)

    band = sliding_window_band(query_length, key_length, window, is_causal)
    variables = [tf.Variable(t) for t in (q, k, v, bias)]
    with tf.GradientTape() as tape:
        out = attention.dot_product_attention(
            *variables[:3], mask=mask & band, bias=variables[3], implementation="xla"
        )
        loss = tf.reduce_sum(out * upstream)
    expected = tape.gradient(loss, variables)
    np.testing.assert_allclose(output, np.asarray(out), atol=1e-5)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, np.asarray(e), atol=1e-5)
    d_scores = attention_scores_gradient(q, k, v, upstream, mask & band, scale=0.5, bias=bias)
    np.testing.assert_allclose(got[3], d_scores.sum(axis=1, keepdims=True), atol=1e-5)


@pytest.mark.parametrize("is_causal, tiles_per_query_block", [(True, 2), (False, 3)])
def test_chunked_band_visits_only_the_tiles_of_the_band(is_causal, tiles_per_query_block):
    # 64 tokens in blocks of 4, window 4: every query block meets 2 key blocks
    # (causal: the one before and its own) or 3 (both sides), not 16.
    q = np.zeros((1, 64, 1, 2), "float32")
    tiling = chunked_module._Tiling(q, q, None, is_causal, 4, sliding_window=4)
    assert tiling.num_query_blocks == 16
    visited = 0
    for i in range(16):
        start, full_stop, stop = (int(x) for x in tiling.key_range(i))
        assert start == full_stop  # every tile of the band needs its mask
        expected_start = max(i - 1, 0)
        assert start == expected_start
        visited += stop - start
    assert visited == 16 * tiles_per_query_block - (2 if not is_causal else 1)
    # Backward: key block j is seen by query blocks j .. j + 1 (and j - 1 both sides).
    for j in range(16):
        start, full_start, stop = (int(x) for x in tiling.query_range(j))
        assert full_start == stop
        assert start == (j if is_causal else max(j - 1, 0))
        assert stop == min(j + 2, 16)


@pytest.mark.parametrize("is_causal", [False, True])
def test_chunked_band_under_xla_with_unknown_lengths(is_causal):
    # Unknown lengths keep one block of queries; the band is then a mask.
    q, k, v = _qkv(9, 11)
    bias = rng.normal(size=(1, 2, 1, 11)).astype("float32")
    band = sliding_window_band(9, 11, 3, is_causal)
    expected, _ = reference(q, k, v, band, scale=0.5, bias=bias)
    spec = tf.TensorSpec((None, None, 2, None), tf.float32)
    bias_spec = tf.TensorSpec((1, 2, 1, None), tf.float32)

    @tf.function(jit_compile=True, input_signature=[spec, spec, spec, bias_spec])
    def run(q, k, v, bias):
        return chunked_attention(q, k, v, None, is_causal, 0.5, 4, bias=bias, sliding_window=3)

    np.testing.assert_allclose(np.asarray(run(q, k, v, bias)), expected, atol=1e-5)


@pytest.mark.parametrize("implementation", ["xla", "chunked"])
def test_band_under_xla_matches_numpy(implementation):
    q, k, v = _qkv(20, 20)
    band = sliding_window_band(20, 20, 4, True)
    expected, _ = reference(q, k, v, band)
    run = tf.function(
        lambda q, k, v: attention.dot_product_attention(
            q, k, v, is_causal=True, sliding_window=4, implementation=implementation
        ),
        jit_compile=True,
    )
    np.testing.assert_allclose(np.asarray(run(q, k, v)), expected, atol=1e-5)


def test_keys_and_values_outside_every_band_do_not_reach_outputs_or_gradients():
    # 4 queries, 10 keys, window 2: keys 5.. are seen by no query. NaN there
    # must not reach the output nor the gradients of the chunked kernel.
    q, k, v = _qkv(4, 10)
    k[:, 7:] = np.nan
    v[:, 8:] = np.inf
    band = sliding_window_band(4, 10, 2, False)
    expected, _ = reference(q, k[:, :5], v[:, :5], band[:, :5])
    variables = [tf.Variable(t) for t in (q, k, v)]
    with tf.GradientTape() as tape:
        out = attention.dot_product_attention(
            *variables, sliding_window=2, implementation="chunked"
        )
        loss = tf.reduce_sum(out)
    np.testing.assert_allclose(np.asarray(out), expected, atol=1e-5)
    for gradient in tape.gradient(loss, variables):
        assert np.all(np.isfinite(np.asarray(gradient)))


@pytest.mark.parametrize("window", [0, -3, True, 2.5, "3"])
def test_bad_sliding_window_raises(window):
    q, k, v = _qkv(5, 5)
    with pytest.raises(ValueError, match=r"`sliding_window`.*Received: sliding_window="):
        attention.dot_product_attention(q, k, v, sliding_window=window)
