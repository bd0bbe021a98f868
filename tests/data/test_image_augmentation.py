"""Training-batch augmentation: shapes, pixel values, background fill, independent draws."""

import doctest

import numpy as np
import pytest
import tensorflow as tf

from keras_attention.data import image_augmentation
from keras_attention.data.image_augmentation import augment_batches
from keras_attention.data.image_augmentation import augment_images
from keras_attention.data.image_augmentation import background_colours
from keras_attention.data.image_augmentation import random_affine_transforms


def _batches(images, batch_size=16):
    labels = np.arange(len(images))
    return tf.data.Dataset.from_tensor_slices((images, labels)).batch(batch_size)


def _augmented(images, kind="geometric", seed=1):
    dataset = augment_batches(_batches(images), kind, seed=seed)
    return np.concatenate([batch for batch, _ in dataset.as_numpy_iterator()])


def _glyphs(count=8):
    # A bright vertical bar left of centre on a dark background, per image.
    images = np.zeros((count, 16, 16, 3), "float32")
    images[:, 3:13, 5:7] = 255.0
    return images


def _pixel_art(count=64, seed=0):
    # 8 x 8 bitmaps of 16 grey levels (0, 17, ..., 255) enlarged 4 times, as upscaled pixel-art digits.
    rng = np.random.default_rng(seed)
    cells = np.round(rng.uniform(0, 1, (count, 8, 8)) ** 3 * 15) * 17.0
    cells[:, [0, -1], :] = 0.0
    cells[:, :, [0, -1]] = 0.0
    big = np.kron(cells, np.ones((1, 4, 4)))  # (count, 32, 32)
    return np.repeat(big[..., None], 3, axis=-1).astype("float32")


def test_geometric_moves_pixels_but_keeps_shape_labels_and_no_flip():
    images = _glyphs()
    dataset = augment_batches(_batches(images, 4), "geometric", seed=1)
    augmented = list(dataset.as_numpy_iterator())
    batch = np.concatenate([b for b, _ in augmented])
    assert batch.shape == images.shape and batch.dtype == np.float32
    assert [labels.tolist() for _, labels in augmented] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert not np.allclose(batch, images)
    # Small moves only: the bar stays in the left half (a flip would put it right).
    columns = batch.mean(axis=(1, 3))  # (B, W)
    centre = (columns * np.arange(16)).sum(-1) / columns.sum(-1)
    assert np.all(centre < 8.0)


def test_every_augmented_pixel_is_one_of_the_images_own_values():
    # Resampling by the nearest pixel: upscaled pixel art keeps its grey levels and
    # sharp edges (bilinear resampling adds grey ramps the plain images never have).
    images = _pixel_art()
    augmented = _augmented(images)
    assert augmented.min() >= 0.0 and augmented.max() <= 255.0
    for plain, moved in zip(images, augmented):
        assert set(np.unique(moved)) <= set(np.unique(plain))
    # Edges stay as sharp: the mean jump between neighbouring pixels is kept.
    sharpness = [np.abs(np.diff(x, axis=2)).mean() for x in (images, augmented)]
    assert sharpness[1] == pytest.approx(sharpness[0], rel=0.25)


def test_uncovered_pixels_take_the_background_colour_instead_of_smearing_edges():
    images = np.full((64, 32, 32, 3), 200.0, "float32")
    images[:, :2, :] = 20.0  # dark ink along the top edge, light background
    augmented = _augmented(images)
    ink = (augmented < 110).sum(axis=(1, 2, 3)) / (images < 110).sum(axis=(1, 2, 3))
    # At most the largest zoom's growth (1.1 x 1.1) and rounding; repeating the edge
    # pixels into what a shift uncovers would stretch the bar to 2-3 times its area.
    assert ink.max() <= 1.3
    assert set(np.unique(augmented)) <= {20.0, 200.0}


def test_background_colour_is_the_median_of_the_border():
    images = np.full((2, 6, 5, 3), 10.0, "float32")
    images[1] = [30.0, 60.0, 90.0]
    images[:, 2:4, :] = 255.0  # a stroke across touches two sides
    np.testing.assert_array_equal(
        background_colours(images).numpy(), [[10.0, 10.0, 10.0], [30.0, 60.0, 90.0]]
    )


def test_draws_are_independent_per_image_new_every_epoch_and_seeded():
    images = np.repeat(_pixel_art(1), 32, axis=0)  # the same image 32 times
    dataset = augment_batches(_batches(images), "geometric", seed=3)
    first, second = (np.concatenate([b for b, _ in dataset.as_numpy_iterator()]) for _ in range(2))
    distinct = {moved.tobytes() for moved in first}
    assert len(distinct) > 16  # within a batch and across batches, not one draw for all
    assert not np.array_equal(first, second)  # another draw at the next epoch
    again = augment_batches(_batches(images), "geometric", seed=3)
    np.testing.assert_array_equal(np.concatenate([b for b, _ in again.as_numpy_iterator()]), first)


def test_a_share_of_the_training_images_stays_plain():
    images = _pixel_art(256)
    augmented = _augmented(images)
    plain = np.mean([np.array_equal(a, b) for a, b in zip(images, augmented)])
    share = image_augmentation.PLAIN_SHARE
    assert share - 0.1 <= plain <= share + 0.1


def test_transforms_are_the_identity_without_moves_and_shift_by_whole_pixels(monkeypatch):
    monkeypatch.setattr(image_augmentation, "MAX_ROTATION_DEGREES", 0.0)
    monkeypatch.setattr(image_augmentation, "ZOOM_RANGE", (1.0, 1.0))
    transforms = random_affine_transforms([0, 5], 64, 20, 10).numpy()  # (B, 8)
    # Output (x, y) reads input (x + a2, y + b2): a pure shift of at most 10% a side.
    np.testing.assert_allclose(transforms[:, [0, 1, 3, 4]], [[1, 0, 0, 1]] * 64, atol=1e-6)
    assert np.abs(transforms[:, 2]).max() <= 1.0 and np.abs(transforms[:, 5]).max() <= 2.0
    image = np.arange(20 * 10, dtype="float32").reshape(1, 20, 10, 1)
    monkeypatch.setattr(image_augmentation, "MAX_SHIFT", 0.0)
    np.testing.assert_array_equal(augment_images(image, "geometric", [0, 1]).numpy(), image)


def test_flip_mirrors_about_half_of_the_images(monkeypatch):
    monkeypatch.setattr(image_augmentation, "PLAIN_SHARE", 0.0)
    for name in ("MAX_ROTATION_DEGREES", "MAX_SHIFT"):
        monkeypatch.setattr(image_augmentation, name, 0.0)
    monkeypatch.setattr(image_augmentation, "ZOOM_RANGE", (1.0, 1.0))
    images = np.repeat(_glyphs(1), 64, axis=0)
    augmented = _augmented(images, "flip")
    mirrored = np.mean([np.array_equal(a, images[0, :, ::-1]) for a in augmented])
    unchanged = np.mean([np.array_equal(a, images[0]) for a in augmented])
    assert mirrored + unchanged == 1.0 and 0.25 <= mirrored <= 0.75


def test_none_returns_the_dataset_itself():
    dataset = _batches(_glyphs())
    assert augment_batches(dataset, "none") is dataset


def test_unknown_kind_is_named():
    with pytest.raises(
        ValueError,
        match=r"`kind` must be one of \('none', 'geometric', 'flip'\). Received: kind='mirror'",
    ):
        augment_batches(_batches(_glyphs()), "mirror")


def test_docstring_examples():
    results = doctest.testmod(image_augmentation, optionflags=doctest.ELLIPSIS)
    assert results.attempted > 0 and results.failed == 0
