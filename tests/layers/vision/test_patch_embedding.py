import re

import keras
import numpy as np
import pytest
from layer_harness import LayerSpec
from layer_harness import assert_docstring_examples_pass
from layer_harness import harness_test

from keras_attention.layers.vision import patch_embedding
from keras_attention.layers.vision.patch_embedding import PatchEmbedding


def numpy_patches(images, patch_rows, patch_cols, kernel, bias):
    """Cut (B, H, W, C) into row-major patches, flatten each, multiply by the kernel."""
    batch, height, width, channels = images.shape
    rows, cols = height // patch_rows, width // patch_cols
    patches = images.reshape(batch, rows, patch_rows, cols, patch_cols, channels)
    patches = patches.transpose(0, 1, 3, 2, 4, 5)  # (B, rows, cols, pr, pc, C)
    patches = patches.reshape(batch, rows * cols, patch_rows * patch_cols * channels)
    return patches @ kernel.reshape(-1, kernel.shape[-1]) + bias


RNG = np.random.default_rng(0)

SPECS = [
    LayerSpec(
        "rectangular_patches",
        PatchEmbedding,
        {"patch_size": (2, 4), "hidden_dim": 6},
        inputs=[RNG.normal(size=(2, 4, 8, 3)).astype("float32")],
    ),
]


test_harness = harness_test(SPECS)


@pytest.mark.parametrize("patch_size, image_size", [(4, (8, 12)), ((2, 3), (4, 9))])
def test_matches_reshape_and_matmul_reference(patch_size, image_size):
    layer = PatchEmbedding(patch_size, hidden_dim=5, bias_initializer="random_normal")
    images = RNG.normal(size=(2,) + image_size + (3,)).astype("float32")
    got = keras.ops.convert_to_numpy(layer(images))
    kernel, bias = (keras.ops.convert_to_numpy(w) for w in layer.projection.weights)
    rows, cols = (patch_size, patch_size) if isinstance(patch_size, int) else patch_size
    expected = numpy_patches(images.astype("float64"), rows, cols, kernel, bias)
    assert got.shape == (2, (image_size[0] // rows) * (image_size[1] // cols), 5)
    np.testing.assert_allclose(got, expected, atol=1e-4)


def test_grid_output_and_row_major_flattening():
    images = RNG.normal(size=(1, 6, 8, 3)).astype("float32")
    flat_layer = PatchEmbedding(2, hidden_dim=4)
    tokens = keras.ops.convert_to_numpy(flat_layer(images))
    grid_layer = PatchEmbedding(2, hidden_dim=4, flatten=False)
    grid_layer.build(images.shape)
    grid_layer.set_weights(flat_layer.get_weights())
    grid = keras.ops.convert_to_numpy(grid_layer(images))
    assert grid.shape == (1, 3, 4, 4)
    for r in range(3):
        for c in range(4):
            np.testing.assert_array_equal(tokens[0, r * 4 + c], grid[0, r, c])
    assert grid_layer.compute_output_shape((None, 6, None, 3)) == (None, 3, None, 4)


def test_grid_size_and_output_shape():
    layer = PatchEmbedding((4, 2), hidden_dim=8)
    assert layer.grid_size((5, 16, 6, 3)) == (4, 3)
    assert layer.grid_size((16, 6, 3)) == (4, 3)
    assert layer.grid_size((None, None, 6, 3)) == (None, 3)
    assert layer.compute_output_shape((None, 16, 6, 3)) == (None, 12, 8)
    assert layer.compute_output_shape((None, None, None, 3)) == (None, None, 8)


def test_image_size_known_only_at_run_time():
    layer = PatchEmbedding(4, hidden_dim=3)
    images = keras.Input((None, None, 3))
    model = keras.Model(images, layer(images))
    assert tuple(model(np.zeros((2, 8, 12, 3))).shape) == (2, 6, 3)
    assert tuple(model(np.zeros((1, 16, 4, 3))).shape) == (1, 4, 3)


def test_image_not_divisible_by_patch_size_is_rejected():
    with pytest.raises(ValueError, match=r"Received: image size \(H, W\)=\(10, 8\), patch_size=4"):
        PatchEmbedding(4, hidden_dim=3)(np.zeros((1, 10, 8, 3)))
    with pytest.raises(ValueError, match=r"\(H, W\)=\(4, 7\), patch_size=\(2, 2\)"):
        PatchEmbedding((2, 2), hidden_dim=3).grid_size((4, 7, 3))
    layer = PatchEmbedding(4, hidden_dim=3)
    layer(np.zeros((1, 8, 8, 3)))
    with pytest.raises(ValueError, match=r"\(H, W\)=\(8, 6\)"):
        layer(np.zeros((1, 8, 6, 3)))


@pytest.mark.parametrize("patch_size", [0, -2, 2.5, True, (2, 0), (2, 2, 2), "16"])
def test_bad_patch_size(patch_size):
    with pytest.raises(ValueError, match=r"Received: patch_size=" + re.escape(repr(patch_size))):
        PatchEmbedding(patch_size, hidden_dim=4)


@pytest.mark.parametrize("hidden_dim", [0, -1, 3.0])
def test_bad_hidden_dim(hidden_dim):
    with pytest.raises(ValueError, match=rf"Received: hidden_dim={hidden_dim!r}"):
        PatchEmbedding(2, hidden_dim=hidden_dim)


def test_bad_input_rank():
    with pytest.raises(ValueError, match=r"Received: inputs\.shape=\(1, 8, 8\)"):
        PatchEmbedding(2, hidden_dim=4)(np.zeros((1, 8, 8)))


def test_docstring_examples():
    assert_docstring_examples_pass(patch_embedding)
