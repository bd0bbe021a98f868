"""The steps shared by the attention layers: shapes, masks and subclassing."""

import re

import keras
import numpy as np
import pytest

from keras_attention.layers.attention.additive_attention import AdditiveAttention
from keras_attention.layers.attention.base_attention import BaseAttention
from keras_attention.layers.attention.dot_product_attention import DotProductAttention

RNG = np.random.default_rng(3)

LAYERS = {
    "additive": lambda: AdditiveAttention(units=4),
    "general": lambda: DotProductAttention(score_mode="general"),
    "scaled_dot": lambda: DotProductAttention(score_mode="scaled_dot"),
}


def _normal(*shape):
    return RNG.normal(size=shape).astype("float32")


class _NegativeDistanceAttention(BaseAttention):
    """Scores -|q - k|^2: a subclass that defines nothing but the score."""

    def _compute_scores(self, query, key):
        # (B, Tq, 1, D) - (B, 1, S, D) -> (B, Tq, S)
        difference = query[:, :, None, :] - key[:, None, :, :]
        return -keras.ops.sum(difference * difference, axis=-1)


def test_a_subclass_defining_only_the_score_gets_masks_and_feature_maps():
    query, feature_map = _normal(2, 3), _normal(2, 2, 2, 3)
    value_mask = np.array([[[True, False], [True, True]], [[False, False], [False, False]]])
    output, weights = _NegativeDistanceAttention()(
        query, feature_map, value_mask=value_mask, return_attention_scores=True
    )
    positions = feature_map.reshape(2, 4, 3)
    scores = -np.sum((query[:, None, :] - positions) ** 2, axis=-1)  # (B, S)
    visible = value_mask.reshape(2, 4)
    expected = np.where(visible[0], np.exp(scores[0] - scores[0][visible[0]].max()), 0.0)
    expected /= expected.sum()
    np.testing.assert_allclose(np.asarray(weights)[0].reshape(4), expected, atol=1e-5)
    np.testing.assert_allclose(np.asarray(output)[0], expected @ positions[0], atol=1e-5)
    np.testing.assert_array_equal(weights[1], 0.0)  # nothing visible
    np.testing.assert_array_equal(output[1], 0.0)


def test_the_base_class_has_no_score_of_its_own():
    with pytest.raises(NotImplementedError, match="_compute_scores"):
        BaseAttention()(_normal(2, 3), _normal(2, 4, 3))


def test_a_step_query_mask_zeroes_that_example():
    query, value = _normal(3, 4), _normal(3, 5, 4)
    output, weights = DotProductAttention()(
        query, value, query_mask=np.array([True, False, True]), return_attention_scores=True
    )
    np.testing.assert_array_equal(output[1], 0.0)
    np.testing.assert_array_equal(weights[1], 0.0)
    np.testing.assert_allclose(np.asarray(weights).sum(axis=-1), [1.0, 0.0, 1.0], atol=1e-6)


def test_explicit_value_mask_wins_over_the_keras_mask():
    tokens = keras.Input((None,), dtype="int32")
    embedded = keras.layers.Embedding(5, 4, mask_zero=True)(tokens)
    query = keras.Input((4,))
    value_mask = keras.Input((None,), dtype="bool")
    _, weights = DotProductAttention()(
        query, embedded, value_mask=value_mask, return_attention_scores=True
    )
    model = keras.Model([query, tokens, value_mask], weights)
    ids = np.array([[1, 2, 0], [3, 0, 0]], "int32")
    explicit = np.array([[False, True, True], [True, True, False]])
    got = np.asarray(model([_normal(2, 4), ids, explicit]))
    # Padding token 0 is visible where the explicit mask says so.
    np.testing.assert_array_equal(got > 0, explicit)


@pytest.mark.parametrize("name", list(LAYERS))
@pytest.mark.parametrize(
    "query_shape, value_shape, argument",
    [
        ((2, 4), (2, 4), "value_shape"),  # value of rank 2
        ((2, 4), (2, 1, 2, 3, 4), "value_shape"),  # value of rank 5
        ((2, 1, 3, 4), (2, 3, 4), "query_shape"),  # query of rank 4
        ((2, 4, 3, 2, 4), (2, 3, 4), "query_shape"),
    ],
)
def test_bad_ranks_are_rejected(name, query_shape, value_shape, argument):
    received = {"query_shape": query_shape, "value_shape": value_shape}[argument]
    with pytest.raises(ValueError, match=re.escape(f"Received: {argument}={received}")):
        LAYERS[name]()(np.ones(query_shape, "float32"), np.ones(value_shape, "float32"))


@pytest.mark.parametrize("name", list(LAYERS))
def test_bad_ranks_are_rejected_in_functional_models(name):
    with pytest.raises(ValueError, match=re.escape("Received: query_shape=(None, 2, 3, 4)")):
        LAYERS[name]()(keras.Input((2, 3, 4)), keras.Input((5, 4)))


@pytest.mark.parametrize("name", list(LAYERS))
@pytest.mark.parametrize(
    "value_shape, mask_shape",
    [
        ((2, 5, 4), (2, 5, 1)),  # wrong rank
        ((2, 5, 4), (2,)),
        ((2, 5, 4), (2, 4)),  # wrong length
        ((2, 5, 4), (3, 5)),  # wrong batch
        ((2, 2, 3, 4), (2, 6)),  # a feature map needs (B, H, W)
        ((2, 2, 3, 4), (2, 3, 2)),
    ],
)
def test_bad_value_masks_are_rejected(name, value_shape, mask_shape):
    message = f"Received: value_mask.shape={mask_shape}"
    with pytest.raises(ValueError, match=re.escape(message)):
        LAYERS[name]()(
            _normal(2, 3, 4), _normal(*value_shape), value_mask=np.ones(mask_shape, bool)
        )


@pytest.mark.parametrize("name", list(LAYERS))
@pytest.mark.parametrize(
    "query_shape, mask_shape", [((2, 3, 4), (2, 4)), ((2, 3, 4), (2,)), ((2, 4), (2, 1))]
)
def test_bad_query_masks_are_rejected(name, query_shape, mask_shape):
    with pytest.raises(ValueError, match=re.escape(f"Received: query_mask.shape={mask_shape}")):
        LAYERS[name]()(
            _normal(*query_shape), _normal(2, 5, 4), query_mask=np.ones(mask_shape, bool)
        )


@pytest.mark.parametrize("name", list(LAYERS))
def test_key_must_share_the_positions_of_value(name):
    message = "Received: key_shape=(2, 6, 4), value_shape=(2, 5, 4)"
    with pytest.raises(ValueError, match=re.escape(message)):
        LAYERS[name]()(_normal(2, 3, 4), _normal(2, 5, 4), key=_normal(2, 6, 4))
    message = "Received: key_shape=(2, 20, 4), value_shape=(2, 4, 5, 4)"
    with pytest.raises(ValueError, match=re.escape(message)):
        LAYERS[name]()(_normal(2, 4), _normal(2, 4, 5, 4), key=_normal(2, 20, 4))


@pytest.mark.parametrize("name", list(LAYERS))
def test_query_and_value_must_share_the_batch(name):
    message = "Received: query_shape=(3, 4), value_shape=(2, 5, 4)"
    with pytest.raises(ValueError, match=re.escape(message)):
        LAYERS[name]()(_normal(3, 4), _normal(2, 5, 4))


@pytest.mark.parametrize("name", list(LAYERS))
def test_unknown_feature_sizes_are_rejected_when_building(name):
    with pytest.raises(ValueError, match=re.escape("Received: query_shape=(None, 3, None)")):
        LAYERS[name]().build((None, 3, None), (None, 5, 4))
