"""RelativePositionBias: T5's buckets in NumPy, keras-hub's T5 bias, gradients to the table."""

import math

import keras
import numpy as np
import pytest
import tensorflow as tf
from keras_hub.src.models.t5.t5_multi_head_attention import T5MultiHeadAttention
from layer_harness import LayerSpec
from layer_harness import assert_docstring_examples_pass
from layer_harness import harness_test

from keras_attention.layers.position import relative_position_bias
from keras_attention.layers.position.relative_position_bias import RelativePositionBias
from keras_attention.layers.position.relative_position_bias import relative_position_buckets

RNG = np.random.default_rng(9)


def numpy_bucket(query_position, key_position, num_buckets, max_distance, bidirectional):
    """T5's bucket of one pair (Raffel et al.), written out case by case.

    The logarithm is taken in float32, as T5 computes it.
    """
    distance = query_position - key_position  # > 0: the key is before the query
    offset = 0
    if bidirectional:
        num_buckets //= 2
        if distance < 0:
            offset = num_buckets  # keys after the query use the upper half
        distance = abs(distance)
    else:
        distance = max(distance, 0)
    exact = num_buckets // 2
    if distance < exact:
        return offset + distance
    log_ratio = np.log(np.float32(distance) / np.float32(exact))
    spread = (
        log_ratio / np.float32(math.log(max_distance / exact)) * np.float32(num_buckets - exact)
    )
    return offset + min(exact + int(spread), num_buckets - 1)


def numpy_buckets(query_positions, key_length, num_buckets, max_distance, bidirectional):
    return np.array(
        [
            [
                numpy_bucket(i, j, num_buckets, max_distance, bidirectional)
                for j in range(key_length)
            ]
            for i in query_positions
        ]
    )


def _set_table(layer, table):
    layer.embeddings.assign(table.astype("float32"))
    return layer


SPECS = [
    LayerSpec(
        "bidirectional",
        RelativePositionBias,
        {"num_heads": 3, "num_buckets": 8, "max_distance": 16},
        inputs=[RNG.normal(size=(2, 3, 5, 6)).astype("float32")],
        dynamic_axes=[(2, 3)],
    ),
    LayerSpec(
        "causal_offset",
        RelativePositionBias,
        {"num_heads": 2, "num_buckets": 6, "max_distance": 10, "bidirectional": False},
        inputs=[RNG.normal(size=(2, 2, 2, 9)).astype("float32")],
        call_kwargs={"query_offset": 4},
        dynamic_axes=[(2, 3)],
    ),
]

test_harness = harness_test(SPECS)


@pytest.mark.parametrize(
    "num_buckets, max_distance, bidirectional",
    [(32, 128, True), (32, 128, False), (8, 16, True), (10, 20, False), (6, 7, True)],
)
def test_buckets_match_numpy_reference(num_buckets, max_distance, bidirectional):
    query_length, key_length = 40, 300
    got = np.asarray(
        relative_position_buckets(
            query_length, key_length, num_buckets, max_distance, bidirectional
        )
    )
    expected = numpy_buckets(
        range(query_length), key_length, num_buckets, max_distance, bidirectional
    )
    np.testing.assert_array_equal(got, expected)
    assert got.min() >= 0 and got.max() < num_buckets


def test_buckets_with_an_offset_are_the_rows_of_the_full_matrix():
    full = np.asarray(relative_position_buckets(12, 12, 8, 16))
    step = np.asarray(relative_position_buckets(2, 12, 8, 16, query_offset=7))
    np.testing.assert_array_equal(step, full[7:9])


def test_buckets_depend_only_on_the_distance():
    buckets = np.asarray(relative_position_buckets(50, 50, 16, 32))
    for distance in range(-49, 50):
        assert len(set(np.diagonal(buckets, -distance))) == 1


@pytest.mark.parametrize("bidirectional", [True, False])
def test_bias_matches_the_table_at_the_numpy_buckets(bidirectional):
    table = RNG.normal(size=(8, 3))
    layer = _set_table(RelativePositionBias(3, 8, 16, bidirectional=bidirectional), table)
    got = np.asarray(layer.bias(4, 20, query_offset=10))
    buckets = numpy_buckets(range(10, 14), 20, 8, 16, bidirectional)
    np.testing.assert_allclose(got, table[buckets].transpose(2, 0, 1)[None], atol=1e-6)


@pytest.mark.parametrize("is_decoder", [False, True])
def test_matches_keras_hub_t5_bias_with_copied_table(is_decoder):
    t5 = T5MultiHeadAttention(
        is_decoder=is_decoder,
        hidden_dim=8,
        key_value_dim=4,
        num_heads=2,
        dropout=0.0,
        use_relative_attention_bias=True,
    )
    ours = RelativePositionBias(2, num_buckets=32, max_distance=128, bidirectional=not is_decoder)
    ours.embeddings.assign(t5.relative_attention_bias)
    for query_length, key_length, start in [(7, 7, 0), (1, 200, 150), (3, 300, 0)]:
        expected = t5.compute_bias(query_length, key_length, query_start_index=start)
        got = ours.bias(query_length, key_length, query_offset=start)
        np.testing.assert_allclose(np.asarray(got), np.asarray(expected), atol=1e-7)


def test_called_on_scores_adds_the_bias():
    layer = RelativePositionBias(2, 8, 16)
    scores = RNG.normal(size=(3, 2, 4, 6)).astype("float32")
    got = np.asarray(layer(scores, query_offset=2))
    np.testing.assert_allclose(got, scores + np.asarray(layer.bias(4, 6, 2)), atol=1e-6)


def test_table_gets_a_gradient_per_bucket_used():
    layer = RelativePositionBias(2, num_buckets=8, max_distance=16, bidirectional=False)
    weights = RNG.normal(size=(1, 2, 3, 3)).astype("float32")
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer.bias(3, 3) * weights)
    grad = tf.convert_to_tensor(tape.gradient(loss, layer.embeddings.value)).numpy()
    buckets = numpy_buckets(range(3), 3, 8, 16, False)
    expected = np.zeros((8, 2))
    for i in range(3):
        for j in range(3):
            expected[buckets[i, j]] += weights[0, :, i, j]
    np.testing.assert_allclose(grad, expected, atol=1e-6)


def test_bias_under_xla_with_tensor_lengths_and_offset():
    layer = RelativePositionBias(2, 8, 16)

    @tf.function(jit_compile=True)
    def bias(offset):
        return layer.bias(1, 12, query_offset=offset)

    np.testing.assert_allclose(
        np.asarray(bias(tf.constant(5))), np.asarray(layer.bias(12, 12))[:, :, 5:6], atol=1e-7
    )


@pytest.mark.parametrize("policy", ["float16", "bfloat16", "mixed_bfloat16"])
def test_lower_precision_dtypes(policy):
    table = RNG.normal(size=(8, 2))
    layer = _set_table(RelativePositionBias(2, 8, 16, dtype=policy), table)
    bias = layer.bias(3, 5)
    assert keras.backend.standardize_dtype(bias.dtype) == keras.DTypePolicy(policy).compute_dtype
    assert keras.backend.standardize_dtype(layer.embeddings.dtype) in ("float32", policy)
    buckets = numpy_buckets(range(3), 5, 8, 16, True)
    np.testing.assert_allclose(
        np.asarray(keras.ops.cast(bias, "float32"))[0],
        table[buckets].transpose(2, 0, 1),
        atol=2e-2,
    )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"num_heads": 0}, "num_heads"),
        ({"num_heads": 2, "num_buckets": 7}, "num_buckets"),
        ({"num_heads": 2, "num_buckets": 2}, "num_buckets"),
        ({"num_heads": 2, "num_buckets": 1, "bidirectional": False}, "num_buckets"),
        ({"num_heads": 2, "max_distance": 0}, "max_distance"),
        ({"num_heads": 2, "bidirectional": 1}, "bidirectional"),
    ],
)
def test_bad_constructor_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        RelativePositionBias(**kwargs)


def test_scores_with_another_head_count_are_refused():
    with pytest.raises(ValueError, match="attention_scores"):
        RelativePositionBias(2)(np.zeros((1, 3, 4, 4), "float32"))
    with pytest.raises(ValueError, match="attention_scores"):
        RelativePositionBias(2)(np.zeros((1, 4, 4), "float32"))


def test_docstring_examples():
    assert_docstring_examples_pass(relative_position_bias)


@pytest.mark.parametrize(
    "num_buckets, max_distance, bidirectional", [(32, 4, True), (32, 8, True), (8, 4, False)]
)
def test_a_max_distance_within_the_exact_buckets_is_refused(
    num_buckets, max_distance, bidirectional
):
    # Half of a side's buckets hold one distance each: 8 of 32 bidirectional, 4 of 8 causal.
    exact = (num_buckets // 2 if bidirectional else num_buckets) // 2
    message = (
        rf"^`max_distance` must be larger than the {exact} distances that get a bucket each .*"
        rf"Received: max_distance={max_distance}, num_buckets={num_buckets}, "
    )
    with pytest.raises(ValueError, match=message):
        RelativePositionBias(2, num_buckets, max_distance, bidirectional)
    with pytest.raises(ValueError, match=message):
        relative_position_buckets(4, 4, num_buckets, max_distance, bidirectional)
    # One beyond them is the smallest that spreads the rest (no bucket out of range).
    buckets = np.asarray(
        relative_position_buckets(1, 64, num_buckets, exact + 1, bidirectional, query_offset=63)
    )
    assert buckets.min() >= 0 and buckets.max() < num_buckets
