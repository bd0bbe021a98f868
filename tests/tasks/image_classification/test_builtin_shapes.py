"""Shape classification set: balanced, colour-blind labels, shapes where the label says."""

import collections

import numpy as np
import pytest

from keras_attention.tasks.image_classification.builtin_shapes import generate_shape_classification
from keras_attention.tasks.image_classification.builtin_shapes import (
    shape_classification_class_names,
)
from keras_attention.tasks.image_classification.builtin_shapes import shape_classification_splits


def largest_component(mask):
    """Largest 4-connected group of True pixels (plain flood fill)."""
    seen = np.zeros_like(mask)
    best = []
    for start in zip(*np.nonzero(mask)):
        if seen[start]:
            continue
        seen[start] = True
        stack, component = [start], []
        while stack:
            row, col = stack.pop()
            component.append((row, col))
            for r, c in ((row + 1, col), (row - 1, col), (row, col + 1), (row, col - 1)):
                inside = 0 <= r < mask.shape[0] and 0 <= c < mask.shape[1]
                if inside and mask[r, c] and not seen[r, c]:
                    seen[r, c] = True
                    stack.append((r, c))
        if len(component) > len(best):
            best = component
    out = np.zeros_like(mask)
    out[tuple(np.array(best).T)] = True
    return out


def foreground(image):
    """Pixels far from the median (background) colour."""
    pixels = image.astype(float)
    background = np.median(pixels.reshape(-1, 3), axis=0)
    return np.linalg.norm(pixels - background, axis=-1) > 60


def describe(mask):
    """'{shape}_{quadrant}' read from a shape mask with simple geometry."""
    rows, cols = np.nonzero(mask)
    box = mask[rows.min() : rows.max() + 1, cols.min() : cols.max() + 1]
    fill = box.mean()
    widths = box.sum(axis=1)
    corners_empty = not (box[0, 0] or box[0, -1] or box[-1, 0] or box[-1, -1])
    if fill > 0.9:
        shape = "square"
    elif widths[0] < widths[-1] / 2 and box[-1, 0] and box[-1, -1]:
        shape = "triangle"
    elif corners_empty and widths.max() == box.shape[1] and widths[0] < box.shape[1] / 2:
        shape = "plus"
    else:
        shape = f"unknown (fill {fill:.2f})"
    half = mask.shape[0] / 2
    vertical = "top" if rows.mean() < half else "bottom"
    horizontal = "left" if cols.mean() < half else "right"
    return f"{shape}_{vertical}_{horizontal}"


def test_same_seed_same_images_other_seed_different():
    images, labels, names = generate_shape_classification(24, seed=3)
    again, labels_again, _ = generate_shape_classification(24, seed=3)
    other, _, _ = generate_shape_classification(24, seed=4)
    np.testing.assert_array_equal(images, again)
    np.testing.assert_array_equal(labels, labels_again)
    assert not np.array_equal(images, other)
    assert images.shape == (24, 32, 32, 3) and images.dtype == np.uint8
    assert labels.dtype == np.int32
    assert names == shape_classification_class_names()


def test_classes_are_balanced():
    _, labels, names = generate_shape_classification(126, seed=0)
    counts = collections.Counter(labels.tolist())
    assert sorted(counts) == list(range(len(names)))
    assert max(counts.values()) - min(counts.values()) <= 1
    assert len(names) == 12 and len(set(names)) == 12


def test_each_label_shows_its_shape_in_its_quadrant():
    images, labels, names = generate_shape_classification(96, seed=5)
    for image, label in zip(images, labels):
        assert describe(largest_component(foreground(image))) == names[label]


def test_mean_colour_does_not_predict_the_class():
    images, labels, names = generate_shape_classification(1200, seed=1)
    mean_colours = images.reshape(len(images), -1, 3).mean(axis=1)  # (N, 3)
    class_means = np.stack([mean_colours[labels == c].mean(axis=0) for c in range(len(names))])
    spread = mean_colours.std(axis=0)  # about 50 per channel
    # Class means differ by no more than the sampling error of ~100 images.
    assert np.abs(class_means - mean_colours.mean(axis=0)).max() < 4 * spread.max() / np.sqrt(100)
    # A nearest-class-mean classifier on mean colour stays near chance (1 / 12).
    train, test = slice(0, 600), slice(600, None)
    centroids = np.stack(
        [mean_colours[train][labels[train] == c].mean(axis=0) for c in range(len(names))]
    )
    distances = np.linalg.norm(mean_colours[test][:, None] - centroids[None], axis=-1)  # (N, C)
    accuracy = (distances.argmin(axis=1) == labels[test]).mean()
    assert accuracy < 0.2


def test_each_shape_stands_out_whole_from_its_background():
    images, _, _ = generate_shape_classification(48, seed=2)
    for image in images:
        shape_pixels = largest_component(foreground(image)).sum()
        # Between a 10 px triangle (~0.8 * 10 * 10 / 2) and a 13 px square (13 * 13).
        assert 40 <= shape_pixels <= 13 * 13


def test_splits_have_their_sizes_and_are_independent():
    splits, names = shape_classification_splits(24, 12, 12, image_size=24, seed=1)
    assert {name: len(labels) for name, (_, labels) in splits.items()} == {
        "train": 24,
        "validation": 12,
        "test": 12,
    }
    assert splits["train"][0].shape == (24, 24, 24, 3)
    grown, _ = shape_classification_splits(24, 30, 6, image_size=24, seed=1)
    np.testing.assert_array_equal(splits["train"][0], grown["train"][0])
    assert not np.array_equal(splits["validation"][0], splits["test"][0])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"num_images": -3}, "num_images=-3"),
        ({"num_images": 4, "image_size": 16}, "image_size=16"),
        ({"num_images": 4, "seed": "a"}, "seed='a'"),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=f"Received: {message}"):
        generate_shape_classification(**kwargs)


def test_bad_split_size_is_named():
    with pytest.raises(ValueError, match="Received: num_test=-1"):
        shape_classification_splits(4, 4, -1)
