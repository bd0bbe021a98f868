"""Labelled images as `tf.data` from the built-in shapes, a folder, or tfds.

`load_image_classification_dataset` turns one `--dataset` string into train,
validation and test `tf.data.Dataset`s of `(image, label)` pairs: images are
float32 `(height, width, 3)` with values in 0..255 resized to `image_size`,
labels are scalar int32. Datasets are not batched; only a folder's training
split comes shuffled (by `keras.utils.image_dataset_from_directory`).

Sources:
- "builtin": the generated shape-and-quadrant images of
  `shapes_classification` (no download).
- "folder:PATH": one sub-folder of images per class, read with
  `keras.utils.image_dataset_from_directory`; the validation and test
  images are a fixed, seeded share of the files. Files that cannot be
  decoded are skipped with a warning naming them (an error with `strict`).
  `~` and `$VARIABLES` in PATH are expanded.
- "cifar10", "cifar100", "imagenette" (tfds "imagenette/320px-v2", or any
  "imagenette/CONFIG"): validation is the last `validation_fraction` of the
  training split; test is the official test split (imagenette's official
  validation split, since it has no test split).

Example:

>>> from keras_attention.data.image_classification_sources import (
...     load_image_classification_dataset,
... )
>>> data = load_image_classification_dataset("builtin", 32, builtin_sizes=(24, 12, 12))
>>> image, label = next(iter(data.splits["train"]))
>>> image.shape, image.dtype.name, label.dtype.name, data.num_classes
(TensorShape([32, 32, 3]), 'float32', 'int32', 12)
"""

import dataclasses
import os

import keras
import numpy as np
import tensorflow as tf

from keras_attention.data.image_arguments import check_split_fractions
from keras_attention.data.image_arguments import image_size_pair
from keras_attention.data.image_files import report_undecodable_images
from keras_attention.data.image_files import undecodable_images
from keras_attention.data.shapes_classification import shape_classification_splits
from keras_attention.data.tfds_download import load_tfds

SPLIT_NAMES = ("train", "validation", "test")
TFDS_DATASETS = ("cifar10", "cifar100", "imagenette")
_DEFAULT_IMAGENETTE = "imagenette/320px-v2"
_OFFICIAL_TEST_SPLIT = {"cifar10": "test", "cifar100": "test", "imagenette": "validation"}
_MIN_BUILTIN_SIZE = 24
_DATASET_CHOICES = "'builtin', 'folder:PATH', 'cifar10', 'cifar100' or 'imagenette'"


@dataclasses.dataclass
class ImageClassificationData:
    """Splits of `(image, label)` pairs and the names of their classes.

    Args:
        splits: dict "train", "validation", "test" -> `tf.data.Dataset` of
            `(image float32 (height, width, 3) in 0..255, label int32 ())`.
        class_names: list of str; label `i` names `class_names[i]`.

    Example:

    >>> import tensorflow as tf
    >>> from keras_attention.data.image_classification_sources import (
    ...     ImageClassificationData,
    ... )
    >>> pairs = tf.data.Dataset.from_tensor_slices((tf.zeros((2, 8, 8, 3)), tf.constant([0, 1])))
    >>> data = ImageClassificationData({"train": pairs}, ["cat", "dog"])
    >>> data.num_classes
    2
    """

    splits: dict
    class_names: list

    @property
    def num_classes(self):
        """Number of classes, `len(class_names)`."""
        return len(self.class_names)


# Image files `keras.utils.image_dataset_from_directory` reads.
_IMAGE_EXTENSIONS = (".bmp", ".gif", ".jpeg", ".jpg", ".png")


def native_image_size(dataset, max_files=64):
    """The typical `(height, width)` of a data set's own images, before resizing.

    For "folder:PATH" this is the median height and width of up to
    `max_files` of its images, taken evenly across the class sub-folders,
    so a model can keep their aspect ratio. The other sources have no single
    size worth keeping (the built-in images are drawn at any size; tfds
    sets are square or mixed): None.

    Args:
        dataset: a `--dataset` string, as `load_image_classification_dataset`
            takes.
        max_files: number of images to read at most.

    Returns:
        `(height, width)` ints, or None.

    Example:

    >>> from keras_attention.data.image_classification_sources import native_image_size
    >>> native_image_size("builtin") is None
    True
    """
    if isinstance(max_files, bool) or not isinstance(max_files, int) or max_files <= 0:
        raise ValueError(
            f"`max_files` must be a positive integer. Received: max_files={max_files!r}"
        )
    if not isinstance(dataset, str) or not dataset.startswith("folder:"):
        return None
    folder = os.path.expanduser(os.path.expandvars(dataset[len("folder:") :]))
    if not os.path.isdir(folder):
        raise ValueError(
            f"`dataset` must name an existing folder after 'folder:'; {folder} is not one. "
            f"Received: dataset={dataset!r}"
        )
    per_class = []
    for entry in sorted(os.listdir(folder)):
        path = os.path.join(folder, entry)
        if os.path.isdir(path):
            files = sorted(f for f in os.listdir(path) if f.lower().endswith(_IMAGE_EXTENSIONS))
            per_class.append([os.path.join(path, f) for f in files])
    # Round robin over the classes: every class counts, whatever its size.
    chosen = []
    for index in range(max(map(len, per_class), default=0)):
        chosen.extend(files[index] for files in per_class if index < len(files))
        if len(chosen) >= max_files:
            break
    if not chosen:
        return None
    sizes = np.array(
        [
            tf.image.decode_image(tf.io.read_file(path), expand_animations=False).shape[:2]
            for path in chosen[:max_files]
        ]
    )  # (files, 2)
    height, width = np.median(sizes, axis=0)
    return int(round(height)), int(round(width))


def _to_float_image(image, label, size):
    """Any-size uint8 image -> float32 `(size[0], size[1], 3)` in 0..255, int32 label."""
    image = tf.image.resize(image, size, antialias=True)
    return tf.clip_by_value(image, 0.0, 255.0), tf.cast(label, tf.int32)


def _builtin(size, builtin_sizes, seed):
    if len(builtin_sizes) != 3:
        raise ValueError(
            "`builtin_sizes` must be (num_train, num_validation, num_test). "
            f"Received: builtin_sizes={builtin_sizes!r}"
        )
    # Images are drawn at the requested side when square, so shapes stay crisp.
    square = size[0] == size[1] and size[0] >= _MIN_BUILTIN_SIZE
    side = size[0] if square else 32
    arrays, class_names = shape_classification_splits(*builtin_sizes, image_size=side, seed=seed)
    splits = {}
    for name in SPLIT_NAMES:
        images, labels = arrays[name]
        dataset = tf.data.Dataset.from_tensor_slices((images, labels))
        if square:
            dataset = dataset.map(lambda image, label: (tf.cast(image, tf.float32), label))
        else:
            dataset = dataset.map(lambda image, label: _to_float_image(image, label, size))
        splits[name] = dataset
    return ImageClassificationData(splits, class_names)


def _image_files(folder):
    """Image files of the class sub-folders, as `image_dataset_from_directory` lists them."""
    paths = []
    for root, _, files in sorted(os.walk(folder)):
        if root == folder:
            continue
        images = [name for name in sorted(files) if name.lower().endswith(_IMAGE_EXTENSIONS)]
        paths.extend(os.path.join(root, name) for name in images)
    return paths


def _folder(dataset, folder, size, validation_fraction, test_fraction, seed, strict=False):
    if not os.path.isdir(folder):
        raise ValueError(
            f"`dataset` must name an existing folder after 'folder:'; {folder} is not one. "
            f"Received: dataset={dataset!r}"
        )
    entries = os.listdir(folder)
    if not any(os.path.isdir(os.path.join(folder, entry)) for entry in entries):
        raise ValueError(
            f"`dataset` folder must hold one sub-folder of images per class; {folder} has none. "
            f"Received: dataset={dataset!r}"
        )
    bad = undecodable_images(_image_files(folder))
    report_undecodable_images(bad, dataset, strict)
    held_out = validation_fraction + test_fraction
    options = dict(labels="inferred", label_mode="int", image_size=size, batch_size=None)
    options.update(shuffle=True, seed=seed, verbose=False)
    if held_out == 0:
        train = keras.utils.image_dataset_from_directory(folder, **options)
        held = train.take(0)
    else:
        # The files are shuffled with `seed` before the split, so the held-out
        # images are a fixed sample from every class; that split is not shuffled.
        train, held = keras.utils.image_dataset_from_directory(
            folder, validation_split=held_out, subset="both", **options
        )
    num_held = int(held.cardinality())
    num_validation = int(round(num_held * validation_fraction / held_out)) if held_out else 0
    splits = {
        "train": train,
        "validation": held.take(num_validation),
        "test": held.skip(num_validation),
    }
    if bad:
        # Exactly the files named above fail to decode; drop those elements.
        splits = {name: split.ignore_errors() for name, split in splits.items()}
    return ImageClassificationData(splits, list(train.class_names))


def _tfds(dataset, size, validation_fraction, data_dir):
    name = _DEFAULT_IMAGENETTE if dataset == "imagenette" else dataset
    percent = int(round(validation_fraction * 100))
    if not 1 <= percent <= 99:
        raise ValueError(
            "`validation_fraction` must be between 0.01 and 0.99 for tfds datasets, whose "
            f"validation split is a percentage of the training split. "
            f"Received: validation_fraction={validation_fraction!r}"
        )
    tfds_splits = [
        f"train[:{100 - percent}%]",
        f"train[{100 - percent}%:]",
        _OFFICIAL_TEST_SPLIT[name.split("/")[0]],
    ]
    datasets, info = load_tfds(
        name,
        split=tfds_splits,
        as_supervised=True,
        with_info=True,
        shuffle_files=False,
        data_dir=data_dir,
    )
    splits = {
        split: pairs.map(
            lambda image, label: _to_float_image(image, label, size),
            num_parallel_calls=tf.data.AUTOTUNE,
        )
        for split, pairs in zip(SPLIT_NAMES, datasets)
    }
    return ImageClassificationData(splits, list(info.features["label"].names))


def load_image_classification_dataset(
    dataset,
    image_size,
    *,
    validation_fraction=0.1,
    test_fraction=0.1,
    seed=0,
    builtin_sizes=(20000, 2000, 2000),
    data_dir=None,
    strict=False,
):
    """Loads labelled images for training and evaluating a classifier.

    Args:
        dataset: "builtin", "folder:PATH", "cifar10", "cifar100" or
            "imagenette" / "imagenette/CONFIG" (see the module docstring).
        image_size: int or `(height, width)`; every image is resized to it.
        validation_fraction: share of a folder's images, or of a tfds
            training split, held out for validation.
        test_fraction: share of a folder's images held out for testing (the
            other sources have their own test images).
        seed: seed of the built-in images and of a folder's split.
        builtin_sizes: `(num_train, num_validation, num_test)` images for
            "builtin".
        data_dir: tfds data directory (tfds' default when None).
        strict: a folder's image file that cannot be decoded raises a
            ValueError naming it, instead of being skipped with a warning
            naming it.

    Returns:
        `ImageClassificationData` whose `splits` maps "train", "validation",
        "test" to `tf.data.Dataset`s of `(image float32 (height, width, 3) in
        0..255, label int32 ())`, and whose `class_names` names the labels.

    Example:

    >>> from keras_attention.data.image_classification_sources import (
    ...     load_image_classification_dataset,
    ... )
    >>> data = load_image_classification_dataset("builtin", 24, builtin_sizes=(12, 12, 0))
    >>> [int(data.splits[name].cardinality()) for name in ("train", "validation", "test")]
    [12, 12, 0]
    """
    size = image_size_pair(image_size)
    check_split_fractions(validation_fraction, test_fraction)
    if not isinstance(dataset, str):
        raise ValueError(f"`dataset` must be {_DATASET_CHOICES}. Received: dataset={dataset!r}")
    if dataset == "builtin":
        return _builtin(size, tuple(builtin_sizes), seed)
    if dataset.startswith("folder:"):
        folder = os.path.expanduser(os.path.expandvars(dataset[len("folder:") :]))
        return _folder(dataset, folder, size, validation_fraction, test_fraction, seed, strict)
    if dataset in TFDS_DATASETS or dataset.startswith("imagenette/"):
        return _tfds(dataset, size, validation_fraction, data_dir)
    raise ValueError(f"`dataset` must be {_DATASET_CHOICES}. Received: dataset={dataset!r}")
