"""Checks of `attention_bias` that every multi-head attention layer passes.

Each takes the layer (or a factory of it) and the NumPy reference of its test
module, `reference(layer, query, value, mask=..., causal=..., bias=...)`.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_attention.layers.position.alibi_bias import AlibiBias
from keras_attention.layers.position.relative_position_bias import RelativePositionBias

ATTENTION_KERNELS = ("xla", "chunked", "fused", "auto")

# How a bias may broadcast to the scores (B, H, T, S).
BIAS_SHAPES = {
    "pairs": lambda b, h, t, s: (t, s),
    "examples": lambda b, h, t, s: (b, t, s),
    "heads": lambda b, h, t, s: (1, h, t, s),
    "heads_keys": lambda b, h, t, s: (b, h, 1, s),
    "full": lambda b, h, t, s: (b, h, t, s),
}


def masked_inputs(rng, key_length=5):
    """query (2, 4, 6), value (2, S, 6) and a (2, 4, S) mask that hides every key from query 1."""
    query = rng.normal(size=(2, 4, 6)).astype("float32")
    value = rng.normal(size=(2, key_length, 6)).astype("float32")
    mask = rng.random((2, 4, key_length)) > 0.3
    mask[0, 1] = False  # a query that sees no key
    return query, value, mask


def scores_rank_bias(bias):
    """A (T, S), (B, T, S) or (B, H, T, S) bias as rank 4 in float64 (head axis 1 below rank 4)."""
    bias = np.asarray(keras.ops.convert_to_numpy(keras.ops.cast(bias, "float32")), np.float64)
    if bias.ndim == 2:
        bias = bias[None]
    if bias.ndim == 3:
        bias = bias[:, None]
    return bias


def random_bias(rng, shape_name, batch, heads, query_length, key_length):
    shape = BIAS_SHAPES[shape_name](batch, heads, query_length, key_length)
    return (2.0 * rng.normal(size=shape)).astype("float32")


def assert_bias_matches_reference(layer, reference, query, value, bias, mask):
    """Output (the kernel alone, and with scores) and scores against the reference.

    `mask` hides every key from query 1 of example 0: its scores must be 0.
    """
    kwargs = dict(attention_mask=mask, use_causal_mask=True, attention_bias=bias)
    output = layer(query, value, **kwargs)
    output_with_scores, scores = layer(query, value, return_attention_scores=True, **kwargs)
    expected, expected_weights = reference(layer, query, value, mask=mask, causal=True, bias=bias)
    np.testing.assert_allclose(output, expected, atol=1e-5)
    np.testing.assert_allclose(output_with_scores, expected, atol=1e-5)
    np.testing.assert_allclose(scores, expected_weights, atol=1e-6)
    np.testing.assert_array_equal(np.asarray(scores)[0, :, 1], 0.0)


def assert_rows_the_bias_hides_are_zero(layer, reference, query, value, mask, num_heads):
    """A -inf bias on every key of a query (or on those the mask leaves) empties its row.

    Its scores are 0 and its heads contribute 0, as for a fully masked query,
    on the layer's kernel: no NaN, the same answer whatever the kernel.
    """
    key_length = value.shape[1]
    bias = np.zeros((2, num_heads, 4, key_length), "float32")
    bias[1, :, 2] = -np.inf  # example 1, query 2: every key
    bias[0, 0, 3] = np.where(mask[0, 3], -np.inf, 0.0)  # example 0, query 3, head 0: the rest
    bias[1, :, 0, 0] = -np.inf  # one key only: a normal row
    kwargs = dict(attention_mask=mask, attention_bias=bias)
    output = np.asarray(layer(query, value, **kwargs))
    output_with_scores, scores = layer(query, value, return_attention_scores=True, **kwargs)
    expected, expected_weights = reference(layer, query, value, mask=mask, bias=bias)
    assert np.all(np.isfinite(output)), "NaN where the bias hides every key"
    np.testing.assert_allclose(output, expected, atol=1e-5)
    np.testing.assert_allclose(output_with_scores, expected, atol=1e-5)
    np.testing.assert_allclose(scores, expected_weights, atol=1e-6)
    np.testing.assert_array_equal(np.asarray(scores)[1, :, 2], 0.0)
    np.testing.assert_array_equal(np.asarray(scores)[0, 0, 3], 0.0)


def bias_makers(num_heads):
    """{name: make(query_length, key_length, query_offset)} for ALiBi and a causal T5 bias."""
    alibi = AlibiBias()
    relative = RelativePositionBias(num_heads, num_buckets=8, max_distance=16, bidirectional=False)
    return {
        "alibi": lambda t, s, offset: alibi.bias(num_heads, t, s, query_offset=offset),
        "relative": lambda t, s, offset: relative.bias(t, s, query_offset=offset),
    }


def assert_cached_decoding_matches_causal_pass(layer, make_bias, cache, sequence):
    """One token at a time under XLA, the bias at the cache index, equals one causal pass."""
    length = sequence.shape[1]
    full = layer(
        sequence, sequence, use_causal_mask=True, attention_bias=make_bias(length, length, 0)
    )

    @tf.function(jit_compile=True)
    def step(token, cache, index):
        return layer(
            token,
            token,
            cache=cache,
            cache_update_index=index,
            use_causal_mask=True,
            attention_bias=make_bias(1, length, index),
        )

    outputs = []
    for index in range(length):
        output, cache = step(sequence[:, index : index + 1], cache, tf.constant(index, "int32"))
        outputs.append(np.asarray(output))
    np.testing.assert_allclose(np.concatenate(outputs, axis=1), full, atol=1e-5)


def assert_learned_bias_gets_its_gradient(make_layer, num_heads, query, rng):
    """RelativePositionBias's table: one gradient through every kernel, = finite differences."""
    relative = RelativePositionBias(num_heads, num_buckets=8, max_distance=16)
    length = query.shape[1]
    first = make_layer(implementation="xla")
    first(query, query)
    weights = rng.normal(size=(query.shape[0], length, query.shape[-1])).astype("float32")

    def loss(layer):
        bias = relative.bias(length, length)
        output = layer(query, query, use_causal_mask=True, attention_bias=bias)
        return tf.reduce_sum(tf.cast(output, "float64") * weights)

    gradients = {}
    for kernel in ATTENTION_KERNELS:
        layer = make_layer(implementation=kernel)
        layer(query, query)
        layer.set_weights(first.get_weights())
        with tf.GradientTape() as tape:
            value = loss(layer)
        gradient = tape.gradient(value, relative.embeddings.value)
        gradients[kernel] = tf.convert_to_tensor(gradient).numpy()
    for kernel in ATTENTION_KERNELS:
        np.testing.assert_allclose(gradients[kernel], gradients["xla"], atol=1e-5, err_msg=kernel)
    table = relative.embeddings.numpy()
    used = np.argwhere(gradients["xla"] != 0)
    assert len(used) >= num_heads, "the bias got no gradient"
    step = 1e-2
    for bucket, head in used[:4]:
        change = np.zeros_like(table)
        change[bucket, head] = step
        relative.embeddings.assign(table + change)
        above = float(loss(first))
        relative.embeddings.assign(table - change)
        below = float(loss(first))
        numeric = (above - below) / (2 * step)
        assert abs(numeric - gradients["xla"][bucket, head]) < 2e-3 * max(1.0, abs(numeric))
    relative.embeddings.assign(table)


LOWER_PRECISION = ("float16", "bfloat16", "mixed_float16", "mixed_bfloat16")


def assert_lower_precision_is_close(make_layer, num_heads, policy, rng):
    """ALiBi in the policy's compute dtype: close to float32, fully masked rows stay 0."""
    query, _, mask = masked_inputs(rng, key_length=4)  # self-attention
    length = query.shape[1]
    reference = make_layer()
    expected_bias = AlibiBias().bias(num_heads, length, length)
    expected = reference(
        query, query, attention_mask=mask, attention_bias=expected_bias, use_causal_mask=True
    )
    layer = make_layer(dtype=policy)
    layer(query, query)
    layer.set_weights(reference.get_weights())
    bias = AlibiBias(dtype=policy).bias(num_heads, length, length)
    output, scores = layer(
        query,
        query,
        attention_mask=mask,
        attention_bias=bias,
        use_causal_mask=True,
        return_attention_scores=True,
    )
    compute_dtype = keras.DTypePolicy(policy).compute_dtype
    assert keras.backend.standardize_dtype(output.dtype) == compute_dtype
    output = keras.ops.convert_to_numpy(keras.ops.cast(output, "float32"))
    scores = keras.ops.convert_to_numpy(keras.ops.cast(scores, "float32"))
    assert np.all(np.isfinite(output)) and np.all(np.isfinite(scores))
    scale = max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(output, expected, atol=0.05 * scale)
    np.testing.assert_array_equal(scores[0, :, 1], 0.0)


def assert_bad_biases_are_refused(layer, query, value, num_heads):
    length, key_length = query.shape[1], value.shape[1]
    bad = [
        (np.ones((length, key_length), bool), r"attention_bias.dtype=bool"),
        (np.ones((length, key_length), "int32"), r"attention_bias.dtype=int32"),
        (np.zeros((key_length,), "float32"), r"attention_bias.shape=\(%d,\)" % key_length),
        (
            np.zeros((1, num_heads + 1, length, key_length), "float32"),
            r"attention_bias.shape=\(1, %d, " % (num_heads + 1),
        ),
        (np.zeros((length, key_length + 1), "float32"), r"attention_bias.shape=\(%d, " % length),
    ]
    for bias, match in bad:
        with pytest.raises(ValueError, match=match):
            layer(query, value, attention_bias=bias)
