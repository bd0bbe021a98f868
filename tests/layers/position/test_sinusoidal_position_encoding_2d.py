import keras
import numpy as np
import pytest
import tensorflow as tf
from layer_harness import LayerSpec
from layer_harness import assert_docstring_examples_pass
from layer_harness import harness_test
from numpy_sinusoids import numpy_sinusoids

from keras_attention.layers.position import sinusoidal_position_encoding_2d
from keras_attention.layers.position.sinusoidal_position_encoding_2d import (
    SinusoidalPositionEncoding2D,
)
from keras_attention.layers.position.sinusoidal_position_encoding_2d import sinusoidal_table_2d


def numpy_grid_sinusoids(rows, cols, dim, max_wavelength=10000.0):
    """Patch (r, c): first half encodes the row r, second half the column c."""
    table = np.zeros((rows, cols, dim))
    for r in range(rows):
        for c in range(cols):
            table[r, c, : dim // 2] = numpy_sinusoids([r], dim // 2, max_wavelength)[0]
            table[r, c, dim // 2 :] = numpy_sinusoids([c], dim // 2, max_wavelength)[0]
    return table


RNG = np.random.default_rng(0)
GRID = RNG.normal(size=(2, 2, 3, 8)).astype("float32")

SPECS = [
    LayerSpec(
        "grid_add", SinusoidalPositionEncoding2D, {"merge": "add"}, inputs=[GRID], trainable=False
    ),
]


test_harness = harness_test(SPECS)


def test_grid_encoding_matches_formula():
    got = keras.ops.convert_to_numpy(
        SinusoidalPositionEncoding2D(max_wavelength=100)(np.zeros((2, 3, 4, 8)))
    )
    expected = numpy_grid_sinusoids(3, 4, 8, 100.0)
    np.testing.assert_allclose(got, np.broadcast_to(expected, (2, 3, 4, 8)), atol=1e-6)
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(sinusoidal_table_2d((5, 2), 12)),
        numpy_grid_sinusoids(5, 2, 12),
        atol=1e-5,
    )


def test_flattened_tokens_are_row_major_after_zero_prefix_encodings():
    layer = SinusoidalPositionEncoding2D(num_prefix_tokens=2, merge="add")
    x = RNG.normal(size=(1, 2 + 3 * 4, 8)).astype("float32")
    got = keras.ops.convert_to_numpy(layer(x, grid_size=(3, 4)))
    np.testing.assert_array_equal(got[:, :2], x[:, :2])  # prefix tokens unchanged
    expected = numpy_grid_sinusoids(3, 4, 8).reshape(12, 8)  # token r * 4 + c
    np.testing.assert_allclose(got[0, 2:], x[0, 2:] + expected, atol=1e-6)


def test_concat():
    layer = SinusoidalPositionEncoding2D(merge="concat", concat_dim=4)
    x = RNG.normal(size=(2, 2, 3, 6)).astype("float32")
    got = keras.ops.convert_to_numpy(layer(x))
    assert got.shape == (2, 2, 3, 10)
    np.testing.assert_array_equal(got[..., :6], x)
    np.testing.assert_allclose(got[1, ..., 6:], numpy_grid_sinusoids(2, 3, 4), atol=1e-6)
    assert layer.compute_output_shape((None, None, None, 6)) == (None, None, None, 10)


def test_grid_known_only_at_run_time_under_xla():
    layer = SinusoidalPositionEncoding2D()
    encode = tf.function(
        lambda x: layer(x), input_signature=[tf.TensorSpec((None, None, None, 8))], jit_compile=True
    )
    for rows, cols in ((2, 3), (4, 1)):
        got = np.asarray(encode(tf.zeros((1, rows, cols, 8))))
        np.testing.assert_allclose(got[0], numpy_grid_sinusoids(rows, cols, 8), atol=1e-5)


def test_tensor_grid_size_for_flattened_input():
    layer = SinusoidalPositionEncoding2D(num_prefix_tokens=1)
    grid = (keras.ops.convert_to_tensor(2), keras.ops.convert_to_tensor(3))
    got = keras.ops.convert_to_numpy(layer(np.zeros((1, 7, 8), "float32"), grid_size=grid))
    np.testing.assert_allclose(got[0, 1:], numpy_grid_sinusoids(2, 3, 8).reshape(6, 8), atol=1e-6)
    np.testing.assert_array_equal(got[0, 0], 0.0)


def test_width_not_multiple_of_four_is_rejected():
    with pytest.raises(ValueError, match=r"multiple of 4\. Received: dim=6"):
        SinusoidalPositionEncoding2D()(np.zeros((1, 2, 2, 6)))
    with pytest.raises(ValueError, match=r"Received: concat_dim=6"):
        SinusoidalPositionEncoding2D(merge="concat", concat_dim=6)
    with pytest.raises(ValueError, match=r"Received: dim=10"):
        sinusoidal_table_2d((2, 2), 10)


def test_bad_call_structure():
    flat = np.zeros((1, 7, 8), "float32")
    with pytest.raises(ValueError, match=r"required for .* Received: grid_size=None"):
        SinusoidalPositionEncoding2D()(flat)
    with pytest.raises(ValueError, match=r"Received: tokens=7, grid_size=\(2, 2\)"):
        SinusoidalPositionEncoding2D(num_prefix_tokens=1)(flat, grid_size=(2, 2))
    with pytest.raises(ValueError, match=r"Received: grid_size=\(0, 7\)"):
        SinusoidalPositionEncoding2D()(flat, grid_size=(0, 7))
    with pytest.raises(ValueError, match=r"carries its grid\. Received: grid_size=\(1, 2\)"):
        SinusoidalPositionEncoding2D()(np.zeros((1, 1, 2, 8)), grid_size=(1, 2))
    with pytest.raises(ValueError, match=r"num_prefix_tokens=1"):
        SinusoidalPositionEncoding2D(num_prefix_tokens=1)(np.zeros((1, 1, 2, 8)))
    with pytest.raises(ValueError, match=r"Received: inputs\.shape=\(1, 8\)"):
        SinusoidalPositionEncoding2D()(np.zeros((1, 8)))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"merge": "mean"}, r"Received: merge='mean'"),
        ({"num_prefix_tokens": -1}, r"Received: num_prefix_tokens=-1"),
        ({"max_wavelength": 0}, r"Received: max_wavelength=0"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SinusoidalPositionEncoding2D(**kwargs)


def test_docstring_examples():
    assert_docstring_examples_pass(sinusoidal_position_encoding_2d)
