"""Training-batch augmentation: shapes, value range, no flips for glyphs, errors."""

import doctest

import numpy as np
import pytest
import tensorflow as tf

from keras_attention.data import image_augmentation
from keras_attention.data.image_augmentation import augment_batches
from keras_attention.data.image_augmentation import image_augmentation_layers


def _glyph_batches():
    # A bright vertical bar left of centre on a dark background, per image.
    images = np.zeros((8, 16, 16, 3), "float32")
    images[:, 3:13, 5:7] = 255.0
    return tf.data.Dataset.from_tensor_slices((images, np.arange(8))).batch(4), images


def test_geometric_moves_pixels_but_keeps_shape_labels_and_range():
    dataset, images = _glyph_batches()
    augmented = list(augment_batches(dataset, "geometric", seed=1).as_numpy_iterator())
    batch = np.concatenate([b for b, _ in augmented])
    assert batch.shape == images.shape and batch.dtype == np.float32
    assert [labels.tolist() for _, labels in augmented] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert batch.min() >= 0.0 and batch.max() <= 255.0
    assert not np.allclose(batch, images)
    # Small moves only: the bar stays in the left half (a flip would put it right).
    columns = batch.mean(axis=(1, 3))  # (B, W)
    centre = (columns * np.arange(16)).sum(-1) / columns.sum(-1)
    assert np.all(centre < 8.0)


def test_layers_by_kind():
    def names(kind):
        return [type(layer).__name__ for layer in image_augmentation_layers(kind, seed=0)]

    assert names("none") == []
    assert names("geometric") == ["RandomTranslation", "RandomRotation", "RandomZoom"]
    assert names("flip") == names("geometric") + ["RandomFlip"]
    dataset, _ = _glyph_batches()
    assert augment_batches(dataset, "none") is dataset


def test_unknown_kind_is_named():
    with pytest.raises(
        ValueError,
        match=r"`kind` must be one of \('none', 'geometric', 'flip'\). Received: kind='mirror'",
    ):
        image_augmentation_layers("mirror")


def test_docstring_examples():
    results = doctest.testmod(image_augmentation, optionflags=doctest.ELLIPSIS)
    assert results.attempted > 0 and results.failed == 0
