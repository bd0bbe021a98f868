import keras
import numpy as np
import pytest
import tensorflow as tf
from layer_harness import LayerSpec
from layer_harness import assert_docstring_examples_pass
from layer_harness import harness_test

from keras_attention.layers.position import position_embedding_2d
from keras_attention.layers.position.position_embedding_2d import PositionEmbedding2D
from keras_attention.layers.position.position_grid import resize_position_grid
from keras_attention.layers.vision.patch_embedding import PatchEmbedding


def numpy_bilinear(table, rows, cols):
    """Bilinear resize of (h, w, E) with half-pixel centres and clamped edges."""
    in_rows, in_cols = table.shape[:2]

    def source(index, in_size, out_size):
        position = min(max((index + 0.5) * in_size / out_size - 0.5, 0.0), in_size - 1)
        low = int(np.floor(position))
        return low, min(low + 1, in_size - 1), position - low

    out = np.zeros((rows, cols, table.shape[-1]))
    for r in range(rows):
        r0, r1, tr = source(r, in_rows, rows)
        for c in range(cols):
            c0, c1, tc = source(c, in_cols, cols)
            top = (1 - tc) * table[r0, c0] + tc * table[r0, c1]
            bottom = (1 - tc) * table[r1, c0] + tc * table[r1, c1]
            out[r, c] = (1 - tr) * top + tr * bottom
    return out


RNG = np.random.default_rng(0)

SPECS = [
    LayerSpec(
        "class_token_resized",
        PositionEmbedding2D,
        {"grid_size": (2, 2), "merge": "add", "num_prefix_tokens": 1},
        inputs=[RNG.normal(size=(2, 1 + 3 * 4, 8)).astype("float32")],
        call_kwargs={"grid_size": (3, 4)},
    ),
]


test_harness = harness_test(SPECS)


def _layer(grid_size=(3, 4), width=6, **kwargs):
    layer = PositionEmbedding2D(grid_size, **kwargs)
    layer.build(
        (None, None, width) if kwargs.get("num_prefix_tokens") else (None, None, None, width)
    )
    table = RNG.normal(size=tuple(layer.grid_embeddings.shape)).astype("float32")
    layer.grid_embeddings.assign(table)
    return layer, table


def test_same_grid_returns_the_table_exactly():
    layer, table = _layer()
    got = keras.ops.convert_to_numpy(layer(np.zeros((2, 3, 4, 6), "float32")))
    np.testing.assert_array_equal(got, np.broadcast_to(table, (2, 3, 4, 6)))
    # Flattened tokens are the rows of the table in row-major order.
    flat = keras.ops.convert_to_numpy(layer(np.zeros((1, 12, 6), "float32")))
    np.testing.assert_array_equal(flat[0], table.reshape(12, 6))


def test_resizing_to_the_same_size_is_the_identity_even_with_tensor_sizes():
    table = RNG.normal(size=(3, 5, 4)).astype("float32")
    size = (tf.constant(3), tf.constant(5))
    np.testing.assert_array_equal(np.asarray(resize_position_grid(table, size)), table)


@pytest.mark.parametrize("grid", [(5, 7), (2, 2), (6, 3)])
def test_resize_matches_numpy_bilinear_and_keras_resize(grid):
    layer, table = _layer()
    got = keras.ops.convert_to_numpy(layer(np.zeros((1,) + grid + (6,), "float32")))[0]
    np.testing.assert_allclose(got, numpy_bilinear(table.astype("float64"), *grid), atol=1e-5)
    keras_resized = keras.ops.image.resize(
        table[None], grid, interpolation="bilinear", data_format="channels_last"
    )
    np.testing.assert_allclose(got, keras.ops.convert_to_numpy(keras_resized)[0], atol=1e-5)


def test_bigger_grid_keeps_the_corners():
    layer, table = _layer()
    got = keras.ops.convert_to_numpy(layer(np.zeros((1, 6, 8, 6), "float32")))[0]
    for r, c in ((0, 0), (0, -1), (-1, 0), (-1, -1)):
        np.testing.assert_allclose(got[r, c], table[r, c], rtol=1e-6)
    # Doubling a grid puts every output between its neighbouring table values.
    assert np.all(got <= table.max(axis=(0, 1)) + 1e-6) and np.all(
        got >= table.min(axis=(0, 1)) - 1e-6
    )


def test_prefix_tokens_are_not_interpolated():
    layer, table = _layer(grid_size=(2, 2), width=4, num_prefix_tokens=1)
    prefix = keras.ops.convert_to_numpy(layer.prefix_embeddings)
    got = keras.ops.convert_to_numpy(
        layer(np.zeros((2, 1 + 3 * 3, 4), "float32"), grid_size=(3, 3))
    )
    np.testing.assert_array_equal(got[:, 0], np.broadcast_to(prefix[0], (2, 4)))
    np.testing.assert_allclose(got[0, 1:], numpy_bilinear(table, 3, 3).reshape(9, 4), atol=1e-5)


def test_grid_known_only_at_run_time_under_xla():
    layer, table = _layer()
    embed = tf.function(
        lambda x: layer(x), input_signature=[tf.TensorSpec((None, None, None, 6))], jit_compile=True
    )
    for grid in ((3, 4), (6, 2)):
        got = np.asarray(embed(tf.zeros((1,) + grid + (6,))))[0]
        np.testing.assert_allclose(got, numpy_bilinear(table, *grid), atol=1e-5)


def test_concat_uses_its_own_width():
    layer = PositionEmbedding2D((2, 2), merge="concat", concat_dim=3)
    x = RNG.normal(size=(2, 2, 2, 5)).astype("float32")
    got = keras.ops.convert_to_numpy(layer(x))
    assert got.shape == (2, 2, 2, 8)
    np.testing.assert_array_equal(got[..., :5], x)
    np.testing.assert_array_equal(
        got[0, ..., 5:], keras.ops.convert_to_numpy(layer.grid_embeddings)
    )


def test_model_trained_at_one_size_reuses_its_table_at_another():
    layer = PositionEmbedding2D((2, 2), merge="add", num_prefix_tokens=1)
    small = keras.Input((1 + 4, 4))
    keras.Model(small, layer(small))
    big = keras.Input((1 + 16, 4))
    model = keras.Model(big, layer(big, grid_size=(4, 4)))
    assert tuple(model(np.zeros((3, 17, 4))).shape) == (3, 17, 4)
    assert len(layer.weights) == 2


def test_functional_model_at_any_image_size_uses_the_grid_layout():
    patches = PatchEmbedding(4, hidden_dim=6, flatten=False)
    positions, table = _layer(grid_size=(2, 2), merge="add")
    images = keras.Input((None, None, 3))
    model = keras.Model(images, positions(patches(images)))
    for height, width in ((8, 8), (12, 16)):
        pixels = RNG.normal(size=(1, height, width, 3)).astype("float32")
        got = keras.ops.convert_to_numpy(model(pixels))[0]
        grid_table = numpy_bilinear(table, height // 4, width // 4)
        expected = keras.ops.convert_to_numpy(patches(pixels))[0] + grid_table
        np.testing.assert_allclose(got, expected, atol=1e-5)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"grid_size": (0, 2)}, r"Received: grid_size=\(0, 2\)"),
        ({"grid_size": 4}, r"Received: grid_size=4"),
        ({"grid_size": (2.5, 2)}, r"Received: grid_size=\(2\.5, 2\)"),
        ({"grid_size": (2, 2), "num_prefix_tokens": -1}, r"Received: num_prefix_tokens=-1"),
        ({"grid_size": (2, 2), "merge": "mul"}, r"Received: merge='mul'"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PositionEmbedding2D(**kwargs)


def test_bad_call_structure():
    with pytest.raises(ValueError, match=r"Received: tokens=5, grid_size=\(2, 2\)"):
        PositionEmbedding2D((2, 2))(np.zeros((1, 5, 4)))
    with pytest.raises(ValueError, match=r"Received: tokens=9, grid_size=\(3, 3\)"):
        PositionEmbedding2D((2, 2), num_prefix_tokens=1)(np.zeros((1, 9, 4)), grid_size=(3, 3))
    with pytest.raises(ValueError, match=r"num_prefix_tokens=1"):
        PositionEmbedding2D((2, 2), num_prefix_tokens=1)(np.zeros((1, 2, 2, 4)))
    with pytest.raises(ValueError, match=r"carries its grid\. Received: grid_size=\(2, 2\)"):
        PositionEmbedding2D((2, 2))(np.zeros((1, 2, 2, 4)), grid_size=(2, 2))
    with pytest.raises(ValueError, match=r"Received: inputs\.shape=\(1, 4\)"):
        PositionEmbedding2D((2, 2))(np.zeros((1, 4)))


def test_docstring_examples():
    assert_docstring_examples_pass(position_embedding_2d)


def test_layer_with_prefix_tokens_rejects_a_grid_after_being_built():
    layer = PositionEmbedding2D((2, 2), num_prefix_tokens=1)
    layer(np.zeros((1, 5, 4)))
    with pytest.raises(ValueError, match=r"num_prefix_tokens=1"):
        layer(np.zeros((1, 2, 2, 4)))
    with pytest.raises(ValueError, match=r"Received: grid_size=\(2\.0, 2\)"):
        layer(np.zeros((1, 5, 4)), grid_size=(2.0, 2))
