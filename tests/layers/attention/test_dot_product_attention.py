"""DotProductAttention against NumPy implementations of Luong et al.'s scores."""

import re

import keras
import numpy as np
import pytest
from embedded_ids_attention import assert_output_and_pooled_output
from embedded_ids_attention import attend_embedded_ids
from layer_harness import LayerSpec
from layer_harness import harness_test
from numpy_attend import numpy_attend

from keras_attention.layers.attention.dot_product_attention import DotProductAttention

RNG = np.random.default_rng(11)


def _normal(*shape):
    return RNG.normal(size=shape).astype("float32")


def _luong_scores(query, key, score_mode, kernel=None):
    """query (B, Tq, Dq), key (B, S, Dk) -> (B, Tq, S), written out per pair."""
    scores = np.zeros((query.shape[0], query.shape[1], key.shape[1]))
    for b, t, s in np.ndindex(*scores.shape):
        q, k = query[b, t].astype("float64"), key[b, s].astype("float64")
        if score_mode == "dot":
            scores[b, t, s] = np.dot(q, k)
        elif score_mode == "scaled_dot":
            scores[b, t, s] = np.dot(q, k) / np.sqrt(k.size)
        else:  # general: q^T W k
            scores[b, t, s] = q @ kernel @ k
    return scores


def _kernel(layer):
    weights = layer.get_weights()
    return weights[0] if weights else None


@pytest.mark.parametrize("score_mode", ["dot", "scaled_dot", "general"])
def test_sequence_query_with_masks_matches_numpy(score_mode):
    query_dim = 4 if score_mode != "general" else 3
    query, key, value = _normal(2, 3, query_dim), _normal(2, 5, 4), _normal(2, 5, 6)
    query_mask = np.array([[True, False, True], [True, True, True]])
    value_mask = np.array([[True, True, False, True, False], [False, True, True, True, True]])
    layer = DotProductAttention(score_mode=score_mode)
    masks = dict(query_mask=query_mask, value_mask=value_mask)
    output, weights = layer(query, value, key=key, **masks, return_attention_scores=True)
    if score_mode == "general":
        assert _kernel(layer).shape == (query_dim, 4)
    scores = _luong_scores(query, key, score_mode, _kernel(layer))
    mask = query_mask[:, :, None] & value_mask[:, None, :]
    expected_output, expected_weights = numpy_attend(scores, value, mask)
    np.testing.assert_allclose(weights, expected_weights, atol=1e-5)
    np.testing.assert_allclose(output, expected_output, atol=1e-5)


def test_scaling_divides_the_dot_scores_by_sqrt_key_size():
    # Large scores: the unscaled softmax is far peakier than the scaled one.
    query, value = 3.0 * _normal(1, 1, 16), 3.0 * _normal(1, 6, 16)
    dot = DotProductAttention(score_mode="dot")(query, value, return_attention_scores=True)[1]
    scaled = DotProductAttention(score_mode="scaled_dot")(
        query, value, return_attention_scores=True
    )[1]
    mask = np.ones((1, 1, 6), bool)
    np.testing.assert_allclose(
        dot, numpy_attend(_luong_scores(query, value, "dot"), value, mask)[1], atol=1e-5
    )
    expected_scaled = numpy_attend(_luong_scores(query, value, "dot") / 4.0, value, mask)[1]
    np.testing.assert_allclose(scaled, expected_scaled, atol=1e-5)


@pytest.mark.parametrize("score_mode", ["scaled_dot", "general"])
def test_single_step_query_on_feature_map_matches_numpy(score_mode):
    batch, height, width = 2, 3, 2
    query, feature_map = _normal(batch, 5), _normal(batch, height, width, 5)
    value_mask = np.ones((batch, height, width), bool)
    value_mask[0, :, 1] = False  # hide the right column of the first image
    layer = DotProductAttention(score_mode=score_mode)
    output, weights = layer(query, feature_map, value_mask=value_mask, return_attention_scores=True)
    assert tuple(output.shape) == (batch, 5) and tuple(weights.shape) == (batch, height, width)

    positions = feature_map.reshape(batch, height * width, 5)  # (B, S, D)
    scores = _luong_scores(query[:, None], positions, score_mode, _kernel(layer))
    expected_output, expected_weights = numpy_attend(
        scores, positions, value_mask.reshape(batch, 1, -1)
    )
    np.testing.assert_allclose(weights, expected_weights.reshape(batch, height, width), atol=1e-5)
    np.testing.assert_allclose(output, expected_output[:, 0], atol=1e-5)


def test_sequence_query_on_feature_map_gives_per_query_maps():
    query, feature_map = _normal(2, 4, 3), _normal(2, 2, 2, 3)
    output, weights = DotProductAttention(score_mode="dot")(
        query, feature_map, return_attention_scores=True
    )
    positions = feature_map.reshape(2, 4, 3)
    expected_output, expected_weights = numpy_attend(
        _luong_scores(query, positions, "dot"), positions, np.ones((2, 4, 4), bool)
    )
    np.testing.assert_allclose(weights, expected_weights.reshape(2, 4, 2, 2), atol=1e-5)
    np.testing.assert_allclose(output, expected_output, atol=1e-5)


def test_embedding_masks_are_used_and_query_mask_reaches_the_output():
    vocabulary, dim = 12, 4
    query_ids = np.array([[5, 6, 7, 0], [1, 2, 0, 0]], "int32")
    value_ids = np.array([[3, 0, 0], [9, 10, 11]], "int32")
    output, pooled_output, query, value = attend_embedded_ids(
        DotProductAttention(score_mode="dot"), query_ids, value_ids, dim, dim, vocabulary
    )
    query_mask, value_mask = query_ids != 0, value_ids != 0
    expected, _ = numpy_attend(
        _luong_scores(query, value, "dot"), value, query_mask[:, :, None] & value_mask[:, None, :]
    )
    assert_output_and_pooled_output(output, pooled_output, expected, query_mask)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("score_mode", ["scaled_dot", "general"])
def test_fully_masked_rows_give_zeros(score_mode, dtype):
    query, value = _normal(2, 3, 4), _normal(2, 5, 4)
    query_mask = np.array([[True, True, False], [True, True, True]])
    value_mask = np.ones((2, 5), bool)
    value_mask[1] = False
    layer = DotProductAttention(score_mode=score_mode, dtype=dtype)
    output, weights = layer(
        query, value, query_mask=query_mask, value_mask=value_mask, return_attention_scores=True
    )
    assert keras.backend.standardize_dtype(output.dtype) == dtype
    output = np.asarray(keras.ops.cast(output, "float32"))
    weights = np.asarray(keras.ops.cast(weights, "float32"))
    assert np.all(np.isfinite(output)) and np.all(np.isfinite(weights))
    for rows in (np.s_[1], np.s_[0, 2]):  # no visible key; a padded query
        np.testing.assert_array_equal(output[rows], 0.0)
        np.testing.assert_array_equal(weights[rows], 0.0)
    np.testing.assert_allclose(weights[0, :2].sum(axis=-1), 1.0, atol=1e-2)


def test_precompute_keys_returns_the_keys():
    layer = DotProductAttention(score_mode="general")
    query, memory = _normal(2, 3), _normal(2, 4, 5)
    layer.build(query.shape, memory.shape)
    keys = layer.precompute_keys(memory)
    np.testing.assert_allclose(keys, memory)
    np.testing.assert_allclose(
        layer(query, memory, precomputed_keys=keys), layer(query, memory), atol=1e-6
    )


@pytest.mark.parametrize("score_mode", ["cosine", "Dot", None])
def test_unknown_score_mode_is_rejected(score_mode):
    with pytest.raises(ValueError, match=re.escape(f"Received: score_mode={score_mode!r}")):
        DotProductAttention(score_mode=score_mode)


@pytest.mark.parametrize("score_mode", ["dot", "scaled_dot"])
def test_dot_scores_need_equal_query_and_key_sizes(score_mode):
    layer = DotProductAttention(score_mode=score_mode)
    message = "Received: query_shape=(2, 3, 5), key_shape=(2, 4, 6)"
    with pytest.raises(ValueError, match=re.escape(message)):
        layer(_normal(2, 3, 5), _normal(2, 4, 6))
    with pytest.raises(
        ValueError, match=re.escape("Received: query_shape=(2, 5), key_shape=(2, 4, 3)")
    ):
        DotProductAttention(score_mode=score_mode)(
            _normal(2, 5), _normal(2, 4, 5), key=_normal(2, 4, 3)
        )


@pytest.mark.parametrize("dropout", [-0.5, 1.0, None])
def test_dropout_must_be_in_zero_one(dropout):
    with pytest.raises(ValueError, match=re.escape(f"Received: dropout={dropout!r}")):
        DotProductAttention(dropout=dropout)


def test_compute_output_shape():
    layer = DotProductAttention(score_mode="general")
    assert layer.compute_output_shape((None, None, 3), (None, None, 7)) == (None, None, 7)
    assert layer.compute_output_shape((4, 3), (4, 5, 6, 7)) == (4, 7)


SPECS = [
    LayerSpec(
        "general_sequence_with_value_mask",
        DotProductAttention,
        {"score_mode": "general", "dropout": 0.1},
        inputs=[_normal(2, 3, 5), _normal(2, 4, 6)],
        tensor_kwargs={"value_mask": np.array([[True, True, False, False], [True] * 4])},
    ),
    LayerSpec(
        "scaled_dot_feature_map_single_step",
        DotProductAttention,
        {"score_mode": "scaled_dot"},
        inputs=[_normal(2, 6), _normal(2, 3, 2, 6)],
        tensor_kwargs={"value_mask": np.array([[[True, False]] * 3, [[True, True]] * 3])},
        call_kwargs={"return_attention_scores": True},
        trainable=False,
    ),
]


# The weightless "scaled_dot" spec trains nothing, which Keras warns about.
test_harness = pytest.mark.filterwarnings("ignore:The model does not have any trainable weights")(
    harness_test(SPECS)
)


# ---------------------------------------------------------------------------
# keras.layers.Attention's arguments and calling style.


def _softmax(scores):
    exp = np.exp(scores - scores.max(-1, keepdims=True))
    return exp / exp.sum(-1, keepdims=True)


def test_keras_list_inputs_and_list_masks_match_separate_arguments():
    query, value, key = _normal(2, 3, 4), _normal(2, 5, 6), _normal(2, 5, 4)
    value_mask = np.array([[True] * 5, [True] * 2 + [False] * 3])
    layer = DotProductAttention(score_mode="dot")
    expected = layer(query, value, key=key, value_mask=value_mask, return_attention_scores=True)
    listed = layer([query, value, key], mask=[None, value_mask], return_attention_scores=True)
    for got, want in zip(listed, expected):
        np.testing.assert_allclose(got, want, atol=1e-6)


@pytest.mark.parametrize("use_scale", [False, True])
def test_concat_scores_match_numpy(use_scale):
    query, value = _normal(2, 3, 4), _normal(2, 5, 4)
    layer = DotProductAttention(score_mode="concat", use_scale=use_scale)
    layer([query, value])
    if use_scale:
        layer.scale.assign(0.5)
    layer.concat_score_weight.assign(2.0)
    _, weights = layer([query, value], return_attention_scores=True)
    scale = 0.5 if use_scale else 1.0
    scores = 2.0 * np.tanh(scale * (query[:, :, None, :] + value[:, None, :, :])).sum(-1)
    np.testing.assert_allclose(weights, _softmax(scores), atol=1e-5)


@pytest.mark.parametrize("score_mode", ["dot", "scaled_dot"])
def test_use_scale_multiplies_the_scores(score_mode):
    query, value = _normal(2, 3, 4), _normal(2, 5, 4)
    layer = DotProductAttention(score_mode=score_mode, use_scale=True)
    layer(query, value)
    layer.scale.assign(3.0)
    _, weights = layer(query, value, return_attention_scores=True)
    scores = query @ value.transpose(0, 2, 1) * 3.0
    if score_mode == "scaled_dot":
        scores = scores / 2.0
    np.testing.assert_allclose(weights, _softmax(scores), atol=1e-5)
    assert [weight.name for weight in layer.weights] == ["scale"]


def test_a_query_with_batch_axes_attends_per_batch_entry():
    query, value = _normal(2, 3, 4, 6), _normal(2, 3, 5, 6)
    value_mask = RNG.random((2, 3, 5)) > 0.3
    value_mask[..., 0] = True
    layer = DotProductAttention()
    output, weights = layer(query, value, value_mask=value_mask, return_attention_scores=True)
    assert tuple(output.shape) == (2, 3, 4, 6) and tuple(weights.shape) == (2, 3, 4, 5)
    for i in range(2):
        for j in range(3):
            want_output, want_weights = layer(
                query[i, j][None],
                value[i, j][None],
                value_mask=value_mask[i, j][None],
                return_attention_scores=True,
            )
            np.testing.assert_allclose(output[i, j], want_output[0], atol=1e-5)
            np.testing.assert_allclose(weights[i, j], want_weights[0], atol=1e-6)
    symbolic = layer(keras.Input((3, 4, 6)), keras.Input((3, 5, 6)), return_attention_scores=True)
    assert [tuple(t.shape) for t in symbolic] == [(None, 3, 4, 6), (None, 3, 4, 5)]


def test_use_causal_mask_hides_later_keys():
    x = _normal(2, 4, 4)
    _, weights = DotProductAttention()([x, x], use_causal_mask=True, return_attention_scores=True)
    np.testing.assert_array_equal(np.triu(np.asarray(weights)[0], k=1), 0.0)
    np.testing.assert_allclose(np.asarray(weights).sum(-1), 1.0, atol=1e-6)


def test_dropout_changes_the_output_in_training_only():
    query, value = _normal(2, 3, 4), _normal(2, 5, 4)
    layer = DotProductAttention(dropout=0.5, seed=3)
    inference = layer(query, value, training=False)
    np.testing.assert_allclose(inference, DotProductAttention()(query, value), atol=1e-6)
    assert not np.allclose(layer(query, value, training=True), inference)


def test_keras_use_scale_and_concat_round_trip_through_config_and_build_config():
    layer = DotProductAttention(score_mode="concat", use_scale=True, dropout=0.1, seed=4)
    layer.build(input_shape=[(2, 3, 4), (2, 5, 4)])
    restored = DotProductAttention.from_config(layer.get_config())
    assert (restored.score_mode, restored.use_scale) == ("concat", True)
    restored.build_from_config(layer.get_build_config())
    assert [weight.name for weight in restored.weights] == ["scale", "concat_score_weight"]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda layer, x: layer(x), "must be called on a list of inputs"),
        (lambda layer, x: layer([x, x, x, x]), "inputs list of length 2 or 3.*Received length: 4"),
        (lambda layer, x: layer([x, x], mask=x), "mask must be a list.*Received: mask="),
        (lambda layer, x: layer([x, x], mask=[x[..., 0]]), "mask list of length 2 or 3"),
        (lambda layer, x: layer([x, x], x), "either as a list .* or as separate arguments"),
    ],
    ids=["one_tensor", "four_inputs", "mask_not_list", "one_mask", "both_styles"],
)
def test_keras_calling_style_errors_say_what_was_received(call, message):
    with pytest.raises(ValueError, match=message):
        call(DotProductAttention(), _normal(1, 2, 2))


def test_unknown_score_mode_names_keras_and_our_modes():
    with pytest.raises(
        ValueError, match=r"\{'dot', 'concat'\}.*'scaled_dot', 'general'.*score_mode='cos'"
    ):
        DotProductAttention(score_mode="cos")
