"""Image-caption pairs as `tf.data` from the built-in scenes, a folder, or tfds.

`load_caption_dataset` turns one `--dataset` string into train, validation
and test `tf.data.Dataset`s of `(image, caption)` pairs, one element per
caption: an image with five captions gives five elements. Images are float32
`(height, width, 3)` with values in 0..255, resized to `image_size` (or at
their own size with `image_size=None`, to measure them with
`median_image_size`); captions are scalar `tf.string`. The datasets are
neither shuffled nor batched; a folder's datasets know their length (their
`cardinality()`), so a training schedule can count its steps.

Sources:
- "builtin": the generated shape scenes of `shapes_scenes` (no download);
  `shape_scene_splits(*builtin_sizes, seed=seed, ...)` gives the same
  scenes together with their object masks.
- "folder:PATH": image files in PATH plus `PATH/captions.tsv` with
  `file<TAB>caption` lines, several lines per file allowed (Flickr8k's
  `file.jpg#0` numbering is understood). Files that are missing or cannot be
  decoded are skipped with a warning that names them. The split is by image,
  never by caption, and depends only on the file names and `seed`.
- "coco_captions" (or "coco_captions/CONFIG"): the tfds dataset, with the
  Karpathy splits tfds ships: "train+restval", "val", "test".

Example:

>>> from keras_attention.data.caption_sources import load_caption_dataset
>>> splits = load_caption_dataset("builtin", 64, builtin_sizes=(4, 2, 2))
>>> image, caption = next(iter(splits["train"]))
>>> image.shape, image.dtype.name, caption.dtype.name
(TensorShape([64, 64, 3]), 'float32', 'string')
"""

import os
import re
import warnings

import numpy as np
import tensorflow as tf

from keras_attention.data.image_arguments import check_split_fractions
from keras_attention.data.image_arguments import image_size_pair
from keras_attention.data.shapes_scenes import shape_scene_splits

CAPTIONS_FILE = "captions.tsv"
SPLIT_NAMES = ("train", "validation", "test")
_COCO_SPLITS = {"train": "train+restval", "validation": "val", "test": "test"}
_FLICKR_CAPTION_NUMBER = re.compile(r"#\d+$")
_MAX_NAMES_IN_WARNING = 10
# Side of the built-in scenes when no image size is asked for.
BUILTIN_IMAGE_SIZE = 48


def _resize(image, size):
    """uint8 or float image `(h, w, 3)` -> float32 `(size[0], size[1], 3)` in 0..255.

    `size=None` keeps the image's own size.
    """
    if size is None:
        return tf.cast(image, tf.float32)
    image = tf.image.resize(image, size, antialias=True)
    return tf.clip_by_value(image, 0.0, 255.0)


def _decode_pixels(path):
    return tf.io.decode_image(tf.io.read_file(path), channels=3, expand_animations=False)


def _decode(path, size):
    return _resize(_decode_pixels(path), size)


def _one_element_per_caption(image, captions):
    """`(image, captions (n,))` -> `n` copies of the image, ready for `unbatch`."""
    count = tf.shape(captions)[0]
    images = tf.repeat(image[None], count, axis=0)  # (n, H, W, 3)
    return images, captions


def _builtin(size, builtin_sizes, max_objects, seed):
    if len(builtin_sizes) != 3:
        raise ValueError(
            "`builtin_sizes` must be (num_train, num_validation, num_test). "
            f"Received: builtin_sizes={builtin_sizes!r}"
        )
    # Scenes are drawn at the requested side when square, so shapes stay crisp.
    size = size or (BUILTIN_IMAGE_SIZE, BUILTIN_IMAGE_SIZE)
    side = size[0] if size[0] == size[1] and size[0] >= 32 else 64
    scenes = shape_scene_splits(*builtin_sizes, image_size=side, seed=seed, max_objects=max_objects)
    splits = {}
    for name in SPLIT_NAMES:
        images = scenes[name]["images"]
        captions = tf.constant(scenes[name]["captions"], dtype=tf.string, shape=(len(images),))
        dataset = tf.data.Dataset.from_tensor_slices((images, captions))
        if (side, side) == size:
            dataset = dataset.map(lambda image, caption: (tf.cast(image, tf.float32), caption))
        else:
            dataset = dataset.map(lambda image, caption: (_resize(image, size), caption))
        splits[name] = dataset
    return splits


def _read_captions_file(path):
    """Returns `{file name: [captions]}` in file order, and malformed line numbers."""
    captions = {}
    malformed = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            name, tab, caption = line.partition("\t")
            name = _FLICKR_CAPTION_NUMBER.sub("", name.strip())
            caption = caption.strip()
            if not tab or not name or not caption:
                malformed.append(number)
                continue
            captions.setdefault(name, []).append(caption)
    return captions, malformed


def _decodable(paths):
    """The subset of `paths` that TensorFlow can decode as an image."""
    if not paths:
        return set()
    dataset = tf.data.Dataset.from_tensor_slices(paths)
    # Decoding errors drop the element; what survives names the readable files.
    dataset = dataset.map(
        lambda path: (path, tf.size(_decode_pixels(path))),
        num_parallel_calls=tf.data.AUTOTUNE,
    ).ignore_errors()
    return {path.numpy().decode("utf-8") for path, _ in dataset}


def _names_for_warning(names):
    shown = ", ".join(names[:_MAX_NAMES_IN_WARNING])
    more = len(names) - _MAX_NAMES_IN_WARNING
    return shown + (f", ... ({more} more)" if more > 0 else "")


def _split_counts(count, validation_fraction, test_fraction):
    """Images per split; a non-zero fraction gets at least one image when there are 3+."""
    num_validation = int(round(count * validation_fraction))
    num_test = int(round(count * test_fraction))
    if count >= 3:
        num_validation = max(num_validation, 1 if validation_fraction > 0 else 0)
        num_test = max(num_test, 1 if test_fraction > 0 else 0)
    return count - num_validation - num_test, num_validation, num_test


def _pairs_dataset(paths, captions, size):
    """Image paths and their caption lists -> one `(image, caption)` element per caption."""
    flat_captions = [text for texts in captions for text in texts]
    captions_per_image = tf.RaggedTensor.from_row_lengths(
        tf.constant(flat_captions, dtype=tf.string, shape=(len(flat_captions),)),
        tf.constant([len(texts) for texts in captions], dtype=tf.int64, shape=(len(paths),)),
    )
    dataset = tf.data.Dataset.from_tensor_slices(
        (tf.constant(paths, dtype=tf.string, shape=(len(paths),)), captions_per_image)
    )
    # Each image is decoded once, then repeated for each of its captions.
    dataset = dataset.map(
        lambda path, texts: (_decode(path, size), texts), num_parallel_calls=tf.data.AUTOTUNE
    )
    pairs = dataset.map(_one_element_per_caption).unbatch()
    # `unbatch` forgets the length; the caption count gives it back, so that
    # `cardinality()` (and a schedule counted in steps) is right.
    return pairs.apply(tf.data.experimental.assert_cardinality(len(flat_captions)))


def _folder(dataset, folder, size, validation_fraction, test_fraction, seed, strict=False):
    if not os.path.isdir(folder):
        raise ValueError(
            f"`dataset` must name an existing folder after 'folder:'. Received: dataset={dataset!r}"
        )
    captions_path = os.path.join(folder, CAPTIONS_FILE)
    if not os.path.isfile(captions_path):
        raise ValueError(
            f"`dataset` folder must hold a {CAPTIONS_FILE} file of `file<TAB>caption` lines; "
            f"{captions_path} does not exist. Received: dataset={dataset!r}"
        )
    captions, malformed = _read_captions_file(captions_path)
    if malformed and strict:
        raise ValueError(
            f"{len(malformed)} line(s) of {captions_path} have no `file<TAB>caption` pair: "
            f"line {_names_for_warning([str(n) for n in malformed])}."
        )
    if malformed:
        warnings.warn(
            f"Skipped {len(malformed)} line(s) of {captions_path} without a `file<TAB>caption` "
            f"pair: line {_names_for_warning([str(n) for n in malformed])}.",
            stacklevel=3,
        )
    names = sorted(captions)
    missing = [name for name in names if not os.path.isfile(os.path.join(folder, name))]
    present = [name for name in names if os.path.isfile(os.path.join(folder, name))]
    readable = _decodable([os.path.join(folder, name) for name in present])
    unreadable = [name for name in present if os.path.join(folder, name) not in readable]
    if missing or unreadable:
        details = [
            f"{len(files)} {kind}: {_names_for_warning(files)}"
            for kind, files in (("missing", missing), ("unreadable", unreadable))
            if files
        ]
        if strict:
            raise ValueError(
                f"{len(missing) + len(unreadable)} of {len(names)} image(s) listed in "
                f"{captions_path} cannot be read; " + "; ".join(details) + "."
            )
        warnings.warn(
            f"Skipped {len(missing) + len(unreadable)} of {len(names)} image(s) listed in "
            f"{captions_path}; " + "; ".join(details) + ".",
            stacklevel=3,
        )
    usable = [name for name in present if os.path.join(folder, name) in readable]
    if not usable:
        raise ValueError(
            f"`dataset` folder has no readable image listed in {CAPTIONS_FILE}. "
            f"Received: dataset={dataset!r}"
        )
    # Split by image: a fixed permutation of the sorted names.
    order = np.random.default_rng(seed).permutation(len(usable))
    shuffled = [usable[i] for i in order]
    num_train, num_validation, _ = _split_counts(len(usable), validation_fraction, test_fraction)
    groups = {
        "train": shuffled[:num_train],
        "validation": shuffled[num_train : num_train + num_validation],
        "test": shuffled[num_train + num_validation :],
    }
    return {
        name: _pairs_dataset(
            [os.path.join(folder, file) for file in files], [captions[file] for file in files], size
        )
        for name, files in groups.items()
    }


def _coco(dataset, size, data_dir):
    import tensorflow_datasets as tfds

    splits = {}
    for name, tfds_split in _COCO_SPLITS.items():
        examples = tfds.load(dataset, split=tfds_split, data_dir=data_dir, shuffle_files=False)
        pairs = examples.map(
            lambda example: (_resize(example["image"], size), example["captions"]["text"]),
            num_parallel_calls=tf.data.AUTOTUNE,
        )
        splits[name] = pairs.map(_one_element_per_caption).unbatch()
    return splits


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
):
    """Loads `(image, caption)` pairs for training and evaluating a captioner.

    Args:
        dataset: "builtin", "folder:PATH" or "coco_captions" (see the module
            docstring for each source).
        image_size: int or `(height, width)`; every image is resized to it.
            None keeps every image at its own size (the built-in scenes
            are then drawn at `BUILTIN_IMAGE_SIZE`).
        validation_fraction: share of a folder's images in the validation split.
        test_fraction: share of a folder's images in the test split.
        seed: seed of the built-in scenes and of a folder's image split.
        builtin_sizes: `(num_train, num_validation, num_test)` scenes for
            "builtin".
        max_objects: 2 or 3, objects per built-in scene at most.
        data_dir: tfds data directory for "coco_captions" (tfds' default when
            None).
        strict: a malformed `captions.tsv` line or an image that is missing or
            cannot be decoded raises a ValueError naming it, instead of being
            skipped with a warning naming it.

    Returns:
        dict "train", "validation", "test" -> `tf.data.Dataset` of
        `(image float32 (height, width, 3) in 0..255, caption tf.string ())`.

    Example:

    >>> from keras_attention.data.caption_sources import load_caption_dataset
    >>> splits = load_caption_dataset("builtin", 32, builtin_sizes=(3, 1, 1), seed=1)
    >>> [int(splits[name].cardinality()) for name in ("train", "validation", "test")]
    [3, 1, 1]
    """
    size = None if image_size is None else image_size_pair(image_size)
    check_split_fractions(validation_fraction, test_fraction)
    if not isinstance(dataset, str):
        raise ValueError(
            "`dataset` must be 'builtin', 'folder:PATH' or 'coco_captions'. "
            f"Received: dataset={dataset!r}"
        )
    if dataset == "builtin":
        return _builtin(size, tuple(builtin_sizes), max_objects, seed)
    if dataset.startswith("folder:"):
        folder = os.path.expanduser(os.path.expandvars(dataset[len("folder:") :]))
        return _folder(dataset, folder, size, validation_fraction, test_fraction, seed, strict)
    if dataset == "coco_captions" or dataset.startswith("coco_captions/"):
        return _coco(dataset, size, data_dir)
    raise ValueError(
        "`dataset` must be 'builtin', 'folder:PATH' or 'coco_captions'. "
        f"Received: dataset={dataset!r}"
    )


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
    >>> from keras_attention.data.caption_sources import median_image_size
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
