"""Labelled images as `tf.data` from the built-in shapes, folders as downloaded, `datasets` or tfds.

`load_image_classification_dataset` turns one `--dataset` string into train,
validation and test `tf.data.Dataset`s of `(image, label)` pairs: images are
float32 `(height, width, 3)` with values in 0..255 resized to `image_size`,
labels are scalar int32. Datasets are not batched; only a folder's training
split comes shuffled (a fixed, seeded order).

Sources:
- "builtin": the generated shape-and-quadrant images of
  `shapes_classification` (no download).
- "folder:PATH": one sub-folder of images per class, or split folders
  `train/`, `val/` (or `valid/`, `validation/`) and optionally `test/`,
  each holding the same class folders (`image_folders`). Class folders
  alone are split at random (seeded shares of the files); split folders
  are the splits: without `test/`, test is every other image of each
  class of `val/` (the others stay for validation); with `test/` but no
  validation folder, validation is a seeded share of `train/`. Files that
  cannot be decoded (and `._x.jpg` AppleDouble files) are skipped with a
  warning naming them (an error with `strict`). `~` and `$VARIABLES` in
  PATH are expanded.
- "hf:PATH": a `datasets.DatasetDict.save_to_disk` folder with an `image`
  (or `img`) column and a `ClassLabel` `label` column (`hf_datasets`).
- "cifar10", "cifar100", "imagenette" (tfds "imagenette/320px-v2", or any
  "imagenette/CONFIG"): validation is the last `validation_fraction` of the
  training split; test is the official test split (imagenette's official
  validation split, since it has no test split).

Example:

>>> from keras_attention.tasks.image_classification.sources import (
...     load_image_classification_dataset,
... )
>>> data = load_image_classification_dataset("builtin", 32, builtin_sizes=(24, 12, 12))
>>> image, label = next(iter(data.splits["train"]))
>>> image.shape, image.dtype.name, label.dtype.name, data.num_classes
(TensorShape([32, 32, 3]), 'float32', 'int32', 12)
>>> data.split_sizes
{'train': 24, 'validation': 12, 'test': 12}
"""

import dataclasses
import os

import numpy as np
import tensorflow as tf

from keras_attention.data.classification_splits import ALL
from keras_attention.data.classification_splits import complete_classification_splits
from keras_attention.data.dataset_paths import names_for_message
from keras_attention.data.dataset_splits import SPLIT_NAMES
from keras_attention.data.hf_datasets import hf_image_classification_files
from keras_attention.data.hf_datasets import hf_image_pairs
from keras_attention.data.image_arguments import check_split_fractions
from keras_attention.data.image_arguments import image_size_pair
from keras_attention.data.image_files import report_undecodable_images
from keras_attention.data.image_files import undecodable_images
from keras_attention.data.tfds_download import load_tfds
from keras_attention.progress import ProgressBar
from keras_attention.tasks.image_classification.builtin_shapes import shape_classification_splits
from keras_attention.tasks.image_classification.image_folders import find_image_folder_layout

TFDS_DATASETS = ("cifar10", "cifar100", "imagenette")
_DEFAULT_IMAGENETTE = "imagenette/320px-v2"
_OFFICIAL_TEST_SPLIT = {"cifar10": "test", "cifar100": "test", "imagenette": "validation"}
_MIN_BUILTIN_SIZE = 24
_DATASET_CHOICES = "'builtin', 'folder:PATH', 'hf:PATH', 'cifar10', 'cifar100' or 'imagenette'"
# Classes named with their counts in a summary line before "... (N more)".
_NAMED_CLASSES = 10


@dataclasses.dataclass
class ImageClassificationData:
    """Splits of `(image, label)` pairs and the names of their classes.

    Args:
        splits: dict "train", "validation", "test" -> `tf.data.Dataset` of
            `(image float32 (height, width, 3) in 0..255, label int32 ())`.
        class_names: list of str; label `i` names `class_names[i]`.
        split_sizes: dict split name -> number of images, where known.
        layout: what was read and how the splits were made, one line.
        class_counts: dict split name -> images per class (a list in label
            order), where known.

    Example:

    >>> import tensorflow as tf
    >>> from keras_attention.tasks.image_classification.sources import (
    ...     ImageClassificationData,
    ... )
    >>> pairs = tf.data.Dataset.from_tensor_slices((tf.zeros((2, 8, 8, 3)), tf.constant([0, 1])))
    >>> data = ImageClassificationData({"train": pairs}, ["cat", "dog"])
    >>> data.num_classes, data.split_sizes
    (2, {'train': 2})
    """

    splits: dict
    class_names: list
    split_sizes: dict = None
    layout: str = ""
    class_counts: dict = None

    def __post_init__(self):
        if self.split_sizes is None:
            # tf.data knows the length of in-memory and tfds datasets; -2 (unknown) is left out.
            counts = {name: int(split.cardinality()) for name, split in self.splits.items()}
            self.split_sizes = {name: count for name, count in counts.items() if count >= 0}

    @property
    def num_classes(self):
        """Number of classes, `len(class_names)`."""
        return len(self.class_names)

    def summary_lines(self):
        """The layout, the classes and the images of each split (per class where known).

        Example:

        >>> import tensorflow as tf
        >>> from keras_attention.tasks.image_classification.sources import (
        ...     ImageClassificationData,
        ... )
        >>> pairs = tf.data.Dataset.from_tensor_slices((tf.zeros((3, 4, 4, 3)), [0, 1, 1]))
        >>> data = ImageClassificationData(
        ...     {"train": pairs}, ["cat", "dog"], layout="class folders",
        ...     class_counts={"train": [1, 2]})
        >>> print("\\n".join(data.summary_lines()))
        data: class folders
          2 classes: cat, dog
          train: 3 images (cat 1, dog 2)
        """
        lines = [f"data: {self.layout}"] if self.layout else []
        lines.append(
            f"  {self.num_classes} classes: {names_for_message(self.class_names, _NAMED_CLASSES)}"
        )
        for name in self.splits:
            size = self.split_sizes.get(name)
            line = f"  {name}: {'?' if size is None else size} images"
            counts = (self.class_counts or {}).get(name)
            if counts is not None:
                pairs = [f"{c} {n}" for c, n in zip(self.class_names, counts)]
                line += f" ({names_for_message(pairs, _NAMED_CLASSES)})"
            lines.append(line)
        return lines


def _decodable_paths(paths, dataset, strict):
    """`paths` without the files TensorFlow cannot decode, which are reported."""
    with ProgressBar(f"checking that the {len(paths)} images decode", len(paths), "images") as bar:
        bad = set(undecodable_images(paths, progress=bar))
    report_undecodable_images(sorted(bad), dataset, strict)
    return [path for path in paths if path not in bad]


def native_image_size(dataset, max_files=64, strict=False):
    """The typical `(height, width)` of a data set's own images, before resizing.

    For "folder:PATH" this is the median height and width of up to
    `max_files` of its (training) images, taken evenly across the class
    folders, so a model can keep their aspect ratio. A file among them that
    cannot be decoded is skipped with a warning naming it (an error with
    `strict`). The other sources have no single size worth keeping (the
    built-in images are drawn at any size; tfds and `datasets` sets are
    square or mixed): None.

    Args:
        dataset: a `--dataset` string, as `load_image_classification_dataset`
            takes.
        max_files: number of images to read at most.
        strict: raise a ValueError naming an undecodable file or a file
            name that is not UTF-8.

    Returns:
        `(height, width)` ints, or None.

    Example:

    >>> from keras_attention.tasks.image_classification.sources import native_image_size
    >>> native_image_size("builtin") is None
    True
    """
    if isinstance(max_files, bool) or not isinstance(max_files, int) or max_files <= 0:
        raise ValueError(
            f"`max_files` must be a positive integer. Received: max_files={max_files!r}"
        )
    if not isinstance(dataset, str) or not dataset.startswith("folder:"):
        return None
    folder = _folder_path(dataset)
    listing = find_image_folder_layout(folder, strict)
    files = listing.files.get("train", listing.files.get(ALL))
    per_class = [
        [path for path, label in files if label == index]
        for index in range(len(listing.class_names))
    ]
    # Round robin over the classes: every class counts, whatever its size.
    chosen = []
    for index in range(max(map(len, per_class), default=0)):
        chosen.extend(paths[index] for paths in per_class if index < len(paths))
        if len(chosen) >= max_files:
            break
    chosen = _decodable_paths(chosen[:max_files], dataset, strict)
    if not chosen:
        return None
    sizes = np.array(
        [
            tf.image.decode_image(tf.io.read_file(path), expand_animations=False).shape[:2]
            for path in chosen
        ]
    )  # (files, 2)
    height, width = np.median(sizes, axis=0)
    return int(round(height)), int(round(width))


def _to_float_image(image, label, size):
    """Any-size uint8 image -> float32 `(size[0], size[1], 3)` in 0..255, int32 label."""
    image = tf.image.resize(image, size, antialias=True)
    return tf.clip_by_value(image, 0.0, 255.0), tf.cast(label, tf.int32)


def _class_counts(labels, num_classes):
    return np.bincount(np.asarray(labels, dtype=np.int64), minlength=num_classes).tolist()


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
    counts = {name: _class_counts(arrays[name][1], len(class_names)) for name in SPLIT_NAMES}
    sizes = dict(zip(SPLIT_NAMES, builtin_sizes))
    return ImageClassificationData(splits, class_names, sizes, "built-in shapes", counts)


def _folder_path(dataset):
    folder = os.path.expanduser(os.path.expandvars(dataset[len("folder:") :]))
    if not os.path.isdir(folder):
        raise ValueError(
            f"`dataset` must name an existing folder after 'folder:'; {folder} is not one. "
            f"Received: dataset={dataset!r}"
        )
    return folder


def _folder(dataset, size, validation_fraction, test_fraction, seed, strict=False):
    """A "folder:" source: the layout found, undecodable files dropped, the splits made."""
    folder = _folder_path(dataset)
    try:
        listing = find_image_folder_layout(folder, strict)
    except ValueError as error:
        raise ValueError(f"{error} Received: dataset={dataset!r}") from None
    all_files = [entry for entries in listing.files.values() for entry in entries]
    readable = set(_decodable_paths([path for path, _ in all_files], dataset, strict))
    listing.files = {
        split: [entry for entry in entries if entry[0] in readable]
        for split, entries in listing.files.items()
    }
    names = {split: os.path.basename(path) + "/" for split, path in listing.folders.items()}
    groups, rule = complete_classification_splits(
        listing.files,
        names,
        len(listing.class_names),
        validation_fraction,
        test_fraction,
        seed,
    )
    if not groups["train"]:
        raise ValueError(
            f"`dataset` folder has no readable training image. Received: dataset={dataset!r}"
        )
    num_classes = len(listing.class_names)
    splits = {}
    for name, entries in groups.items():
        paths = tf.constant([path for path, _ in entries], tf.string, shape=(len(entries),))
        labels = tf.constant([label for _, label in entries], tf.int32, shape=(len(entries),))
        splits[name] = tf.data.Dataset.from_tensor_slices((paths, labels)).map(
            lambda path, label: _to_float_image(
                tf.io.decode_image(tf.io.read_file(path), channels=3, expand_animations=False),
                label,
                size,
            ),
            num_parallel_calls=tf.data.AUTOTUNE,
        )
    return ImageClassificationData(
        splits,
        list(listing.class_names),
        {name: len(entries) for name, entries in groups.items()},
        f"{listing.layout}" + (f" ({rule})" if rule else ""),
        {
            name: _class_counts([label for _, label in entries], num_classes)
            for name, entries in groups.items()
        },
    )


def _decode_to_float(encoded, label, size):
    image = tf.io.decode_image(encoded, channels=3, expand_animations=False)
    return _to_float_image(image, label, size)


def _hf(dataset, size, validation_fraction, test_fraction, seed, strict):
    """A `datasets` save_to_disk folder of images and ClassLabel labels."""
    files, class_names, column, encoded, layout = hf_image_classification_files(dataset)
    listed = [entry for entries in files.values() for entry in entries]
    # Decoding errors drop the element; what survives are the readable rows.
    checked = hf_image_pairs(listed, encoded, column).enumerate()
    checked = checked.map(
        lambda index, pair: (index, tf.size(tf.io.decode_image(pair[0], expand_animations=False))),
        num_parallel_calls=tf.data.AUTOTUNE,
    ).ignore_errors()
    readable = set()
    with ProgressBar(
        f"checking that the {len(listed)} images decode", len(listed), "images"
    ) as bar:
        for index, _ in checked.as_numpy_iterator():
            readable.add(int(index))
            bar.add(1)
        bar.add(len(listed) - len(readable))  # the rows that failed count as checked
    bad = [entry for index, entry in enumerate(listed) if index not in readable]
    report_undecodable_images(
        [f"{split} row {row + 1}" for (split, row), _ in bad], dataset, strict
    )
    bad = set(bad)
    files = {name: [e for e in entries if e not in bad] for name, entries in files.items()}
    groups, rule = complete_classification_splits(
        files, {}, len(class_names), validation_fraction, test_fraction, seed
    )
    splits = {
        name: hf_image_pairs(entries, encoded, column).map(
            lambda data, label: _decode_to_float(data, label, size),
            num_parallel_calls=tf.data.AUTOTUNE,
        )
        for name, entries in groups.items()
    }
    return ImageClassificationData(
        splits,
        class_names,
        {name: len(entries) for name, entries in groups.items()},
        layout + (f" ({rule})" if rule else ""),
        {
            name: _class_counts([label for _, label in entries], len(class_names))
            for name, entries in groups.items()
        },
    )


def _tfds(dataset, size, validation_fraction, data_dir):
    """A tfds source: validation from the end of train, the official test split."""
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
    rule = f"validation: the last {percent}% of train; test: the official {tfds_splits[2]} split"
    return ImageClassificationData(
        splits, list(info.features["label"].names), layout=f"tensorflow-datasets {name} ({rule})"
    )


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
        dataset: "builtin", "folder:PATH", "hf:PATH", "cifar10", "cifar100"
            or "imagenette" / "imagenette/CONFIG" (see the module docstring).
        image_size: int or `(height, width)`; every image is resized to it.
        validation_fraction: share of the images held out for validation
            where a source has no validation split (class folders, a tfds
            or `datasets` training split).
        test_fraction: share held out for testing where a source has
            neither a validation nor a test split.
        seed: seed of the built-in images, of a random split and of the
            order of a folder's training images.
        builtin_sizes: `(num_train, num_validation, num_test)` images for
            "builtin".
        data_dir: tfds data directory (tfds' default when None).
        strict: an image that cannot be decoded, or a file name that is not
            UTF-8, raises a ValueError naming it, instead of being skipped
            with a warning naming it.

    Returns:
        `ImageClassificationData` whose `splits` maps "train", "validation",
        "test" to `tf.data.Dataset`s of `(image float32 (height, width, 3) in
        0..255, label int32 ())`, whose `class_names` names the labels, and
        whose `split_sizes` and `summary_lines()` say what was read.

    Raises:
        DatasetDownloadError: a tfds data set is not prepared and cannot be
            downloaded.

    Example:

    >>> from keras_attention.tasks.image_classification.sources import (
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
        return _folder(dataset, size, validation_fraction, test_fraction, seed, strict)
    if dataset.startswith("hf:"):
        return _hf(dataset, size, validation_fraction, test_fraction, seed, strict)
    if dataset in TFDS_DATASETS or dataset.startswith("imagenette/"):
        return _tfds(dataset, size, validation_fraction, data_dir)
    raise ValueError(f"`dataset` must be {_DATASET_CHOICES}. Received: dataset={dataset!r}")
