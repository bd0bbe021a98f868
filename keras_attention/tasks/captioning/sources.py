"""Image-caption pairs as `tf.data` from the built-in scenes, files as downloaded, or tfds.

`load_caption_dataset` turns one `--dataset` string into train, validation
and test `tf.data.Dataset`s of `(image, caption)` pairs, one element per
caption: an image with five captions gives five elements. Images are float32
`(height, width, 3)` with values in 0..255, resized to `image_size` (or at
their own size with `image_size=None`, to measure them with
`median_image_size`); captions are scalar `tf.string`. The datasets are
neither shuffled nor batched, and know their length (their `cardinality()`),
so a training schedule can count its steps. They come in a `DatasetSplits`
(a dict) whose `sizes` count the images of each split and whose `summary()`
says, in one line, which layout was read and where the splits come from.

Sources:
- "builtin": the generated shape scenes of `shapes_scenes` (no download);
  `shape_scene_splits(*builtin_sizes, seed=seed, ...)` gives the same
  scenes together with their object masks.
- "folder:PATH": a data set as downloaded, its layout recognised from its
  files (`caption_layouts`): `captions.tsv`; COCO's
  `annotations/captions_{train,val}YEAR.json`; Karpathy's `dataset_*.json`;
  Flickr8k's `Flickr8k_text/`; Kaggle's Flickr8k `captions.txt` with
  `Images/`. PATH may also name one of those files, to choose between
  layouts that share a folder. Layouts with their own splits keep them.
- "csv:FILE": a CSV file with a header line, its `image_column` and
  `caption_column` (paths relative to the file's folder).
- "coco_captions" (or "coco_captions/CONFIG"): the tfds dataset, with the
  Karpathy splits tfds ships: "train+restval", "val", "test".

Files that are missing or cannot be decoded, and lines that are malformed or
not UTF-8, are skipped with a warning that names them (an error with
`strict`). Image paths that leave the data set's folder are refused unless
`allow_outside_paths`, and those that resolve outside it through a symbolic
link unless `allow_outside_links`. An image id listed twice, or an image in
two splits, is refused naming the file and both entries. Data sets without
splits of their own are split by image, never by caption, depending only on
the file names and `seed`.

Example:

>>> from keras_attention.tasks.captioning.sources import load_caption_dataset
>>> splits = load_caption_dataset("builtin", 64, builtin_sizes=(4, 2, 2))
>>> image, caption = next(iter(splits["train"]))
>>> image.shape, image.dtype.name, caption.dtype.name
(TensorShape([64, 64, 3]), 'float32', 'string')
>>> splits.summary()
'built-in scenes: train 4 images, validation 2, test 2'
"""

import os

import numpy as np
import tensorflow as tf

from keras_attention.data.dataset_splits import SPLIT_NAMES
from keras_attention.data.dataset_splits import DatasetSplits
from keras_attention.data.image_arguments import check_split_fractions
from keras_attention.data.image_arguments import image_size_pair
from keras_attention.data.image_decoding import resize_image
from keras_attention.data.tfds_download import load_tfds
from keras_attention.data.worker_shards import ONE_WORKER
from keras_attention.progress import ProgressBar
from keras_attention.tasks.captioning.builtin_scenes import shape_scene_splits
from keras_attention.tasks.captioning.caption_files import caption_file_splits
from keras_attention.tasks.captioning.caption_files import one_element_per_caption
from keras_attention.tasks.captioning.layouts.caption_csv import read_caption_csv
from keras_attention.tasks.captioning.layouts.layout_detection import find_caption_layout

_COCO_SPLITS = {"train": "train+restval", "validation": "val", "test": "test"}
_DATASET_CHOICES = "'builtin', 'folder:PATH', 'csv:FILE' or 'coco_captions[/CONFIG]'"
# Side of the built-in scenes when no image size is asked for.
BUILTIN_IMAGE_SIZE = 48


def _builtin(size, builtin_sizes, max_objects, seed):
    if len(builtin_sizes) != 3:
        raise ValueError(
            "`builtin_sizes` must be (num_train, num_validation, num_test). "
            f"Received: builtin_sizes={builtin_sizes!r}"
        )
    # Scenes are drawn at the requested side when square, so shapes stay crisp.
    drawn = size or (BUILTIN_IMAGE_SIZE, BUILTIN_IMAGE_SIZE)
    side = drawn[0] if drawn[0] == drawn[1] and drawn[0] >= 32 else 64
    scenes = shape_scene_splits(*builtin_sizes, image_size=side, seed=seed, max_objects=max_objects)
    splits = {}
    for name in SPLIT_NAMES:
        images = scenes[name]["images"]
        captions = tf.constant(scenes[name]["captions"], dtype=tf.string, shape=(len(images),))
        dataset = tf.data.Dataset.from_tensor_slices((images, captions))
        if (side, side) == drawn:
            dataset = dataset.map(lambda image, caption: (tf.cast(image, tf.float32), caption))
        else:
            dataset = dataset.map(lambda image, caption: (resize_image(image, drawn), caption))
        splits[name] = dataset
    return DatasetSplits(
        splits,
        dict(zip(SPLIT_NAMES, builtin_sizes)),
        "built-in scenes",
        rebuild=lambda new_size: _builtin(new_size, builtin_sizes, max_objects, seed),
        sample=list(scenes["train"]["captions"]),
    )


def _coco(dataset, size, data_dir, sample_size=200_000, sample=None):
    # The caption sample is read once; a resize keeps it.
    if sample is None:
        sample = _coco_captions(dataset, data_dir, sample_size)
    splits, sizes = {}, {}
    for name, tfds_split in _COCO_SPLITS.items():
        examples = load_tfds(dataset, split=tfds_split, data_dir=data_dir, shuffle_files=False)
        sizes[name] = max(int(examples.cardinality()), 0)
        pairs = examples.map(
            lambda example: (resize_image(example["image"], size), example["captions"]["text"]),
            num_parallel_calls=tf.data.AUTOTUNE,
        )
        splits[name] = pairs.map(one_element_per_caption).unbatch()
    # Images hold 5-7 captions each: the pairs are estimated from the sample's share.
    captions_per_image = sample.captions_per_image
    elements = {name: round(count * captions_per_image) for name, count in sizes.items()}
    return DatasetSplits(
        splits,
        sizes,
        f"tensorflow-datasets {dataset}",
        "Karpathy's splits as tfds ships them: train+restval, val, test",
        rebuild=lambda new_size: _coco(dataset, new_size, data_dir, sample_size, sample),
        sample=sample,
        elements=elements,
    )


class _CaptionSample(list):
    """Captions read for the vocabulary, and how many captions each of their images had."""

    def __init__(self, captions, images):
        super().__init__(captions)
        self.captions_per_image = len(captions) / max(images, 1) if captions else 1.0


def _coco_captions(dataset, data_dir, sample_size):
    """Captions of tfds' COCO training images, read without decoding the images.

    The first images' captions, up to `sample_size` of them (tfds' files are
    in no particular order of subject).
    """
    import tensorflow_datasets as tfds  # Imported here: slow, and only this source needs it.

    examples = load_tfds(
        dataset,
        split=_COCO_SPLITS["train"],
        data_dir=data_dir,
        shuffle_files=False,
        decoders=tfds.decode.PartialDecoding({"captions": True}),  # no image is read
    )
    captions, images = [], 0
    for texts in examples.map(lambda example: example["captions"]["text"]).as_numpy_iterator():
        images += 1
        captions.extend(text.decode("utf-8") for text in texts)
        if len(captions) >= sample_size:
            break
    return _CaptionSample(captions[:sample_size], images)


def _path_after(dataset, prefix):
    return os.path.expanduser(os.path.expandvars(dataset[len(prefix) :]))


def _listing(dataset, strict, allow_outside_paths, allow_outside_links, columns):
    """The `CaptionListing` of a "folder:" or "csv:" source, read with one progress line.

    `columns` are the image and caption columns of a "csv:" file.
    """
    prefix = "folder:" if dataset.startswith("folder:") else "csv:"
    path = _path_after(dataset, prefix)
    try:
        with ProgressBar(f"reading the captions of {path}", None, "images") as bar:
            if prefix == "folder:":
                listing = find_caption_layout(
                    path, strict, allow_outside_paths, allow_outside_links
                )
            elif not os.path.isfile(path):
                raise ValueError(f"{path} is not a file.")
            else:
                root = os.path.dirname(os.path.abspath(path))
                listing = read_caption_csv(
                    path,
                    root,
                    *columns,
                    strict,
                    allow_outside_paths,
                    allow_outside_links=allow_outside_links,
                )
            bar.add(listing.num_images)
    except ValueError as error:
        raise ValueError(f"{error} Received: dataset={dataset!r}") from None
    return listing


def load_caption_dataset(
    dataset,
    image_size,
    *,
    validation_fraction=0.1,
    test_fraction=0.1,
    seed=0,
    builtin_sizes=(4000, 500, 500),
    max_objects=2,
    data_dir=None,
    strict=False,
    allow_outside_paths=False,
    allow_outside_links=False,
    image_column="image",
    caption_column="caption",
    skipped=None,
    shuffle_seed=None,
    shard=ONE_WORKER,
):
    """Loads `(image, caption)` pairs for training and evaluating a captioner.

    One function on purpose: its length is this docstring, every source's arguments in
    one place; the code only checks them and hands each source to its own reader.

    Args:
        dataset: "builtin", "folder:PATH", "csv:FILE" or "coco_captions"
            (see the module docstring for each source).
        image_size: int or `(height, width)`; every image is resized to it.
            None keeps every image at its own size (the built-in scenes
            are then drawn at `BUILTIN_IMAGE_SIZE`).
        validation_fraction: share of the images in the validation split,
            for a data set without one of its own.
        test_fraction: share of the images in the test split, likewise.
        seed: seed of the built-in scenes, of a random split and of the
            order of a data set's training images.
        builtin_sizes: `(num_train, num_validation, num_test)` scenes for
            "builtin".
        max_objects: 2 or 3, objects per built-in scene at most.
        data_dir: tfds data directory for "coco_captions" (tfds' default when
            None).
        strict: a malformed or non-UTF-8 line, or an image that is missing,
            raises a ValueError naming it, instead of being skipped with a
            warning naming it; an image that cannot be decoded stops the run
            where the pipeline meets it.
        allow_outside_paths: read image paths that are absolute or leave
            the data set's folder through `..` (refused otherwise).
        allow_outside_links: read image paths that resolve outside the data
            set's folder through a symbolic link (refused otherwise, naming
            the link and its target).
        image_column, caption_column: the columns of a "csv:" file.
        skipped: the `SkippedItems` told of the images that cannot be
            decoded (files are decoded where the pipeline meets them); by
            default one that counts them.
        shuffle_seed: the seed of the order of a data set's training
            images, drawn anew every epoch (default `seed`).
        shard: `(num_workers, index)`: the training split of a "folder:" or
            "csv:" source is this worker's images alone (`worker_shards`).

    Returns:
        a `DatasetSplits`: dict "train", "validation", "test" ->
        `tf.data.Dataset` of `(image float32 (height, width, 3) in 0..255,
        caption tf.string ())`, with `sizes` (images per split), `elements`
        (captions per split), `sample` (training captions, read without
        decoding an image), `summary()` and `resized(image_size)`.

    Raises:
        DatasetDownloadError: "coco_captions" is not prepared and cannot be
            downloaded.

    Example:

    >>> from keras_attention.tasks.captioning.sources import load_caption_dataset
    >>> splits = load_caption_dataset("builtin", 32, builtin_sizes=(3, 1, 1), seed=1)
    >>> [int(splits[name].cardinality()) for name in ("train", "validation", "test")]
    [3, 1, 1]
    """
    size = None if image_size is None else image_size_pair(image_size)
    check_split_fractions(validation_fraction, test_fraction)
    if not isinstance(dataset, str):
        raise ValueError(f"`dataset` must be {_DATASET_CHOICES}. Received: dataset={dataset!r}")
    if dataset == "builtin":
        return _builtin(size, tuple(builtin_sizes), max_objects, seed)
    if dataset.startswith(("folder:", "csv:")):
        columns = (image_column, caption_column)
        listing = _listing(dataset, strict, allow_outside_paths, allow_outside_links, columns)
        fractions = (validation_fraction, test_fraction)
        return caption_file_splits(
            listing, size, *fractions, seed, strict, dataset, skipped, shuffle_seed, shard
        )
    if dataset == "coco_captions" or dataset.startswith("coco_captions/"):
        return _coco(dataset, size, data_dir)
    raise ValueError(f"`dataset` must be {_DATASET_CHOICES}. Received: dataset={dataset!r}")


def median_image_size(pairs, limit=256):
    """The median `(height, width)` of the first `limit` images of `(image, caption)` pairs.

    Read from pairs loaded with `image_size=None`, it is the size most of a
    dataset's images have, for a model to see them at.

    Args:
        pairs: a `tf.data.Dataset` of `(image (H, W, 3), caption)`.
        limit: images to look at, a positive int.

    Returns:
        `(height, width)`, two ints.

    Example:

    >>> import tensorflow as tf
    >>> from keras_attention.tasks.captioning.sources import median_image_size
    >>> pairs = tf.data.Dataset.from_tensors((tf.zeros((32, 96, 3)), "one two three"))
    >>> median_image_size(pairs.repeat(3))
    (32, 96)
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"`limit` must be a positive int. Received: limit={limit!r}")
    shapes = pairs.take(limit).map(lambda image, caption: tf.shape(image)[:2])
    sizes = np.array([shape for shape in shapes.as_numpy_iterator()])  # (N, 2)
    if len(sizes) == 0:
        raise ValueError("`pairs` must hold at least one image. Received: an empty dataset")
    height, width = np.median(sizes, axis=0)
    return int(round(height)), int(round(width))
