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
  validation folder, validation is a seeded share of `train/`. The files
  are listed, never read, before training: each image is decoded where the
  pipeline meets it, and one that cannot be (a truncated file, an `._x.jpg`
  AppleDouble file) is skipped and named (`skipped`: counted once an epoch,
  named in the run's file; the run stops at the first with `strict`). A
  symbolic link in PATH that leads outside it is refused, naming it and its
  target, unless `allow_outside_links`. `~` and `$VARIABLES` in PATH are
  expanded.
- "hf:PATH": a `datasets.DatasetDict.save_to_disk` folder with an `image`
  (or `img`) column and a `ClassLabel` `label` column (`hf_datasets`); a
  split whose class names come in another order is mapped by name.
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
from keras_attention.data.image_decoding import decoded_images
from keras_attention.data.image_decoding import resize_image
from keras_attention.data.image_decoding import undecodable_images
from keras_attention.data.skipped_items import SkippedItems
from keras_attention.data.tfds_download import load_tfds
from keras_attention.data.worker_shards import ONE_WORKER
from keras_attention.data.worker_shards import check_shard
from keras_attention.data.worker_shards import shard_for_worker
from keras_attention.data.worker_shards import sharded_already
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
        skipped: the `SkippedItems` the splits' pipelines tell of the images
            they cannot decode, for a run to report once an epoch.

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
    skipped: tuple = ()

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


def list_image_folder(dataset, strict=False, allow_outside_links=False):
    """The `ImageFolderListing` of a "folder:PATH" `--dataset`, with a progress line.

    Listing reads no image; do it once, and give the listing to
    `native_image_size` and `load_image_classification_dataset`. A symbolic
    link in PATH that leads outside it is refused unless `allow_outside_links`.

    Example:

    >>> import os, tempfile
    >>> from keras_attention.tasks.image_classification.sources import list_image_folder
    >>> root = tempfile.mkdtemp()
    >>> for name in ("cat", "dog"):
    ...     os.makedirs(os.path.join(root, name))
    ...     _ = open(os.path.join(root, name, "1.png"), "wb").write(b"")
    >>> list_image_folder(f"folder:{root}").class_names  # doctest: +ELLIPSIS
    listing the images of ...: 2 files in ...
    ['cat', 'dog']
    """
    folder = _folder_path(dataset)
    try:
        with ProgressBar(f"listing the images of {folder}", None, "files") as bar:
            return find_image_folder_layout(folder, strict, bar, allow_outside_links)
    except ValueError as error:
        raise ValueError(f"{error} Received: dataset={dataset!r}") from None


def native_image_size(dataset, max_files=64, strict=False, listing=None, allow_outside_links=False):
    """The typical `(height, width)` of a data set's own images, before resizing.

    For "folder:PATH" this is the median height and width of up to
    `max_files` of its (training) images, taken evenly across the class
    folders, so a model can keep their aspect ratio. A file among them that
    cannot be decoded is left out of the median (the training pipeline
    names it when it meets it). The other sources have no single size worth
    keeping (the
    built-in images are drawn at any size; tfds and `datasets` sets are
    square or mixed): None.

    Args:
        dataset: a `--dataset` string, as `load_image_classification_dataset`
            takes.
        max_files: number of images to read at most.
        strict: raise a ValueError naming a file name that is not UTF-8.
        listing: the folder's `list_image_folder`, when listed already.
        allow_outside_links: read images through symbolic links in the
            folder that lead outside it (refused otherwise).

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
    if listing is None:
        listing = find_image_folder_layout(
            _folder_path(dataset), strict, allow_outside_links=allow_outside_links
        )
    per_class = [[] for _ in listing.class_names]
    for path, label in listing.files.get("train", listing.files.get(ALL)):
        per_class[label].append(path)
    # Round robin over the classes: every class counts, whatever its size.
    chosen = []
    for index in range(max(map(len, per_class), default=0)):
        chosen.extend(paths[index] for paths in per_class if index < len(paths))
        if len(chosen) >= max_files:
            break
    paths = tf.data.Dataset.from_tensor_slices(tf.constant(chosen[:max_files], tf.string))
    images = decoded_images(paths.map(lambda path: (path,)), SkippedItems("unmeasured images"))
    sizes = np.array([tf.shape(image)[:2] for (image,) in images])  # (files, 2)
    if not len(sizes):
        return None
    height, width = np.median(sizes, axis=0)
    return int(round(height)), int(round(width))


def _to_float_image(image, label, size):
    """Any-size uint8 image -> float32 `(size[0], size[1], 3)` in 0..255, int32 label."""
    return resize_image(image, size), tf.cast(label, tf.int32)


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


def _folder(
    dataset, size, fractions, seed, strict, skipped, shuffle_seed, shard, listing, allow_links
):
    """A "folder:" source: the layout found (files listed, not read), the splits made.

    `listing` is the folder's `ImageFolderListing` when listed already;
    `allow_links` is `allow_outside_links`, to list it otherwise.
    """
    validation_fraction, test_fraction = fractions
    listing = listing or list_image_folder(dataset, strict, allow_links)
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
        raise ValueError(f"`dataset` folder has no training image. Received: dataset={dataset!r}")
    num_classes = len(listing.class_names)
    splits = {}
    for name, entries in groups.items():
        paths = tf.constant([path for path, _ in entries], tf.string, shape=(len(entries),))
        labels = tf.constant([label for _, label in entries], tf.int32, shape=(len(entries),))
        items = tf.data.Dataset.from_tensor_slices((paths, labels))
        if name == "train":  # this worker's files, in a new order every epoch, never read yet
            items = shard_for_worker(items, shard)
            items = items.shuffle(len(entries), seed=shuffle_seed, reshuffle_each_iteration=True)
        splits[name] = decoded_images(items, skipped, size, deterministic=name != "train")
    return ImageClassificationData(
        splits,
        list(listing.class_names),
        {name: len(entries) for name, entries in groups.items()},
        f"{listing.layout}" + (f" ({rule})" if rule else ""),
        {
            name: _class_counts([label for _, label in entries], num_classes)
            for name, entries in groups.items()
        },
        (skipped,),
    )


def _hf(dataset, size, fractions, seed, skipped, shard, shuffle_seed=None):
    """A `datasets` save_to_disk folder of images and ClassLabel labels, decoded as met."""
    files, class_names, column, encoded, layout = hf_image_classification_files(dataset)
    groups, rule = complete_classification_splits(files, {}, len(class_names), *fractions, seed)
    num_workers, index = shard
    splits = {}
    for name, entries in groups.items():
        if name == "train":  # this worker's rows alone, in a new order every epoch
            mine = entries[index::num_workers]
            rows = sharded_already(hf_image_pairs(mine, encoded, column, shuffle_seed), shard)
        else:
            rows = hf_image_pairs(entries, encoded, column)
        splits[name] = decoded_images(rows, skipped, size, encoded=True)
    return ImageClassificationData(
        splits,
        class_names,
        {name: len(entries) for name, entries in groups.items()},
        layout + (f" ({rule})" if rule else ""),
        {
            name: _class_counts([label for _, label in entries], len(class_names))
            for name, entries in groups.items()
        },
        (skipped,),
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
    skipped=None,
    shuffle_seed=None,
    shard=ONE_WORKER,
    listing=None,
    allow_outside_links=False,
):
    """Loads labelled images for training and evaluating a classifier.

    One function on purpose: its length is this docstring, every source's arguments in
    one place; the code only checks them and hands each source to its own reader.

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
        strict: a file name that is not UTF-8 raises a ValueError naming
            it, instead of being skipped with a warning naming it; an image
            that cannot be decoded stops the run where the pipeline meets
            it (by default: with `skipped`'s own setting).
        skipped: the `SkippedItems` told of the images that cannot be
            decoded; by default one that counts them (stopping at the first
            with `strict`).
        shuffle_seed: the seed of the order of a folder's training images,
            drawn anew every epoch (default `seed`; the splits depend on
            `seed` only).
        shard: `(num_workers, index)`: the training split of a folder or
            `datasets` set is this worker's files (or rows) alone
            (`worker_shards`); one worker by default.
        listing: a "folder:" source's `list_image_folder`, when listed
            already (a folder is listed once).
        allow_outside_links: read the images of a "folder:" source through
            symbolic links in it that lead outside it (refused otherwise,
            naming the link and its target).

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
    if skipped is None:
        skipped = undecodable_images(strict=strict)
    if dataset.startswith("folder:"):
        fractions = (validation_fraction, test_fraction)
        order_seed = seed if shuffle_seed is None else shuffle_seed
        return _folder(
            dataset,
            size,
            fractions,
            seed,
            strict,
            skipped,
            order_seed,
            shard,
            listing,
            allow_outside_links,
        )
    if dataset.startswith("hf:"):
        fractions = (validation_fraction, test_fraction)
        order_seed = seed if shuffle_seed is None else shuffle_seed
        return _hf(dataset, size, fractions, seed, skipped, check_shard(shard), order_seed)
    if dataset in TFDS_DATASETS or dataset.startswith("imagenette/"):
        return _tfds(dataset, size, validation_fraction, data_dir)
    raise ValueError(f"`dataset` must be {_DATASET_CHOICES}. Received: dataset={dataset!r}")
