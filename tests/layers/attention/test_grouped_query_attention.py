"""GroupQueryAttention against a NumPy reference, against keras, and with a cache."""

import keras
import numpy as np
import numpy_transformer
import pytest
import tensorflow as tf
from head_attention_shapes import assert_symbolic_shapes_of_output_scores_and_cache
from layer_harness import HARNESS_CHECKS
from layer_harness import LayerSpec
from layer_harness import run_check
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

from keras_attention import layers
from keras_attention.layers.attention.grouped_query_attention import GroupQueryAttention

RNG = np.random.default_rng(11)


def _normal(*shape):
    return RNG.normal(size=shape).astype("float32")


def _layer(num_query_heads=4, num_key_value_heads=2, head_dim=4, **kwargs):
    return GroupQueryAttention(
        head_dim=head_dim,
        num_query_heads=num_query_heads,
        num_key_value_heads=num_key_value_heads,
        **kwargs,
    )


# ---------------------------------------------------------------------------
# NumPy reference (Ainslie et al., 2023): the query has Nq heads, key and value
# Nkv heads; query head u attends with key/value head u // (Nq / Nkv).


def _sublayer_arrays(layer):
    """{"query": (kernel, bias or None), ...} for each projection of the layer."""
    arrays = {}
    for variable in layer.weights:
        sublayer, kind = variable.path.split("/")[-2:]
        kernel, bias = arrays.get(sublayer, (None, None))
        value = keras.ops.convert_to_numpy(variable).astype("float64")
        arrays[sublayer] = (value, bias) if kind == "kernel" else (kernel, value)
    return arrays


def _np_rotary(x, max_wavelength):
    """RoPE on (B, T, N, D) as a complex product: (x_i + j x_{i+D/2}) * exp(j p theta_i)."""
    half = x.shape[-1] // 2
    theta = max_wavelength ** (-2.0 * np.arange(half) / x.shape[-1])  # (D/2,)
    phase = np.exp(1j * np.arange(x.shape[1])[:, None] * theta)  # (T, D/2)
    rotated = (x[..., :half] + 1j * x[..., half:]) * phase[None, :, None, :]
    return np.concatenate([rotated.real, rotated.imag], axis=-1)


def reference_gqa(layer, query, value, key=None, mask=None, causal=False, rotary=None, bias=None):
    """Returns (output (B, T, E), weights (B, Nq, T, S)) computed head by head.

    `bias`, (T, S), (B, T, S) or (B, Nq, T, S), is added to the scaled scores
    of each query head.
    """
    key = value if key is None else key
    arrays = _sublayer_arrays(layer)

    def project(x, name):  # (B, L, dim) -> (B, L, heads, head_dim)
        kernel, bias = arrays[name]
        heads = np.einsum("bld,dnh->blnh", x, kernel)
        return heads if bias is None else heads + bias

    q, k, v = project(query, "query"), project(key, "key"), project(value, "value")
    if rotary is not None:
        q, k = _np_rotary(q, rotary), _np_rotary(k, rotary)
    batch, length, num_query_heads, head_dim = q.shape
    group_size = num_query_heads // k.shape[2]
    visible = np.ones((batch, num_query_heads, length, k.shape[1]), bool)
    if mask is not None:
        mask = np.asarray(mask, bool)
        visible &= mask[:, None] if mask.ndim == 3 else mask
    if causal:
        visible &= np.tril(np.ones(visible.shape[-2:], bool))
    weights = np.zeros(visible.shape)
    heads = np.zeros(q.shape[:2] + (num_query_heads, v.shape[-1]))
    for u in range(num_query_heads):
        shared = u // group_size  # the key/value head of query head u's group
        logits = np.einsum("bth,bsh->bts", q[:, :, u], k[:, :, shared]) / np.sqrt(head_dim)
        if bias is not None:
            head_bias = scores_rank_bias(bias)  # (B | 1, Nq | 1, T, S)
            logits = logits + head_bias[:, u if head_bias.shape[1] > 1 else 0]
        weights[:, u] = numpy_transformer.softmax(logits, visible[:, u])
        heads[:, :, u] = np.einsum("bts,bsh->bth", weights[:, u], v[:, :, shared])
    if "gate" in arrays:
        heads = heads / (1.0 + np.exp(-project(query, "gate")))
    kernel, bias = arrays["attention_output"]
    output = np.einsum("btnh,nhe->bte", heads, kernel)
    return (output if bias is None else output + bias), weights


@pytest.mark.parametrize(
    "heads, kwargs, mask_kind, causal",
    [
        ((4, 2), {}, None, False),
        ((4, 2), {}, "rank3", True),
        ((6, 3), {"use_gate": True}, "rank4", False),
        ((4, 1), {"use_bias": False, "implementation": "chunked"}, "rank3", True),
        ((2, 2), {"rotary_max_wavelength": 100}, None, True),
        ((4, 2), {"sliding_window": 2, "rotary_max_wavelength": 50}, "rank2", False),
    ],
    ids=["groups", "causal", "gate_head_mask", "multi_query_chunked", "mha_rotary", "window"],
)
def test_matches_numpy_reference(heads, kwargs, mask_kind, causal):
    query, value, key = _normal(2, 4, 6), _normal(2, 5, 3), _normal(2, 5, 7)
    layer = _layer(*heads, **kwargs)
    mask = {
        None: None,
        "rank2": RNG.random((4, 5)) > 0.3,
        "rank3": RNG.random((2, 4, 5)) > 0.4,
        "rank4": RNG.random((2, heads[0], 4, 5)) > 0.4,
    }[mask_kind]
    mask_kwargs = {} if mask is None else {"attention_mask": mask}
    output, scores = layer(
        query, value, key, return_attention_scores=True, use_causal_mask=causal, **mask_kwargs
    )
    if "sliding_window" in kwargs:
        positions = np.arange(5)
        window = np.abs(positions[:4, None] - positions[None, :]) < kwargs["sliding_window"]
        mask = window if mask is None else mask & window
    expected, expected_weights = reference_gqa(
        layer, query, value, key, mask, causal, kwargs.get("rotary_max_wavelength")
    )
    assert tuple(scores.shape) == (2, heads[0], 4, 5)
    np.testing.assert_allclose(output, expected, atol=1e-5)
    np.testing.assert_allclose(scores, expected_weights, atol=1e-6)


def test_query_heads_of_one_group_share_keys_and_values():
    # One key/value head and equal query kernels: every query head is the same.
    layer = _layer(num_query_heads=3, num_key_value_heads=1, use_bias=False)
    query, value = _normal(1, 4, 6), _normal(1, 5, 6)
    layer(query, value)
    kernel = np.asarray(layer.query_dense.kernel)
    layer.query_dense.kernel.assign(np.repeat(kernel[:, :1], 3, axis=1))
    _, scores = layer(query, value, return_attention_scores=True)
    scores = np.asarray(scores)
    np.testing.assert_allclose(scores[:, 1], scores[:, 0], atol=1e-7)
    np.testing.assert_allclose(scores[:, 2], scores[:, 0], atol=1e-7)


def test_padding_masks_of_query_value_and_key_are_honoured():
    query, value, key = _normal(2, 4, 6), _normal(2, 5, 6), _normal(2, 5, 6)
    query_mask = np.array([[1, 1, 1, 0], [1, 1, 0, 0]], bool)
    value_mask = np.array([[1, 1, 1, 1, 0], [1, 0, 1, 1, 1]], bool)
    key_mask = np.array([[1, 1, 0, 1, 1], [1, 1, 1, 1, 0]], bool)
    layer = _layer()
    output, scores = layer(
        query,
        value,
        key,
        query_mask=query_mask,
        value_mask=value_mask,
        key_mask=key_mask,
        return_attention_scores=True,
    )
    joint = query_mask[:, :, None] & (value_mask & key_mask)[:, None, :]
    expected, expected_weights = reference_gqa(layer, query, value, key, mask=joint)
    np.testing.assert_allclose(output, expected, atol=1e-5)
    np.testing.assert_allclose(scores, expected_weights, atol=1e-6)


@pytest.mark.parametrize(
    "dtype", ["float32", "float16", "bfloat16", "mixed_float16", "mixed_bfloat16"]
)
@pytest.mark.parametrize("implementation", ["xla", "chunked"])
def test_a_query_that_sees_no_key_gets_zero_attention(dtype, implementation):
    query, value = _normal(2, 3, 6), _normal(2, 4, 6)
    mask = np.ones((2, 3, 4), bool)
    mask[1, 0] = False  # query 0 of example 1 sees no key
    layer = _layer(dtype=dtype, implementation=implementation, bias_initializer="random_normal")
    output = layer(query, value, attention_mask=mask)
    _, scores = layer(query, value, attention_mask=mask, return_attention_scores=True)
    output = keras.ops.convert_to_numpy(keras.ops.cast(output, "float32"))
    scores = keras.ops.convert_to_numpy(keras.ops.cast(scores, "float32"))
    assert np.all(np.isfinite(output)) and np.all(np.isfinite(scores))
    np.testing.assert_array_equal(scores[1, :, 0], 0.0)
    np.testing.assert_allclose(scores[0].sum(axis=-1), 1.0, atol=1e-2)
    # Its heads are 0, so only the output projection's bias is left.
    output_bias = keras.ops.convert_to_numpy(keras.ops.cast(layer.output_dense.bias, "float32"))
    atol = 1e-6 if dtype == "float32" else 2e-2
    np.testing.assert_allclose(output[1, 0], output_bias, atol=atol)


# ---------------------------------------------------------------------------
# Equivalence with keras.layers.GroupQueryAttention on copied weights.


def _keras_and_ours(query, value, key=None, **kwargs):
    """keras' layer and ours, built on these inputs, ours holding keras' weights."""
    theirs = keras.layers.GroupQueryAttention(**kwargs)
    ours = GroupQueryAttention(**kwargs)
    for layer in (theirs, ours):
        layer.build(query.shape, value.shape, None if key is None else key.shape)
    layouts = [(w.path.split("/", 1)[1], tuple(w.shape)) for w in theirs.weights]
    assert [(w.path.split("/", 1)[1], tuple(w.shape)) for w in ours.weights] == layouts
    ours.set_weights(theirs.get_weights())
    return theirs, ours


KERAS_CONFIGS = [
    {"head_dim": 4, "num_query_heads": 4, "num_key_value_heads": 2},
    {"head_dim": 2, "num_query_heads": 6, "num_key_value_heads": 1},
    {"head_dim": 4, "num_query_heads": 4, "num_key_value_heads": 2, "use_gate": True},
    {"head_dim": 4, "num_query_heads": 2, "num_key_value_heads": 2, "use_bias": False},
    {"head_dim": 4, "num_query_heads": 4, "num_key_value_heads": 2, "sliding_window": 2},
]
KERAS_IDS = ["groups", "multi_query", "gate", "mha_no_bias", "sliding_window"]


@pytest.mark.parametrize("kwargs", KERAS_CONFIGS, ids=KERAS_IDS)
@pytest.mark.parametrize("causal", [False, True])
def test_matches_keras_with_copied_weights(kwargs, causal):
    query, value, key = _normal(2, 4, 6), _normal(2, 5, 6), _normal(2, 5, 3)
    mask = RNG.random((2, 4, 5)) > 0.3
    mask[:, :, 0] = True  # every query sees a key, even under the causal mask
    theirs, ours = _keras_and_ours(query, value, key, **kwargs)
    call = dict(attention_mask=mask, use_causal_mask=causal)
    for got, expected in zip(
        ours(query, value, key, return_attention_scores=True, **call),
        theirs(query, value, key, return_attention_scores=True, **call),
    ):
        np.testing.assert_allclose(got, expected, atol=1e-5)
    # Without scores (keras' fused path) and with the causal mask alone.
    np.testing.assert_allclose(
        ours(query, value, key, use_causal_mask=causal),
        theirs(query, value, key, use_causal_mask=causal),
        atol=1e-5,
    )


@pytest.mark.parametrize("causal", [False, True])
def test_matches_keras_with_explicit_padding_masks(causal):
    query, value = _normal(2, 5, 6), _normal(2, 5, 6)
    query_mask = np.array([[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]], bool)
    value_mask = np.array([[1, 1, 1, 0, 0], [1, 0, 1, 1, 1]], bool)
    key_mask = np.array([[1, 1, 1, 1, 1], [1, 1, 0, 1, 1]], bool)
    theirs, ours = _keras_and_ours(
        query, value, value, head_dim=4, num_query_heads=4, num_key_value_heads=2
    )
    masks = {"query_mask": query_mask, "value_mask": value_mask, "key_mask": key_mask}
    expected, expected_scores = theirs(
        query, value, value, return_attention_scores=True, use_causal_mask=causal, **masks
    )
    output, scores = ours(
        query, value, value, return_attention_scores=True, use_causal_mask=causal, **masks
    )
    # keras spreads a query that sees no key (a padded one) over every key;
    # ours gives it 0. Compare the others, and check ours are 0.
    visible = query_mask[:, :, None] & (value_mask & key_mask)[:, None, :]
    if causal:
        visible = visible & np.tril(np.ones((5, 5), bool))
    sees_a_key = visible.any(axis=-1)  # (B, T)
    output, expected = np.asarray(output), np.asarray(expected)
    np.testing.assert_allclose(output[sees_a_key], expected[sees_a_key], atol=1e-5)
    scores = np.asarray(scores).transpose(0, 2, 1, 3)  # (B, T, Nq, S)
    expected_scores = np.asarray(expected_scores).transpose(0, 2, 1, 3)
    np.testing.assert_allclose(scores[sees_a_key], expected_scores[sees_a_key], atol=1e-5)
    np.testing.assert_array_equal(scores[~sees_a_key], 0.0)


def test_matches_keras_with_keras_masks_from_an_embedding():
    ids = np.array([[3, 5, 7, 0, 0], [2, 9, 4, 6, 1]])
    tokens = keras.Input(shape=(5,), dtype="int32")
    embedded = keras.layers.Embedding(12, 6, mask_zero=True)(tokens)
    theirs, ours = _keras_and_ours(
        np.zeros((2, 5, 6)),
        np.zeros((2, 5, 6)),
        head_dim=4,
        num_query_heads=4,
        num_key_value_heads=1,
    )
    model = keras.Model(
        tokens,
        [
            theirs(embedded, embedded, use_causal_mask=True),
            ours(embedded, embedded, use_causal_mask=True),
        ],
    )
    expected, output = (np.asarray(t) for t in model(ids))
    real = ids != 0
    np.testing.assert_allclose(output[real], expected[real], atol=1e-5)


# ---------------------------------------------------------------------------
# Kernels, shapes, dropout.


KERNELS = {
    "xla": {"implementation": "xla"},
    "chunked": {"implementation": "chunked"},
    "fused": {"implementation": "fused"},
    "auto": {"implementation": "auto"},
    "flash_attention": {"flash_attention": True},
}


@pytest.mark.parametrize("kernel", list(KERNELS))
@pytest.mark.parametrize("num_key_value_heads", [1, 2])
def test_every_kernel_matches_the_reference(kernel, num_key_value_heads):
    query, value = _normal(2, 4, 6), _normal(2, 5, 6)
    mask = RNG.random((2, 4, 5)) > 0.3
    mask[0, 1] = False  # a query that sees no key
    layer = _layer(num_key_value_heads=num_key_value_heads, **KERNELS[kernel])
    masks = dict(attention_mask=mask, use_causal_mask=True)
    output = layer(query, value, **masks)  # the kernel itself: no scores asked for
    output_with_scores, scores = layer(query, value, return_attention_scores=True, **masks)
    expected, expected_weights = reference_gqa(layer, query, value, mask=mask, causal=True)
    np.testing.assert_allclose(output, expected, atol=1e-5)
    np.testing.assert_allclose(output_with_scores, expected, atol=1e-5)
    np.testing.assert_allclose(scores, expected_weights, atol=1e-6)


def test_symbolic_shapes_of_output_scores_and_cache():
    layer = _layer(num_query_heads=6, num_key_value_heads=2)
    assert_symbolic_shapes_of_output_scores_and_cache(layer, heads=6, cache_heads=2, features=6)


def test_dropout_is_active_only_in_training():
    query = _normal(2, 6, 8)
    layer = _layer(dropout=0.5, seed=1)
    inference = layer(query, query)
    np.testing.assert_allclose(layer(query, query, training=False), inference)
    assert not np.allclose(layer(query, query, training=True), inference)


def test_activity_regularizer_penalizes_the_output():
    query = _normal(2, 3, 6)
    layer = _layer(activity_regularizer=keras.regularizers.L2(0.5))
    output = np.asarray(layer(query, query))
    assert len(layer.losses) == 1
    # keras averages an activity penalty over the batch.
    expected = 0.5 * np.sum(output**2) / len(query)
    np.testing.assert_allclose(float(layer.losses[0]), expected, rtol=1e-5)


def test_both_keras_names_are_the_same_class():
    assert layers.GroupedQueryAttention is layers.GroupQueryAttention is GroupQueryAttention
    assert keras.saving.get_registered_name(GroupQueryAttention) == (
        "keras_attention>GroupQueryAttention"
    )


# ---------------------------------------------------------------------------
# Incremental decoding with a fixed-size cache of key/value heads.


def _decode(layer, sequence, steps, attention_mask=None, jit_compile=True):
    """Run `sequence` through a cache in chunks of `steps` tokens; returns (B, T, E).

    The cache holds `num_key_value_heads` heads and the whole sequence.
    """
    batch, length, _ = sequence.shape
    cache = np.zeros((batch, 2, length, layer.num_key_value_heads, layer.head_dim), "float32")
    attend = tf.function(layer.__call__, jit_compile=True) if jit_compile else layer
    ends = np.cumsum(steps)
    outputs = []
    for start, end in zip(ends - np.asarray(steps), ends):
        chunk = sequence[:, start:end]
        masks = {} if attention_mask is None else {"attention_mask": attention_mask[:, start:end]}
        output, cache = attend(
            chunk,
            chunk,
            cache=cache,
            cache_update_index=tf.constant(start, "int32"),
            use_causal_mask=True,
            **masks,
        )
        outputs.append(np.asarray(output))
    return np.concatenate(outputs, axis=1)


@pytest.mark.parametrize("num_key_value_heads", [1, 2, 4])
def test_decoding_one_token_at_a_time_under_xla_matches_causal_pass(num_key_value_heads):
    sequence = _normal(2, 6, 8)
    layer = _layer(num_key_value_heads=num_key_value_heads, rotary_max_wavelength=50)
    full = layer(sequence, sequence, use_causal_mask=True)
    np.testing.assert_allclose(_decode(layer, sequence, [1] * 6), full, atol=1e-5)


def test_decoding_in_chunks_with_a_sliding_window_matches_causal_pass():
    sequence = _normal(2, 6, 8)
    layer = _layer(sliding_window=3, rotary_max_wavelength=50, implementation="chunked")
    full = layer(sequence, sequence, use_causal_mask=True)
    decoded = _decode(layer, sequence, [3, 1, 2], jit_compile=False)
    np.testing.assert_allclose(decoded, full, atol=1e-5)


def test_decoding_with_padded_keys_under_xla_matches_causal_pass():
    sequence = _normal(2, 6, 8)
    # Left padding: the first two queries of example 0 see no key at all.
    key_is_real = np.array([[0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 1, 0]], bool)
    attention_mask = np.broadcast_to(key_is_real[:, None, :], (2, 6, 6))
    layer = _layer(num_key_value_heads=1)
    full = layer(sequence, sequence, attention_mask=attention_mask, use_causal_mask=True)
    decoded = _decode(layer, sequence, [1] * 6, attention_mask)
    np.testing.assert_allclose(decoded, full, atol=1e-5)


def test_cache_holds_the_key_value_heads_and_hides_later_slots():
    sequence = _normal(2, 3, 8)
    layer = _layer(num_query_heads=6, num_key_value_heads=2)
    full, full_scores = layer(sequence, sequence, return_attention_scores=True)
    cache = np.zeros((2, 2, 7, 2, 4), "float32")  # 2 key/value heads, not 6
    output, scores, cache = layer(
        sequence, sequence, cache=cache, cache_update_index=0, return_attention_scores=True
    )
    np.testing.assert_allclose(output, full, atol=1e-5)
    np.testing.assert_allclose(np.asarray(scores)[..., :3], full_scores, atol=1e-6)
    np.testing.assert_array_equal(np.asarray(scores)[..., 3:], 0.0)
    arrays = _sublayer_arrays(layer)
    for index, name in enumerate(["key", "value"]):
        kernel, bias = arrays[name]
        expected = np.einsum("btd,dnh->btnh", sequence, kernel) + bias
        np.testing.assert_allclose(np.asarray(cache)[:, index, :3], expected, atol=1e-5)
    np.testing.assert_array_equal(np.asarray(cache)[:, :, 3:], 0.0)


@pytest.mark.parametrize("rotary", [None, 50])
def test_cross_attention_cache_matches_uncached_call(rotary):
    query, memory = _normal(2, 3, 8), _normal(2, 5, 6)
    layer = _layer(num_key_value_heads=1, rotary_max_wavelength=rotary)
    expected = layer(query, memory)
    cache = layer.compute_cache(memory)
    assert tuple(cache.shape) == (2, 2, 5, 1, 4)
    output, same_cache = layer(query, memory[:, :1], cache=cache)
    np.testing.assert_allclose(output, expected, atol=1e-5)
    np.testing.assert_array_equal(same_cache, cache)


# ---------------------------------------------------------------------------
# keras' extension point.


def test_compute_attention_override_with_keras_signature_gets_the_causal_mask():
    seen = {}

    class Recorder(GroupQueryAttention):
        def _compute_attention(self, query, key, value, attention_mask=None, training=None):
            seen["heads"] = (query.shape[2], key.shape[2], value.shape[2])
            seen["mask"] = np.asarray(attention_mask)
            return super()._compute_attention(query, key, value, attention_mask, training)

    sequence = _normal(1, 4, 8)
    layer = Recorder(head_dim=4, num_query_heads=4, num_key_value_heads=2)
    output = layer(sequence, sequence, use_causal_mask=True)
    assert seen["heads"] == (4, 4, 4)  # keys and values come repeated to the query heads
    np.testing.assert_array_equal(
        np.broadcast_to(seen["mask"], (1, 1, 4, 4))[0, 0], np.tril(np.ones((4, 4), bool))
    )
    plain = _layer()
    plain(sequence, sequence)
    plain.set_weights(layer.get_weights())
    np.testing.assert_allclose(output, plain(sequence, sequence, use_causal_mask=True), atol=1e-6)


# ---------------------------------------------------------------------------
# Bad input.


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (
            {"num_query_heads": 6, "num_key_value_heads": 4},
            "num_query_heads=6, num_key_value_heads=4",
        ),
        ({"num_query_heads": 0}, "num_query_heads=0"),
        ({"num_key_value_heads": 0}, "num_key_value_heads=0"),
        ({"num_key_value_heads": 1.5}, "num_key_value_heads=1.5"),
        ({"head_dim": -2}, "head_dim=-2"),
        ({"head_dim": "4"}, "head_dim='4'"),
        ({"head_dim": 3, "rotary_max_wavelength": 100}, "head_dim=3"),
        ({"rotary_max_wavelength": -1}, "rotary_max_wavelength=-1"),
        ({"dropout": 1.0}, "dropout=1.0"),
        ({"sliding_window": 0}, "sliding_window=0"),
        ({"implementation": "flash"}, "implementation='flash'"),
        ({"flash_attention": "yes"}, "flash_attention='yes'"),
        ({"flash_attention": True, "implementation": "chunked"}, "implementation='chunked'"),
        ({"flash_attention": False, "implementation": "fused"}, "flash_attention=False"),
        ({"use_gate": 1}, "use_gate=1"),
        ({"seed": 1.5}, "seed=1.5"),
    ],
)
def test_bad_constructor_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        _layer(**kwargs)


def test_settings_after_keras_positional_arguments_are_keyword_only():
    with pytest.raises(TypeError, match="positional"):
        GroupQueryAttention(4, 4, 2, 0.0, True, None)
    layer = GroupQueryAttention(4, 4, 2, 0.1, False, activity_regularizer="l2", seed=7)
    assert (layer.dropout, layer.use_bias, layer.seed) == (0.1, False, 7)
    assert layer.get_config()["activity_regularizer"]["class_name"] == "L2"


def test_bad_shapes_and_masks():
    layer = _layer()
    with pytest.raises(ValueError, match=r"key_shape=\(2, 4, 6\), value_shape=\(2, 5, 6\)"):
        layer(_normal(2, 3, 6), _normal(2, 5, 6), _normal(2, 4, 6))
    with pytest.raises(ValueError, match=r"query_shape=\(2, 3, 4, 6\)"):
        _layer()(_normal(2, 3, 4, 6), _normal(2, 3, 4, 6))
    query, value = _normal(2, 4, 6), _normal(2, 5, 6)
    with pytest.raises(ValueError, match=r"attention_mask.shape=\(4,\)"):
        layer(query, value, attention_mask=np.ones((4,), bool))
    with pytest.raises(ValueError, match=r"attention_mask.shape=\(2, 2, 4, 5\)"):
        layer(query, value, attention_mask=np.ones((2, 2, 4, 5), bool))  # 2 heads, not 4
    with pytest.raises(ValueError, match="attention_mask.dtype=float32"):
        layer(query, value, attention_mask=np.ones((2, 4, 5), "float32"))


def test_bad_cache_calls():
    query = _normal(2, 1, 6)
    layer = _layer(num_query_heads=4, num_key_value_heads=2)
    with pytest.raises(ValueError, match="cache_update_index=0"):
        layer(query, query, cache_update_index=0)
    # A cache of query heads is refused: it holds the key/value heads.
    with pytest.raises(ValueError, match=r"cache.shape=\(2, 2, 5, 4, 4\)"):
        layer(query, query, cache=np.zeros((2, 2, 5, 4, 4), "float32"), cache_update_index=0)
    with pytest.raises(ValueError, match="unbuilt"):
        _layer().compute_cache(query)


# ---------------------------------------------------------------------------
# Shared harness.

_QUERY = RNG.normal(size=(2, 4, 6)).astype("float32")
_VALUE = RNG.normal(size=(2, 5, 6)).astype("float32")
_MASK = RNG.random((2, 4, 5)) > 0.3

SPECS = [
    LayerSpec(
        "attention_mask_dropout",
        GroupQueryAttention,
        {"head_dim": 4, "num_query_heads": 4, "num_key_value_heads": 2, "dropout": 0.1, "seed": 3},
        inputs=[_QUERY, _VALUE],
        tensor_kwargs={"attention_mask": _MASK},
    ),
    LayerSpec(
        "multi_query_causal_scores_rotary_chunked_gate",
        GroupQueryAttention,
        {
            "head_dim": 4,
            "num_query_heads": 4,
            "num_key_value_heads": 1,
            "rotary_max_wavelength": 100,
            "implementation": "chunked",
            "use_gate": True,
            "sliding_window": 3,
        },
        inputs=[_QUERY, _QUERY],
        call_kwargs={"return_attention_scores": True, "use_causal_mask": True},
    ),
    LayerSpec(
        "attention_bias_per_query_head",
        GroupQueryAttention,
        {"head_dim": 4, "num_query_heads": 4, "num_key_value_heads": 2},
        inputs=[_QUERY, _VALUE],
        tensor_kwargs={"attention_bias": RNG.normal(size=(2, 4, 4, 5)).astype("float32")},
        call_kwargs={"use_causal_mask": True},
    ),
]


@pytest.mark.parametrize("check", HARNESS_CHECKS)
@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_harness(spec, check, tmp_path):
    run_check(spec, check, tmp_path)


# ---------------------------------------------------------------------------
# attention_bias: one per query head, added to the scaled scores on every kernel.


@pytest.mark.parametrize("shape_name", list(BIAS_SHAPES))
@pytest.mark.parametrize("kernel", ATTENTION_KERNELS)
@pytest.mark.parametrize("num_key_value_heads", [1, 2])
def test_attention_bias_matches_numpy_reference(num_key_value_heads, kernel, shape_name):
    query, value, mask = masked_inputs(RNG)
    bias = random_bias(RNG, shape_name, 2, 4, 4, 5)
    layer = _layer(num_key_value_heads=num_key_value_heads, implementation=kernel)
    assert_bias_matches_reference(layer, reference_gqa, query, value, bias, mask)


@pytest.mark.parametrize("kernel", ATTENTION_KERNELS)
def test_attention_bias_of_minus_infinity_on_a_whole_row_gives_zeros(kernel):
    query, value, mask = masked_inputs(RNG)
    layer = _layer(implementation=kernel)
    assert_rows_the_bias_hides_are_zero(layer, reference_gqa, query, value, mask, 4)


def test_query_heads_of_one_group_get_their_own_bias():
    # Equal query kernels and one key/value head: only the bias tells heads apart.
    sequence = _normal(1, 3, 6)
    layer = _layer(num_query_heads=2, num_key_value_heads=1, use_bias=False)
    layer(sequence, sequence)
    kernel = np.asarray(layer.query_dense.kernel)
    layer.query_dense.kernel.assign(np.repeat(kernel[:, :1], 2, axis=1))
    bias = np.zeros((1, 2, 3, 3), "float32")
    bias[0, 1, :, 0] = 5.0  # only query head 1 leans on key 0
    _, scores = layer(sequence, sequence, attention_bias=bias, return_attention_scores=True)
    _, plain = layer(sequence, sequence, return_attention_scores=True)
    scores, plain = np.asarray(scores), np.asarray(plain)
    np.testing.assert_allclose(scores[0, 0], plain[0, 0], atol=1e-6)
    assert np.all(scores[0, 1, :, 0] > plain[0, 1, :, 0] + 0.1)


@pytest.mark.parametrize("bias_name", ["alibi", "relative"])
@pytest.mark.parametrize("num_key_value_heads", [1, 2])
def test_attention_bias_in_cached_decoding_under_xla_matches_causal_pass(
    bias_name, num_key_value_heads
):
    sequence = _normal(2, 6, 8)
    layer = _layer(num_key_value_heads=num_key_value_heads, rotary_max_wavelength=50)
    cache = tf.zeros((2, 2, 6, num_key_value_heads, 4))
    assert_cached_decoding_matches_causal_pass(layer, bias_makers(4)[bias_name], cache, sequence)


def test_relative_position_table_gets_its_gradient_through_the_layer():
    assert_learned_bias_gets_its_gradient(_layer, 4, _normal(2, 5, 6), RNG)


@pytest.mark.parametrize("policy", LOWER_PRECISION)
def test_attention_bias_in_lower_precision(policy):
    assert_lower_precision_is_close(_layer, 4, policy, RNG)


def test_bad_attention_bias_is_refused():
    query, value, _ = masked_inputs(RNG)
    assert_bad_biases_are_refused(_layer(), query, value, 4)

    class Override(GroupQueryAttention):
        def _compute_attention(self, query, key, value, attention_mask=None, training=None):
            return super()._compute_attention(query, key, value, attention_mask, training)

    layer = Override(head_dim=4, num_query_heads=4, num_key_value_heads=2)
    with pytest.raises(ValueError, match="attention_bias.*_compute_attention"):
        layer(query, value, attention_bias=np.zeros((4, 5), "float32"))
