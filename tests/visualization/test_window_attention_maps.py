"""Window attention put back on the map, checked against loops over tokens."""

import numpy as np
import pytest

from keras_attention.layers.vision.swin_transformer_block import window_token_positions
from keras_attention.visualization.window_maps import window_attention_map
from keras_attention.visualization.window_maps import window_attention_matrices

RNG = np.random.default_rng(4)


def test_matrices_place_each_weight_at_its_tokens_and_drop_padding():
    positions = window_token_positions(3, 3, 2, 1)  # padded to 4 x 4, rolled by one
    weights = RNG.random((2, len(positions), 2, 4, 4)).astype("float32")
    full = window_attention_matrices(weights, positions, 9)
    expected = np.zeros((2, 2, 9, 9), "float32")
    for window, tokens in enumerate(positions):
        for i, query in enumerate(tokens):
            for j, key in enumerate(tokens):
                if query >= 0 and key >= 0:
                    expected[:, :, query, key] = weights[:, window, :, i, j]
    np.testing.assert_array_equal(full, expected)


def test_map_averages_first_stage_blocks_only():
    layouts = [((1, 2), np.array([[0, 1]])), ((1, 2), np.array([[1, 0]])), ((1, 1), [[0]])]
    first = np.array([[[[[0.25, 0.75], [0.25, 0.75]]]]])  # token 1 gets 0.75
    second = np.array([[[[[1.0, 0.0], [1.0, 0.0]]]]])  # window token 0 is map token 1
    last = np.ones((1, 1, 1, 1, 1))
    maps = window_attention_map([first, second, last], layouts)
    np.testing.assert_allclose(maps, [[[0.125, 0.875]]])


def test_mismatched_inputs_say_so():
    with pytest.raises(ValueError, match="one entry per block"):
        window_attention_map([np.zeros((1, 1, 1, 1, 1))], [])
    with pytest.raises(ValueError, match="windows match"):
        window_attention_map([np.zeros((1, 2, 1, 1, 1))], [((1, 1), np.array([[0]]))])
