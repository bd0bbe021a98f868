"""MultiHeadAttention against a NumPy reference, against keras, and with a cache."""

import re

import keras
import numpy as np
import pytest
import tensorflow as tf
from bad_head_arguments import BAD_HEAD_ARGUMENTS
from head_attention_shapes import assert_symbolic_shapes_of_output_scores_and_cache
from layer_harness import LayerSpec
from layer_harness import harness_test
from numpy_reference import softmax_with_mask
from score_bias_cases import ATTENTION_KERNELS
from score_bias_cases import BIAS_SHAPES
from score_bias_cases import LOWER_PRECISION
from score_bias_cases import assert_bad_biases_are_refused
from score_bias_cases import assert_bias_matches_reference
from score_bias_cases import assert_cached_decoding_matches_causal_pass
from score_bias_cases import assert_learned_bias_gets_its_gradient
from score_bias_cases import assert_lower_precision_is_close
from score_bias_cases import assert_rows_the_bias_hides_are_zero
from score_bias_cases import bias_makers
from score_bias_cases import masked_inputs
from score_bias_cases import random_bias
from score_bias_cases import scores_rank_bias
from sublayer_weights import sublayer_weights

from keras_attention.layers.attention.grouped_query_attention import GroupQueryAttention
from keras_attention.layers.attention.multi_head_attention import MultiHeadAttention

RNG = np.random.default_rng(7)


def _normal(*shape):
    return RNG.normal(size=shape).astype("float32")


# ---------------------------------------------------------------------------
# NumPy reference: project, split heads, scaled dot product, masked softmax,
# weighted sum, merge heads, output projection (Vaswani et al., 2017, eq. 1-2).


def _np_rotary(x, start, max_wavelength):
    """Rotate-half RoPE on (B, T, N, D): pairs (x_i, x_{i + D/2}) by angle p * base^(-2i/D)."""
    dim = x.shape[-1]
    positions = start + np.arange(x.shape[1])
    inverse = max_wavelength ** (-np.arange(0, dim, 2) / dim)
    angles = positions[:, None] * inverse[None, :]  # (T, D/2)
    cos = np.cos(angles)[None, :, None, :]
    sin = np.sin(angles)[None, :, None, :]
    first, second = x[..., : dim // 2], x[..., dim // 2 :]
    return np.concatenate([first * cos - second * sin, second * cos + first * sin], axis=-1)


def reference_attention(
    layer, query, value, key=None, mask=None, causal=False, rotary=None, bias=None
):
    """Returns (output (B, T, E), weights (B, N, T, S)) for rank-3 inputs.

    `bias`, (T, S), (B, T, S) or (B, N, T, S), is added to the scaled scores.
    """
    key = value if key is None else key
    w = sublayer_weights(layer)

    def project(x, name):
        out = np.einsum("btd,dnk->btnk", x, w[(name, "kernel")])
        return out + w[(name, "bias")] if (name, "bias") in w else out

    q, k, v = project(query, "query"), project(key, "key"), project(value, "value")
    if rotary is not None:
        q, k = _np_rotary(q, 0, rotary), _np_rotary(k, 0, rotary)
    logits = np.einsum("btnk,bsnk->bnts", q, k) / np.sqrt(q.shape[-1])
    if bias is not None:
        logits = logits + scores_rank_bias(bias)
    full_mask = np.ones(logits.shape, bool)
    if mask is not None:
        mask = np.asarray(mask, bool)
        full_mask &= mask[:, None] if mask.ndim == 3 else mask
    if causal:
        full_mask &= np.tril(np.ones(logits.shape[-2:], bool))
    weights = softmax_with_mask(logits, full_mask)
    heads = np.einsum("bnts,bsnv->btnv", weights, v)
    output = np.einsum("btnv,nve->bte", heads, w[("attention_output", "kernel")])
    if ("attention_output", "bias") in w:
        output = output + w[("attention_output", "bias")]
    return output, weights


@pytest.mark.parametrize(
    "kwargs, mask_kind, causal",
    [
        ({}, None, False),
        ({}, "rank3", True),
        ({"value_dim": 3, "output_shape": 5}, "rank4", False),
        ({"use_bias": False, "implementation": "chunked"}, "rank3", True),
        ({"rotary_max_wavelength": 100}, None, True),
    ],
)
def test_matches_numpy_reference(kwargs, mask_kind, causal):
    query, value, key = _normal(2, 4, 6), _normal(2, 5, 3), _normal(2, 5, 7)
    layer = MultiHeadAttention(num_heads=3, key_dim=4, **kwargs)
    mask = None
    if mask_kind == "rank3":
        mask = RNG.random((2, 4, 5)) > 0.4
    elif mask_kind == "rank4":
        mask = RNG.random((2, 3, 4, 5)) > 0.4
    mask_kwargs = {} if mask is None else {"attention_mask": mask}
    output, scores = layer(
        query, value, key, return_attention_scores=True, use_causal_mask=causal, **mask_kwargs
    )
    expected, expected_weights = reference_attention(
        layer, query, value, key, mask, causal, kwargs.get("rotary_max_wavelength")
    )
    np.testing.assert_allclose(output, expected, atol=1e-5)
    np.testing.assert_allclose(scores, expected_weights, atol=1e-6)


def test_keras_padding_masks_and_explicit_masks_agree():
    query, value = _normal(2, 4, 6), _normal(2, 5, 6)
    query_mask = np.array([[1, 1, 1, 0], [1, 1, 0, 0]], bool)
    value_mask = np.array([[1, 1, 1, 1, 0], [1, 0, 1, 1, 0]], bool)
    layer = MultiHeadAttention(num_heads=2, key_dim=4)
    output, scores = layer(
        query, value, query_mask=query_mask, value_mask=value_mask, return_attention_scores=True
    )
    joint = query_mask[:, :, None] & value_mask[:, None, :]
    expected, expected_weights = reference_attention(layer, query, value, mask=joint)
    np.testing.assert_allclose(output, expected, atol=1e-5)
    np.testing.assert_allclose(scores, expected_weights, atol=1e-6)


def test_fully_masked_query_gives_zero_weights_and_bias_output():
    query, value = _normal(2, 3, 6), _normal(2, 4, 6)
    mask = np.ones((2, 3, 4), bool)
    mask[0, 1] = False  # query 1 of example 0 sees no key
    layer = MultiHeadAttention(num_heads=2, key_dim=4, bias_initializer="random_normal")
    output, scores = layer(query, value, attention_mask=mask, return_attention_scores=True)
    output, scores = np.asarray(output), np.asarray(scores)
    assert np.all(np.isfinite(output))
    np.testing.assert_array_equal(scores[0, :, 1], 0.0)
    # The heads are 0, so only the output projection's bias is left.
    output_bias = keras.ops.convert_to_numpy(layer.output_dense.bias)
    np.testing.assert_allclose(output[0, 1], output_bias, atol=1e-6)


@pytest.mark.parametrize("policy", ["mixed_float16", "mixed_bfloat16"])
def test_fully_masked_query_is_finite_in_mixed_precision(policy):
    query, value = _normal(2, 3, 6), _normal(2, 4, 6)
    mask = np.ones((2, 3, 4), bool)
    mask[1, 0] = False
    layer = MultiHeadAttention(num_heads=2, key_dim=4, dtype=policy)
    output, scores = layer(query, value, attention_mask=mask, return_attention_scores=True)
    assert np.all(np.isfinite(keras.ops.convert_to_numpy(keras.ops.cast(output, "float32"))))
    scores = keras.ops.convert_to_numpy(keras.ops.cast(scores, "float32"))
    np.testing.assert_array_equal(scores[1, :, 0], 0.0)


# ---------------------------------------------------------------------------
# Equivalence with keras.layers.MultiHeadAttention on copied weights.


def _keras_pair(**kwargs):
    theirs = keras.layers.MultiHeadAttention(**kwargs)
    ours = MultiHeadAttention(**kwargs)
    return theirs, ours


@pytest.mark.parametrize(
    "kwargs",
    [
        {"num_heads": 2, "key_dim": 4},
        {"num_heads": 3, "key_dim": 2, "value_dim": 5, "output_shape": (2, 3)},
        {"num_heads": 2, "key_dim": 4, "use_gate": True, "use_bias": False},
        {"num_heads": 2, "key_dim": 4, "sliding_window": 2},
    ],
    ids=["default", "value_dim_output_shape", "gate", "sliding_window"],
)
@pytest.mark.parametrize("causal", [False, True])
def test_matches_keras_with_copied_weights(kwargs, causal):
    query, value, key = _normal(2, 4, 6), _normal(2, 5, 6), _normal(2, 5, 3)
    mask = RNG.random((2, 4, 5)) > 0.3
    mask[:, :, 0] = True  # every query sees a key, even under the causal mask
    theirs, ours = _keras_pair(**kwargs)
    expected, expected_scores = theirs(
        query, value, key, attention_mask=mask, return_attention_scores=True, use_causal_mask=causal
    )
    ours(query, value, key)
    assert [w.shape for w in ours.weights] == [w.shape for w in theirs.weights]
    assert [w.path.split("/", 1)[1] for w in ours.weights] == [
        w.path.split("/", 1)[1] for w in theirs.weights
    ]
    ours.set_weights(theirs.get_weights())
    output, scores = ours(
        query, value, key, attention_mask=mask, return_attention_scores=True, use_causal_mask=causal
    )
    np.testing.assert_allclose(output, expected, atol=1e-5)
    np.testing.assert_allclose(scores, expected_scores, atol=1e-5)


def test_matches_keras_on_rows_that_see_a_key_and_zeroes_the_others():
    query, value = _normal(2, 4, 6), _normal(2, 5, 6)
    mask = RNG.random((2, 4, 5)) > 0.5
    mask[0, 2] = False
    mask[1, 0] = False
    theirs, ours = _keras_pair(num_heads=2, key_dim=4)
    expected, expected_scores = theirs(
        query, value, attention_mask=mask, return_attention_scores=True
    )
    ours(query, value)
    ours.set_weights(theirs.get_weights())
    output, scores = ours(query, value, attention_mask=mask, return_attention_scores=True)
    sees_a_key = mask.any(axis=-1)  # (B, T)
    output, expected = np.asarray(output), np.asarray(expected)
    np.testing.assert_allclose(output[sees_a_key], expected[sees_a_key], atol=1e-5)
    scores, expected_scores = np.asarray(scores), np.asarray(expected_scores)
    np.testing.assert_allclose(
        scores.transpose(0, 2, 1, 3)[sees_a_key],
        expected_scores.transpose(0, 2, 1, 3)[sees_a_key],
        atol=1e-5,
    )
    np.testing.assert_array_equal(scores.transpose(0, 2, 1, 3)[~sees_a_key], 0.0)


def test_matches_keras_with_keras_masks_from_an_embedding():
    ids = np.array([[3, 5, 7, 0, 0], [2, 9, 4, 6, 1]])
    tokens = keras.Input(shape=(5,), dtype="int32")
    embedded = keras.layers.Embedding(12, 6, mask_zero=True)(tokens)
    theirs, ours = _keras_pair(num_heads=2, key_dim=4)
    model = keras.Model(tokens, [theirs(embedded, embedded), ours(embedded, embedded)])
    ours.set_weights(theirs.get_weights())
    expected, output = (np.asarray(t) for t in model(ids))
    real = ids != 0
    np.testing.assert_allclose(output[real], expected[real], atol=1e-5)


@pytest.mark.parametrize("attention_axes", [None, (2,), (1,), (2, 1)])
def test_matches_keras_with_attention_axes(attention_axes):
    query, value = _normal(2, 3, 4, 6), _normal(2, 3, 4, 6)
    theirs, ours = _keras_pair(num_heads=2, key_dim=4, attention_axes=attention_axes)
    expected, expected_scores = theirs(query, value, return_attention_scores=True)
    ours(query, value)
    ours.set_weights(theirs.get_weights())
    output, scores = ours(query, value, return_attention_scores=True)
    np.testing.assert_allclose(output, expected, atol=1e-5)
    np.testing.assert_allclose(scores, expected_scores, atol=1e-5)


def test_attention_axes_with_a_mask_matches_keras():
    query, value = _normal(2, 3, 4, 6), _normal(2, 3, 5, 6)
    mask = RNG.random((2, 3, 4, 5)) > 0.4  # (B, free, Tq, Tk)
    mask[..., 0] = True
    theirs, ours = _keras_pair(num_heads=2, key_dim=4, attention_axes=(2,))
    expected = theirs(query, value, attention_mask=mask)
    ours(query, value)
    ours.set_weights(theirs.get_weights())
    np.testing.assert_allclose(ours(query, value, attention_mask=mask), expected, atol=1e-5)


# ---------------------------------------------------------------------------
# Implementations, shapes.


@pytest.mark.parametrize("implementation", ["xla", "chunked", "fused"])
def test_implementations_agree_and_all_return_scores(implementation):
    query, value = _normal(2, 4, 6), _normal(2, 5, 6)
    mask = RNG.random((2, 4, 5)) > 0.3
    reference = MultiHeadAttention(num_heads=2, key_dim=4, implementation="xla")
    expected, expected_scores = reference(
        query, value, attention_mask=mask, use_causal_mask=True, return_attention_scores=True
    )
    layer = MultiHeadAttention(num_heads=2, key_dim=4, implementation=implementation)
    layer(query, value)
    layer.set_weights(reference.get_weights())
    output, scores = layer(
        query, value, attention_mask=mask, use_causal_mask=True, return_attention_scores=True
    )
    np.testing.assert_allclose(output, expected, atol=1e-5)
    np.testing.assert_allclose(scores, expected_scores, atol=1e-6)
    np.testing.assert_allclose(
        layer(query, value, attention_mask=mask, use_causal_mask=True), expected, atol=1e-5
    )


def test_symbolic_shapes_of_output_scores_and_cache():
    layer = MultiHeadAttention(num_heads=3, key_dim=4, output_shape=7)
    assert_symbolic_shapes_of_output_scores_and_cache(layer, heads=3, cache_heads=3, features=7)


def test_dropout_is_active_only_in_training():
    query = _normal(2, 6, 8)
    layer = MultiHeadAttention(num_heads=2, key_dim=4, dropout=0.5, seed=1)
    inference = layer(query, query)
    np.testing.assert_allclose(layer(query, query, training=False), inference)
    assert not np.allclose(layer(query, query, training=True), inference)


# ---------------------------------------------------------------------------
# Incremental decoding with a fixed-size cache.


def _decode(layer, sequence, attention_mask=None, steps=None, jit_compile=True):
    """Feed `sequence` in chunks of `steps` tokens; returns the outputs (B, T, E)."""
    batch, length, _ = sequence.shape
    steps = steps or [1] * length
    cache = tf.zeros((batch, 2, length, layer.num_heads, layer.key_dim))

    def step(chunk, cache, index, mask):
        kwargs = {} if mask is None else {"attention_mask": mask}
        return layer(
            chunk, chunk, cache=cache, cache_update_index=index, use_causal_mask=True, **kwargs
        )

    if jit_compile:
        step = tf.function(step, jit_compile=True)
    outputs, start = [], 0
    for size in steps:
        mask = None
        if attention_mask is not None:
            mask = attention_mask[:, start : start + size]  # (B, t, S)
        output, cache = step(sequence[:, start : start + size], cache, tf.constant(start), mask)
        outputs.append(np.asarray(output))
        start += size
    return np.concatenate(outputs, axis=1)


def test_decoding_one_token_at_a_time_under_xla_matches_causal_pass():
    sequence = _normal(2, 6, 8)
    layer = MultiHeadAttention(num_heads=2, key_dim=4, rotary_max_wavelength=50)
    full = layer(sequence, sequence, use_causal_mask=True)
    np.testing.assert_allclose(_decode(layer, sequence), full, atol=1e-5)


def test_decoding_in_chunks_matches_causal_pass():
    sequence = _normal(2, 6, 8)
    layer = MultiHeadAttention(num_heads=2, key_dim=4, rotary_max_wavelength=50)
    full = layer(sequence, sequence, use_causal_mask=True)
    decoded = _decode(layer, sequence, steps=[3, 1, 2], jit_compile=False)
    np.testing.assert_allclose(decoded, full, atol=1e-5)


def test_decoding_with_padded_keys_under_xla_matches_causal_pass():
    sequence = _normal(2, 6, 8)
    # Left padding: the first two positions of example 0 are padding, so its
    # first two queries see no key at all (zero attention in both passes).
    key_is_real = np.array([[0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 1, 0]], bool)
    attention_mask = np.broadcast_to(key_is_real[:, None, :], (2, 6, 6))
    layer = MultiHeadAttention(num_heads=2, key_dim=4)
    full = layer(sequence, sequence, attention_mask=attention_mask, use_causal_mask=True)
    np.testing.assert_allclose(_decode(layer, sequence, attention_mask), full, atol=1e-5)


def test_cache_hides_positions_after_the_new_tokens():
    sequence = _normal(2, 3, 8)
    layer = MultiHeadAttention(num_heads=2, key_dim=4)
    full, full_scores = layer(sequence, sequence, return_attention_scores=True)
    cache = np.zeros((2, 2, 7, 2, 4), "float32")
    output, scores, cache = layer(
        sequence, sequence, cache=cache, cache_update_index=0, return_attention_scores=True
    )
    np.testing.assert_allclose(output, full, atol=1e-5)
    np.testing.assert_allclose(np.asarray(scores)[..., :3], full_scores, atol=1e-6)
    np.testing.assert_array_equal(np.asarray(scores)[..., 3:], 0.0)
    expected_keys = np.einsum("btd,dnk->btnk", sequence, sublayer_weights(layer)[("key", "kernel")])
    expected_keys = expected_keys + sublayer_weights(layer)[("key", "bias")]
    np.testing.assert_allclose(np.asarray(cache)[:, 0, :3], expected_keys, atol=1e-5)
    np.testing.assert_array_equal(np.asarray(cache)[:, :, 3:], 0.0)


@pytest.mark.parametrize("rotary", [None, 50])
def test_cross_attention_cache_matches_uncached_call(rotary):
    query, memory = _normal(2, 3, 8), _normal(2, 5, 6)
    layer = MultiHeadAttention(num_heads=2, key_dim=4, rotary_max_wavelength=rotary)
    expected = layer(query, memory)
    cache = layer.compute_cache(memory)
    output, same_cache = layer(query, memory[:, :1], cache=cache)
    np.testing.assert_allclose(output, expected, atol=1e-5)
    np.testing.assert_array_equal(same_cache, cache)


# ---------------------------------------------------------------------------
# Bad input.


@pytest.mark.parametrize(
    "kwargs, match",
    BAD_HEAD_ARGUMENTS
    + [
        ({"num_heads": 2, "key_dim": 4, "value_dim": -1}, "value_dim=-1"),
        ({"num_heads": 2, "key_dim": 4, "dropout": 1.0}, "dropout=1.0"),
        ({"num_heads": 2, "key_dim": 4, "implementation": "flash"}, "implementation='flash'"),
        ({"num_heads": 2, "key_dim": 3, "rotary_max_wavelength": 100}, "key_dim=3"),
        ({"num_heads": 2, "key_dim": 4, "rotary_max_wavelength": -1}, "rotary_max_wavelength=-1"),
        ({"num_heads": 2, "key_dim": 4, "output_shape": (2, 0)}, r"output_shape=\(2, 0\)"),
        ({"num_heads": 2, "key_dim": 4, "attention_axes": "1"}, "attention_axes='1'"),
        ({"num_heads": 2, "key_dim": 4, "sliding_window": 0}, "sliding_window=0"),
        (
            {"num_heads": 2, "key_dim": 4, "flash_attention": True, "implementation": "xla"},
            "implementation='xla'",
        ),
        (
            {"num_heads": 2, "key_dim": 4, "flash_attention": False, "implementation": "fused"},
            "flash_attention=False",
        ),
    ],
)
def test_bad_constructor_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        MultiHeadAttention(**kwargs)


def test_settings_after_keras_positional_arguments_are_keyword_only():
    # keras takes `sliding_window` or `flash_attention` 8th depending on its
    # version: a value given there by position is refused, not misread.
    with pytest.raises(TypeError, match="positional"):
        MultiHeadAttention(2, 4, None, 0.0, True, None, None, None)
    layer = MultiHeadAttention(2, 4, None, 0.1, False, 6, (1,), sliding_window=3, seed=7)
    assert (layer.dropout, layer.use_bias, layer.attention_axes) == (0.1, False, (1,))
    assert (layer.sliding_window, layer.seed) == (3, 7)


def test_key_value_shape_mismatch():
    layer = MultiHeadAttention(num_heads=2, key_dim=4)
    with pytest.raises(ValueError, match=r"key_shape=\(2, 4, 6\), value_shape=\(2, 5, 6\)"):
        layer(_normal(2, 3, 6), _normal(2, 5, 6), _normal(2, 4, 6))


def test_bad_attention_axes_for_the_input_rank():
    layer = MultiHeadAttention(num_heads=2, key_dim=4, attention_axes=(3,))
    with pytest.raises(ValueError, match=r"attention_axes=\(3,\)"):
        layer(_normal(2, 3, 4, 6), _normal(2, 3, 4, 6))


@pytest.mark.parametrize("mask_shape", [(4,), (2, 1, 1, 4, 5)], ids=["rank1", "rank5"])
def test_bad_attention_mask_rank(mask_shape):
    layer = MultiHeadAttention(num_heads=2, key_dim=4)
    with pytest.raises(ValueError, match=re.escape(f"attention_mask.shape={mask_shape}")):
        layer(_normal(2, 4, 6), _normal(2, 5, 6), attention_mask=np.ones(mask_shape, bool))


def test_unbroadcastable_attention_mask():
    layer = MultiHeadAttention(num_heads=2, key_dim=4)
    with pytest.raises(ValueError, match=r"attention_mask.shape=\(2, 3, 4, 5\)"):
        layer(_normal(2, 4, 6), _normal(2, 5, 6), attention_mask=np.ones((2, 3, 4, 5), bool))
    with pytest.raises(ValueError, match=r"attention_mask.shape=\(2, 4, 6\)"):
        layer(_normal(2, 4, 6), _normal(2, 5, 6), attention_mask=np.ones((2, 4, 6), bool))


def test_bad_cache_calls():
    query = _normal(2, 1, 6)
    layer = MultiHeadAttention(num_heads=2, key_dim=4)
    with pytest.raises(ValueError, match="cache_update_index=0"):
        layer(query, query, cache_update_index=0)
    with pytest.raises(ValueError, match=r"cache.shape=\(2, 2, 5, 3, 4\)"):
        layer(query, query, cache=np.zeros((2, 2, 5, 3, 4), "float32"), cache_update_index=0)
    uneven = MultiHeadAttention(num_heads=2, key_dim=4, value_dim=2)
    with pytest.raises(ValueError, match="value_dim=2"):
        uneven(query, query, cache=np.zeros((2, 2, 5, 2, 4), "float32"), cache_update_index=0)


# The two layers of projected heads, made anew for each test (with one key/value head for GQA).
EITHER_HEAD_LAYER = pytest.mark.parametrize(
    "make",
    [
        lambda: MultiHeadAttention(num_heads=2, key_dim=4),
        lambda: GroupQueryAttention(head_dim=4, num_query_heads=2, num_key_value_heads=1),
    ],
    ids=["mha", "gqa"],
)


@EITHER_HEAD_LAYER
def test_a_cache_index_where_the_query_does_not_fit_is_refused_not_clamped(make):
    layer = make()
    heads = 2 if isinstance(layer, MultiHeadAttention) else 1  # the cache's key/value heads
    query, cache = _normal(2, 2, 6), np.zeros((2, 2, 5, heads, 4), "float32")
    for index in (4, 5, -1):  # two positions from 4 would end past the 5 of the cache
        with pytest.raises(ValueError, match=r"must be from 0 to 3: the cache holds 5 positions"):
            layer(query, query, cache=cache, cache_update_index=index)
    with pytest.raises(ValueError, match=r"must be an integer.*cache_update_index=2.0"):
        layer(query, query, cache=cache, cache_update_index=2.0)
    _, written = layer(query, query, cache=cache, cache_update_index=np.int32(3))
    written = np.asarray(written)  # (B, 2, S, H, D): the last two positions, nothing else
    assert np.any(written[:, :, 3:] != 0) and np.all(written[:, :, :3] == 0)


# ---------------------------------------------------------------------------
# Shared harness.

_QUERY = RNG.normal(size=(2, 4, 6)).astype("float32")
_VALUE = RNG.normal(size=(2, 5, 6)).astype("float32")
_MASK = RNG.random((2, 4, 5)) > 0.3

SPECS = [
    LayerSpec(
        "attention_mask_dropout",
        MultiHeadAttention,
        {"num_heads": 2, "key_dim": 4, "dropout": 0.1, "seed": 3},
        inputs=[_QUERY, _VALUE],
        tensor_kwargs={"attention_mask": _MASK},
        private_args=("output_shape",),
    ),
    LayerSpec(
        "causal_scores_rotary_chunked",
        MultiHeadAttention,
        {
            "num_heads": 2,
            "key_dim": 4,
            "value_dim": 3,
            "output_shape": (5,),
            "rotary_max_wavelength": 100,
            "implementation": "chunked",
        },
        inputs=[_QUERY, _QUERY],
        call_kwargs={"return_attention_scores": True, "use_causal_mask": True},
        private_args=("output_shape",),
    ),
    LayerSpec(
        "attention_bias_causal",
        MultiHeadAttention,
        {"num_heads": 2, "key_dim": 4},
        inputs=[_QUERY, _VALUE],
        tensor_kwargs={"attention_bias": RNG.normal(size=(2, 2, 4, 5)).astype("float32")},
        call_kwargs={"use_causal_mask": True},
        private_args=("output_shape",),
    ),
]


def test_attention_axes_with_unknown_sizes_in_a_model(tmp_path):
    images = _normal(2, 3, 4, 6)
    layer = MultiHeadAttention(num_heads=2, key_dim=4, attention_axes=(2,))
    expected, expected_scores = layer(images, images, return_attention_scores=True)
    inputs = keras.Input((None, None, 6))
    model = keras.Model(inputs, layer(inputs, inputs, return_attention_scores=True))
    assert tuple(model.outputs[1].shape) == (None, None, 2, None, None)
    output, scores = model(images)
    np.testing.assert_allclose(output, expected, atol=1e-6)
    np.testing.assert_allclose(scores, expected_scores, atol=1e-6)
    path = str(tmp_path / "axes.keras")
    model.save(path)
    restored = keras.saving.load_model(path)
    np.testing.assert_allclose(restored(images)[0], expected, atol=1e-6)


test_harness = harness_test(SPECS)


# ---------------------------------------------------------------------------
# keras' extension point and argument checks, with keras' wording.


class _PassThrough(MultiHeadAttention):
    """Overrides `_compute_attention` with keras' old signature and records the mask."""

    def _compute_attention(
        self, query, key, value, attention_mask=None, training=None, return_attention_scores=False
    ):
        self.seen_mask = attention_mask
        return super()._compute_attention(
            query, key, value, attention_mask, training, return_attention_scores
        )


@pytest.mark.parametrize("rotary", [None, 10000.0], ids=["plain", "rotary"])
def test_compute_attention_override_gets_every_mask_and_matches_the_layer(rotary):
    kwargs = dict(num_heads=2, key_dim=4, rotary_max_wavelength=rotary)
    plain, override = MultiHeadAttention(**kwargs), _PassThrough(**kwargs)
    x = _normal(2, 5, 8)
    padding = np.array([[True] * 5, [True] * 3 + [False] * 2])
    plain(x, x)
    override(x, x)
    override.set_weights(plain.get_weights())
    expected, expected_scores = plain(
        x,
        x,
        query_mask=padding,
        value_mask=padding,
        use_causal_mask=True,
        return_attention_scores=True,
    )
    output, scores = override(
        x,
        x,
        query_mask=padding,
        value_mask=padding,
        use_causal_mask=True,
        return_attention_scores=True,
    )
    np.testing.assert_allclose(output, expected, atol=1e-5)
    np.testing.assert_allclose(scores, expected_scores, atol=1e-6)
    # keras' layout: (B, T, S), padding and causal merged in.
    causal = np.tril(np.ones((5, 5), bool))
    merged = padding[:, :, None] & padding[:, None, :] & causal
    np.testing.assert_array_equal(np.asarray(override.seen_mask), merged)


def test_compute_attention_override_decodes_with_a_cache():
    plain, override = (
        MultiHeadAttention(num_heads=2, key_dim=4),
        _PassThrough(num_heads=2, key_dim=4),
    )
    x = _normal(1, 4, 8)
    plain(x, x)
    override(x, x)
    override.set_weights(plain.get_weights())
    full = plain(x, x, use_causal_mask=True)
    cache = np.zeros((1, 2, 4, 2, 4), "float32")
    steps = []
    for i in range(4):
        step, cache = override(
            x[:, i : i + 1],
            x[:, i : i + 1],
            cache=cache,
            cache_update_index=i,
            use_causal_mask=True,
        )
        steps.append(np.asarray(step))
    np.testing.assert_allclose(np.concatenate(steps, axis=1), full, atol=1e-5)


def test_compute_attention_override_with_attention_axes():
    kwargs = dict(num_heads=2, key_dim=4, attention_axes=(1, 2))
    plain, override = MultiHeadAttention(**kwargs), _PassThrough(**kwargs)
    x = _normal(2, 3, 4, 8)
    mask = RNG.random((2, 3, 4, 3, 4)) > 0.3
    plain(x, x)
    override(x, x)
    override.set_weights(plain.get_weights())
    np.testing.assert_allclose(
        override(x, x, attention_mask=mask), plain(x, x, attention_mask=mask), atol=1e-5
    )
    assert tuple(override.seen_mask.shape) == (2, 3, 4, 3, 4)


def test_bool_attention_masks_of_every_rank_agree():
    # keras' test_masking_with_different_shapes, with the boolean mask this library takes.
    x = _normal(2, 5, 8)
    layer = MultiHeadAttention(num_heads=2, key_dim=4)
    mask = np.tril(np.ones((5, 5), bool))
    first = layer(x, x, attention_mask=mask)
    np.testing.assert_allclose(
        layer(x, x, attention_mask=np.tile(mask, (2, 1, 1))), first, atol=1e-6
    )
    np.testing.assert_allclose(
        layer(x, x, attention_mask=np.tile(mask, (2, 2, 1, 1))), first, atol=1e-6
    )


@pytest.mark.parametrize("name", ["num_heads", "key_dim", "value_dim"])
def test_head_sizes_are_refused_in_keras_words(name):
    arguments = {"num_heads": 2, "key_dim": 4, name: 0}
    with pytest.raises(
        ValueError, match=rf"invalid value for argument `{name}`.*Received: {name}=0"
    ):
        MultiHeadAttention(**arguments)


def test_keras_private_attributes_read_the_public_ones():
    layer = MultiHeadAttention(num_heads=3, key_dim=4, sliding_window=2, dropout=0.1)
    assert (layer._num_heads, layer._key_dim, layer._value_dim) == (3, 4, 4)
    assert (layer._sliding_window, layer._dropout, layer._flash_attention) == (2, 0.1, False)
    assert layer._inverse_sqrt_key_dim == pytest.approx(0.5)


# ---------------------------------------------------------------------------
# attention_bias: added to the scaled scores before masking, on every kernel.


@pytest.mark.parametrize("shape_name", list(BIAS_SHAPES))
@pytest.mark.parametrize("kernel", ATTENTION_KERNELS)
def test_attention_bias_matches_numpy_reference(kernel, shape_name):
    query, value, mask = masked_inputs(RNG)
    bias = random_bias(RNG, shape_name, 2, 3, 4, 5)
    layer = MultiHeadAttention(num_heads=3, key_dim=4, implementation=kernel)
    assert_bias_matches_reference(layer, reference_attention, query, value, bias, mask)


@pytest.mark.parametrize("kernel", ATTENTION_KERNELS)
def test_attention_bias_of_minus_infinity_on_a_whole_row_gives_zeros(kernel):
    query, value, mask = masked_inputs(RNG)
    layer = MultiHeadAttention(num_heads=3, key_dim=4, implementation=kernel)
    assert_rows_the_bias_hides_are_zero(layer, reference_attention, query, value, mask, 3)


def test_attention_bias_with_attention_axes_equals_the_flattened_sequence():
    images = _normal(2, 3, 4, 6)  # (B, H, W, dim): attention over the 12 pixels
    bias = _normal(2, 2, 3, 4, 3, 4)  # (B, N, H, W, H, W), the layout of the scores
    grid = MultiHeadAttention(num_heads=2, key_dim=4, attention_axes=(1, 2))
    output, scores = grid(images, images, attention_bias=bias, return_attention_scores=True)
    sequence = MultiHeadAttention(num_heads=2, key_dim=4)
    pixels = images.reshape(2, 12, 6)
    sequence(pixels, pixels)
    sequence.set_weights(grid.get_weights())
    expected, expected_scores = sequence(
        pixels, pixels, attention_bias=bias.reshape(2, 2, 12, 12), return_attention_scores=True
    )
    np.testing.assert_allclose(np.asarray(output).reshape(2, 12, 6), expected, atol=1e-5)
    np.testing.assert_allclose(np.asarray(scores).reshape(2, 2, 12, 12), expected_scores, atol=1e-6)


@pytest.mark.parametrize("bias_name", ["alibi", "relative"])
def test_attention_bias_in_cached_decoding_under_xla_matches_causal_pass(bias_name):
    sequence = _normal(2, 6, 8)
    layer = MultiHeadAttention(num_heads=2, key_dim=4, rotary_max_wavelength=50)
    cache = tf.zeros((2, 2, 6, 2, 4))
    assert_cached_decoding_matches_causal_pass(layer, bias_makers(2)[bias_name], cache, sequence)


def test_relative_position_table_gets_its_gradient_through_the_layer():
    def make_layer(**kwargs):
        return MultiHeadAttention(num_heads=2, key_dim=4, **kwargs)

    assert_learned_bias_gets_its_gradient(make_layer, 2, _normal(2, 5, 6), RNG)


@pytest.mark.parametrize("policy", LOWER_PRECISION)
def test_attention_bias_in_lower_precision(policy):

    def make_layer(**kwargs):
        return MultiHeadAttention(num_heads=4, key_dim=4, **kwargs)

    assert_lower_precision_is_close(make_layer, 4, policy, RNG)


def test_bad_attention_bias_is_refused():
    query, value, _ = masked_inputs(RNG)
    assert_bad_biases_are_refused(MultiHeadAttention(num_heads=3, key_dim=4), query, value, 3)
    with pytest.raises(ValueError, match="attention_bias.*_compute_attention"):
        _PassThrough(num_heads=3, key_dim=4)(
            query, value, attention_bias=np.zeros((4, 5), "float32")
        )


@EITHER_HEAD_LAYER
def test_a_built_layer_names_the_input_that_no_longer_fits_its_projections(make):
    layer = make()
    query, value = _normal(2, 3, 6), _normal(2, 5, 6)
    layer(query, value)
    message = r"`{}` must be of rank 3 with 6 features \(the last axis\), as when this layer"
    with pytest.raises(ValueError, match=message.format("value") + r".*shape=\(2, 5, 4\)"):
        layer(query, value[..., :4])
    with pytest.raises(ValueError, match=message.format("query") + r".*shape=\(2, 6\)"):
        layer(query[:, 0], value)
    with pytest.raises(ValueError, match=message.format("key") + r".*shape=\(2, 5, 3\)"):
        layer(query, value, value[..., :3])
    assert tuple(layer(query[:, :1], value).shape) == (2, 1, 6)  # other lengths still fit


@EITHER_HEAD_LAYER
def test_a_padding_mask_of_the_other_input_is_named_with_the_shape_it_needs(make):
    layer = make()
    query, value = _normal(2, 3, 6), _normal(2, 5, 6)
    for name, mask, expected in (
        ("query_mask", np.ones((2, 5), bool), "`query` without its feature axis, (2, 3)"),
        ("value_mask", np.ones((2, 3), bool), "`value` without its feature axis, (2, 5)"),
        ("key_mask", np.ones((2, 5, 1), bool), "`key` without its feature axis, (2, 5)"),
    ):
        with pytest.raises(
            ValueError, match=re.escape(f"`{name}` must have the shape of {expected}")
        ):
            layer(query, value, **{name: mask})
