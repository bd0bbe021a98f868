"""Built-in image classification data: which shape, and in which quadrant.

Each image holds one shape on a noisy background with a few small distractor
dots. The class is the shape kind ("square", "triangle", "plus") together with
the quadrant of the image it lies in ("top_left", "top_right", "bottom_left",
"bottom_right"): twelve classes that depend on *what* is drawn and *where*.
Shape and background colours are drawn from the same distribution,
independently of the class, so an image's mean colour says nothing about its
label; size and position inside the quadrant are random too. Everything is
generated with NumPy from a seed, so the data needs no download.

Example:

>>> from keras_attention.tasks.image_classification.builtin_shapes import (
...     generate_shape_classification)
>>> images, labels, class_names = generate_shape_classification(24, seed=0)
>>> images.shape, images.dtype, labels.shape
((24, 32, 32, 3), dtype('uint8'), (24,))
>>> class_names[:2]
['square_top_left', 'square_top_right']
"""

import numpy as np

from keras_attention.data.shape_masks import shape_mask

CLASSIFICATION_SHAPES = ("square", "triangle", "plus")
CLASSIFICATION_QUADRANTS = ("top_left", "top_right", "bottom_left", "bottom_right")

_MIN_IMAGE_SIZE = 24
# Shape sizes as fractions of the image side: 10..13 px at 32 px.
_SIZE_RANGE = (10 / 32, 13 / 32)
# Shape and background colours at least this far apart (Euclidean, RGB).
_MIN_CONTRAST = 120.0
_NOISE = 8.0
_NUM_DISTRACTORS = 3
_DISTRACTOR_SIZE = 2


def shape_classification_class_names():
    """The twelve class names, in label order: `"{shape}_{quadrant}"`.

    Returns:
        list of str; label `i` is `shape_classification_class_names()[i]`.

    Example:

    >>> from keras_attention.tasks.image_classification.builtin_shapes import (
    ...     shape_classification_class_names,
    ... )
    >>> len(shape_classification_class_names())
    12
    """
    return [
        f"{shape}_{quadrant}"
        for shape in CLASSIFICATION_SHAPES
        for quadrant in CLASSIFICATION_QUADRANTS
    ]


def _check_int(name, value, minimum):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"`{name}` must be an integer >= {minimum}. Received: {name}={value!r}")
    if value < minimum:
        raise ValueError(f"`{name}` must be an integer >= {minimum}. Received: {name}={value!r}")


def _contrasting_colors(rng):
    """Background and shape colours from one distribution, kept apart."""
    while True:
        background, foreground = rng.integers(0, 256, size=(2, 3)).astype(np.float64)
        if np.linalg.norm(foreground - background) >= _MIN_CONTRAST:
            return background, foreground


def _draw(rng, label, image_size):
    """One image of the shape and quadrant that `label` encodes, at a random size and place."""
    shape = CLASSIFICATION_SHAPES[label // len(CLASSIFICATION_QUADRANTS)]
    quadrant = CLASSIFICATION_QUADRANTS[label % len(CLASSIFICATION_QUADRANTS)]
    half = image_size / 2
    min_size, max_size = (round(fraction * image_size) for fraction in _SIZE_RANGE)
    size = int(rng.integers(min_size, max_size + 1))
    # The whole bounding box stays inside its quadrant, one pixel from its edges.
    row, col = rng.uniform(size / 2 + 1, half - size / 2 - 1, size=2)
    if quadrant.startswith("bottom"):
        row += half
    if quadrant.endswith("right"):
        col += half

    background, foreground = _contrasting_colors(rng)
    canvas = np.broadcast_to(background, (image_size, image_size, 3)).copy()  # (H, W, 3)
    canvas[shape_mask(shape, (row, col), size, image_size)] = foreground

    # Distractor dots never touch the shape's box (grown by one pixel).
    top, bottom = row - size / 2 - 1, row + size / 2 + 1
    left, right = col - size / 2 - 1, col + size / 2 + 1
    placed = 0
    while placed < _NUM_DISTRACTORS:
        y, x = rng.integers(0, image_size - _DISTRACTOR_SIZE + 1, size=2)
        overlaps = (
            y < bottom and y + _DISTRACTOR_SIZE > top and x < right and x + _DISTRACTOR_SIZE > left
        )
        if overlaps:
            continue
        canvas[y : y + _DISTRACTOR_SIZE, x : x + _DISTRACTOR_SIZE] = rng.integers(0, 256, size=3)
        placed += 1

    canvas += rng.normal(0.0, _NOISE, size=canvas.shape)
    return np.clip(np.round(canvas), 0, 255).astype(np.uint8)


def _generate(rng, num_images, image_size):
    num_classes = len(CLASSIFICATION_SHAPES) * len(CLASSIFICATION_QUADRANTS)
    # Balanced: every class appears floor or ceil of num_images / num_classes times.
    labels = rng.permutation(np.arange(num_images) % num_classes).astype(np.int32)
    images = np.zeros((num_images, image_size, image_size, 3), dtype=np.uint8)
    for index, label in enumerate(labels):
        images[index] = _draw(rng, int(label), image_size)
    return images, labels


def generate_shape_classification(num_images, image_size=32, seed=0):
    """Generates a balanced shape-and-quadrant classification set from `seed`.

    Args:
        num_images: number of images.
        image_size: side of the square images in pixels (at least 24); shapes
            scale with it (10 to 13 px at 32).
        seed: integer seed; the same arguments always give the same images.

    Returns:
        tuple `(images, labels, class_names)`: uint8 array
        `(num_images, image_size, image_size, 3)`, int32 array `(num_images,)`
        of labels in `[0, 12)`, and the list of the twelve class names.

    Example:

    >>> from keras_attention.tasks.image_classification.builtin_shapes import (
    ...     generate_shape_classification)
    >>> images, labels, names = generate_shape_classification(12, seed=1)
    >>> sorted(labels.tolist()) == list(range(12))
    True
    """
    _check_int("num_images", num_images, 0)
    _check_int("image_size", image_size, _MIN_IMAGE_SIZE)
    _check_int("seed", seed, 0)
    images, labels = _generate(np.random.default_rng(seed), num_images, image_size)
    return images, labels, shape_classification_class_names()


def shape_classification_splits(num_train, num_validation, num_test, image_size=32, seed=0):
    """Train, validation and test sets drawn from independent random streams.

    Args:
        num_train: number of training images.
        num_validation: number of validation images.
        num_test: number of test images.
        image_size: side of the square images in pixels (at least 24).
        seed: integer seed; each split has its own stream derived from it, so a
            split does not change when the size of another one changes.

    Returns:
        tuple `(splits, class_names)`: `splits` maps "train", "validation",
        "test" to `(images, labels)` as `generate_shape_classification` returns.

    Example:

    >>> from keras_attention.tasks.image_classification.builtin_shapes import (
    ...     shape_classification_splits)
    >>> splits, names = shape_classification_splits(20, 10, 10)
    >>> {name: images.shape[0] for name, (images, labels) in splits.items()}
    {'train': 20, 'validation': 10, 'test': 10}
    """
    _check_int("num_train", num_train, 0)
    _check_int("num_validation", num_validation, 0)
    _check_int("num_test", num_test, 0)
    _check_int("image_size", image_size, _MIN_IMAGE_SIZE)
    _check_int("seed", seed, 0)
    counts = {"train": num_train, "validation": num_validation, "test": num_test}
    splits = {
        name: _generate(np.random.default_rng([seed, stream]), count, image_size)
        for stream, (name, count) in enumerate(counts.items())
    }
    return splits, shape_classification_class_names()
