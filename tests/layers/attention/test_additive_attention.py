"""AdditiveAttention against a NumPy implementation of Bahdanau et al.'s score."""

import re

import keras
import numpy as np
import pytest
from embedded_ids_attention import assert_output_and_pooled_output
from embedded_ids_attention import attend_embedded_ids
from layer_harness import LayerSpec
from layer_harness import harness_test
from numpy_attend import numpy_attend

from keras_attention.layers.attention.additive_attention import AdditiveAttention

RNG = np.random.default_rng(7)


def _normal(*shape):
    return RNG.normal(size=shape).astype("float32")


def _bahdanau_scores(query, key, weights):
    """e[b, t, s] = v . tanh(W_q q[b, t] + W_k k[b, s] + b); query (B, Tq, Dq), key (B, S, Dk)."""
    query_kernel, key_kernel, bias, score_kernel = weights
    scores = np.zeros((query.shape[0], query.shape[1], key.shape[1]))
    for b in range(query.shape[0]):
        for t in range(query.shape[1]):
            for s in range(key.shape[1]):
                hidden = np.tanh(query[b, t] @ query_kernel + key[b, s] @ key_kernel + bias)
                scores[b, t, s] = hidden @ score_kernel[:, 0]
    return scores


def _weights(layer):
    """(W_q, W_k, b, v) from get_weights(), a zero bias when use_bias=False."""
    named = {w.path.split("/", 1)[1]: value for w, value in zip(layer.weights, layer.get_weights())}
    bias = named.get("key_dense/bias", np.zeros(layer.units, "float32"))
    return named["query_dense/kernel"], named["key_dense/kernel"], bias, named["score_dense/kernel"]


def _full_mask(query_mask, value_mask):
    """(B, Tq, S) bool from (B, Tq) and (B, S)."""
    return query_mask[:, :, None] & value_mask[:, None, :]


def test_sequence_query_with_separate_key_and_masks_matches_numpy():
    query, key, value = _normal(2, 3, 5), _normal(2, 4, 7), _normal(2, 4, 6)
    query_mask = np.array([[True, True, False], [True, True, True]])
    value_mask = np.array([[True, False, True, True], [True, True, True, False]])
    # A bias that is not zero, so that its place in the formula is tested.
    layer = AdditiveAttention(units=8, bias_initializer="random_normal")
    masks = dict(query_mask=query_mask, value_mask=value_mask)
    output, weights = layer(query, value, key=key, **masks, return_attention_scores=True)
    scores = _bahdanau_scores(query, key, _weights(layer))
    expected_output, expected_weights = numpy_attend(
        scores, value, _full_mask(query_mask, value_mask)
    )
    np.testing.assert_allclose(weights, expected_weights, atol=1e-5)
    np.testing.assert_allclose(output, expected_output, atol=1e-5)
    assert not np.any(np.asarray(output)[0, 2]), "a padded query must give 0"


def test_single_step_query_matches_numpy():
    query, value = _normal(3, 5), _normal(3, 4, 6)
    layer = AdditiveAttention(units=6)
    output, weights = layer(query, value, return_attention_scores=True)
    assert tuple(output.shape) == (3, 6) and tuple(weights.shape) == (3, 4)
    scores = _bahdanau_scores(query[:, None], value, _weights(layer))
    expected_output, expected_weights = numpy_attend(scores, value, np.ones(scores.shape, bool))
    np.testing.assert_allclose(output, expected_output[:, 0], atol=1e-5)
    np.testing.assert_allclose(weights, expected_weights[:, 0], atol=1e-5)


@pytest.mark.parametrize("single_step", [True, False], ids=["step", "sequence"])
def test_image_feature_map_matches_numpy_on_flattened_positions(single_step):
    batch, height, width = 2, 2, 3
    query = _normal(batch, 5) if single_step else _normal(batch, 4, 5)
    feature_map = _normal(batch, height, width, 6)
    value_mask = np.ones((batch, height, width), bool)
    value_mask[1, 0, :] = False  # hide the top row of the second image
    layer = AdditiveAttention(units=4, use_bias=False)
    output, weights = layer(query, feature_map, value_mask=value_mask, return_attention_scores=True)

    queries = query[:, None] if single_step else query  # (B, Tq, Dq)
    positions = feature_map.reshape(batch, height * width, 6)  # (B, S, Dv)
    scores = _bahdanau_scores(queries, positions, _weights(layer))
    mask = np.broadcast_to(value_mask.reshape(batch, 1, height * width), scores.shape)
    expected_output, expected_weights = numpy_attend(scores, positions, mask)
    expected_weights = expected_weights.reshape(batch, queries.shape[1], height, width)
    if single_step:
        expected_output, expected_weights = expected_output[:, 0], expected_weights[:, 0]
    assert tuple(weights.shape) == expected_weights.shape
    np.testing.assert_allclose(weights, expected_weights, atol=1e-5)
    np.testing.assert_allclose(output, expected_output, atol=1e-5)


def test_precomputed_keys_are_the_key_projection_and_give_the_same_output():
    query, memory = _normal(2, 5), _normal(2, 4, 6)
    layer = AdditiveAttention(units=3, bias_initializer="ones")
    with pytest.raises(ValueError, match="needs a built layer"):
        layer.precompute_keys(memory)
    layer.build(query.shape, memory.shape)
    _, key_kernel, bias, _ = _weights(layer)
    keys = layer.precompute_keys(memory)
    np.testing.assert_allclose(keys, memory @ key_kernel + bias, atol=1e-5)
    scores = _bahdanau_scores(query[:, None], memory, _weights(layer))
    expected, _ = numpy_attend(scores, memory, np.ones(scores.shape, bool))
    np.testing.assert_allclose(
        layer(query, memory, precomputed_keys=keys), expected[:, 0], atol=1e-5
    )
    with pytest.raises(ValueError, match=re.escape("Received: precomputed_keys.shape=(2, 4, 6)")):
        layer(query, memory, precomputed_keys=memory)


def test_precomputed_keys_of_a_feature_map_keep_its_layout():
    layer = AdditiveAttention(units=3)
    feature_map = _normal(2, 2, 3, 4)
    layer.build((2, 5), feature_map.shape)
    keys = layer.precompute_keys(feature_map)
    assert tuple(keys.shape) == (2, 2, 3, 3)
    query = _normal(2, 5)
    np.testing.assert_allclose(
        layer(query, feature_map, precomputed_keys=keys), layer(query, feature_map), atol=1e-6
    )


def test_embedding_masks_are_used_and_query_mask_reaches_the_output():
    vocabulary, query_dim, value_dim = 10, 5, 6
    query_ids = np.array([[3, 4, 0], [1, 2, 5]], "int32")
    value_ids = np.array([[7, 8, 9, 0], [1, 0, 0, 0]], "int32")
    layer = AdditiveAttention(units=4)
    output, pooled_output, query, value = attend_embedded_ids(
        layer, query_ids, value_ids, query_dim, value_dim, vocabulary
    )
    query_mask, value_mask = query_ids != 0, value_ids != 0
    scores = _bahdanau_scores(query, value, _weights(layer))
    expected, _ = numpy_attend(scores, value, _full_mask(query_mask, value_mask))
    assert_output_and_pooled_output(output, pooled_output, expected, query_mask)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_fully_masked_rows_give_zeros(dtype):
    query, value = _normal(2, 3, 4), _normal(2, 5, 4)
    value_mask = np.ones((2, 5), bool)
    value_mask[1] = False  # the second example sees no key at all
    layer = AdditiveAttention(units=4, dtype=dtype)
    output, weights = layer(query, value, value_mask=value_mask, return_attention_scores=True)
    output = np.asarray(keras.ops.cast(output, "float32"))
    weights = np.asarray(keras.ops.cast(weights, "float32"))
    assert np.all(np.isfinite(output)) and np.all(np.isfinite(weights))
    np.testing.assert_array_equal(output[1], 0.0)
    np.testing.assert_array_equal(weights[1], 0.0)
    np.testing.assert_allclose(weights[0].sum(axis=-1), 1.0, atol=1e-2)


def test_dropout_acts_in_training_only():
    query, value = _normal(2, 3, 4), _normal(2, 6, 4)
    layer = AdditiveAttention(units=4, dropout=0.5, seed=1)
    inference, weights = layer(query, value, return_attention_scores=True, training=False)
    scores = _bahdanau_scores(query, value, _weights(layer))
    expected, _ = numpy_attend(scores, value, np.ones(scores.shape, bool))
    np.testing.assert_allclose(inference, expected, atol=1e-5)
    training_output, training_weights = layer(
        query, value, return_attention_scores=True, training=True
    )
    # The returned weights are those before dropout; the output uses dropped ones.
    np.testing.assert_allclose(training_weights, weights, atol=1e-6)
    assert not np.allclose(training_output, inference)


def test_compute_output_shape():
    layer = AdditiveAttention(units=4)
    assert layer.compute_output_shape((2, 3, 5), (2, 7, 6)) == (2, 3, 6)
    assert layer.compute_output_shape((None, 5), (None, 4, 4, 6), (None, 4, 4, 2)) == (None, 6)


@pytest.mark.parametrize("units", [0, -3, 2.5, True, "8"])
def test_units_must_be_a_positive_integer(units):
    with pytest.raises(ValueError, match=re.escape(f"Received: units={units!r}")):
        AdditiveAttention(units=units)


@pytest.mark.parametrize("dropout", [-0.1, 1.0, 1.5, "0.1"])
def test_dropout_must_be_in_zero_one(dropout):
    with pytest.raises(ValueError, match=re.escape(f"in [0, 1). Received: dropout={dropout!r}")):
        AdditiveAttention(units=4, dropout=dropout)


SPECS = [
    LayerSpec(
        "sequence_with_value_mask",
        AdditiveAttention,
        {"units": 8, "dropout": 0.1, "seed": 5},
        inputs=[_normal(2, 3, 5), _normal(2, 4, 6)],
        tensor_kwargs={
            "value_mask": np.array([[True, True, True, False], [True, True, True, True]])
        },
    ),
    LayerSpec(
        "feature_map_single_step",
        AdditiveAttention,
        {"units": 4, "use_bias": False},
        inputs=[_normal(2, 5), _normal(2, 2, 3, 6)],
        tensor_kwargs={"value_mask": np.array([[[True] * 3, [True, False, True]]] * 2)},
        call_kwargs={"return_attention_scores": True},
    ),
]


test_harness = harness_test(SPECS)
