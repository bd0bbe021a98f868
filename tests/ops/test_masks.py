import numpy as np
import pytest

from keras_attention.ops import masks


def test_causal_mask_is_lower_triangular():
    got = np.asarray(masks.causal_mask(4))
    np.testing.assert_array_equal(got, np.tril(np.ones((4, 4), bool)))


def test_causal_mask_with_cache_offset_sees_keys_up_to_its_position():
    # Queries at absolute positions 2 and 3 against a cache of 6 keys.
    got = np.asarray(masks.causal_mask(2, 6, offset=2))
    expected = np.array([[1, 1, 1, 0, 0, 0], [1, 1, 1, 1, 0, 0]], bool)
    np.testing.assert_array_equal(got, expected)


def test_causal_mask_offset_as_tensor():
    import keras

    got = np.asarray(masks.causal_mask(1, 4, offset=keras.ops.convert_to_tensor(1)))
    np.testing.assert_array_equal(got, [[True, True, False, False]])


def test_sliding_window_causal_and_symmetric():
    causal = np.asarray(masks.sliding_window_mask(5, window=2))
    symmetric = np.asarray(masks.sliding_window_mask(5, window=2, causal=False))
    positions = np.arange(5)
    distance = positions[:, None] - positions[None, :]
    np.testing.assert_array_equal(causal, (distance >= 0) & (distance < 2))
    np.testing.assert_array_equal(symmetric, np.abs(distance) < 2)


def test_padding_masks_from_lengths_and_ids():
    np.testing.assert_array_equal(
        np.asarray(masks.padding_mask_from_lengths([1, 3], 4)),
        [[1, 0, 0, 0], [1, 1, 1, 0]],
    )
    ids = np.array([[5, 7, 0, 0], [3, 0, 0, 0]])
    np.testing.assert_array_equal(np.asarray(masks.padding_mask_from_ids(ids)), ids != 0)
    np.testing.assert_array_equal(
        np.asarray(masks.padding_mask_from_ids(ids, padding_id=7)), ids != 7
    )


def test_query_key_mask_and_key_padding_mask():
    query_mask = np.array([[1, 1, 0]], bool)
    key_mask = np.array([[1, 0]], bool)
    got = np.asarray(masks.query_key_mask(query_mask, key_mask))
    np.testing.assert_array_equal(got, query_mask[:, :, None] & key_mask[:, None, :])
    assert masks.query_key_mask() is None
    assert tuple(masks.key_padding_mask(key_mask).shape) == (1, 1, 1, 2)


def test_merge_masks_ands_broadcastable_masks_and_skips_none():
    padding = np.array([[[1, 1, 0]]], bool)  # (1, 1, 3)
    causal = np.asarray(masks.causal_mask(3))  # (3, 3)
    got = np.asarray(masks.merge_masks(None, padding, causal))
    np.testing.assert_array_equal(got, padding & causal)
    assert masks.merge_masks(None, None) is None


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: masks.causal_mask(-1), "query_length.*Received: query_length=-1"),
        (lambda: masks.causal_mask(2, offset=-3), "offset.*Received: offset=-3"),
        (lambda: masks.causal_mask(2.5), "query_length.*Received: query_length=2.5"),
        (lambda: masks.sliding_window_mask(3, window=0), "window.*Received: window=0"),
        (lambda: masks.padding_mask_from_lengths([[1]], 3), "lengths.*Received: lengths.shape"),
        (lambda: masks.key_padding_mask(np.ones((1, 2, 3))), "key_mask.*Received"),
        (
            lambda: masks.merge_masks(np.ones((2, 3), bool), np.ones((4, 3), bool)),
            "broadcast.*\\(2, 3\\).*\\(4, 3\\)",
        ),
    ],
)
def test_bad_mask_arguments_raise(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_positions_and_lengths_that_are_no_integers_are_refused_not_cut():
    import keras_attention as ka

    with pytest.raises(ValueError, match=r"^`lengths` must hold integers.*dtype=float32"):
        ka.ops.padding_mask_from_lengths(np.array([1.5, 2.0], "float32"), 4)
    for call, name in (
        (lambda: ka.ops.relative_positions(2, 3, offset=1.5), "offset=1.5"),
        (lambda: ka.ops.relative_positions(-1, 3), "query_length=-1"),
        (lambda: ka.ops.relative_positions(2, 2.0), "key_length=2.0"),
        (lambda: ka.layers.AlibiBias().bias(2, 2, 3, query_offset=0.5), "offset=0.5"),
    ):
        with pytest.raises(ValueError, match=rf"must be an integer >= 0. Received: {name}"):
            call()
    inputs = np.zeros((1, 3, 8), "float32")
    for layer in (ka.layers.PositionEmbedding(8), ka.layers.TokenAndPositionEmbedding(10, 8, 4)):
        ids_or_features = (
            inputs if isinstance(layer, ka.layers.PositionEmbedding) else inputs[..., 0]
        )
        with pytest.raises(ValueError, match=r"`start_index` must be an integer.*start_index=1.5"):
            layer(ids_or_features, start_index=1.5)
