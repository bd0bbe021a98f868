"""Caption data sets read from files: the images checked, the splits completed, the pairs made.

`caption_file_splits` takes what a caption layout lists (a `CaptionListing`)
and makes the `(image, caption)` datasets of `load_caption_dataset`:

1. every listed image is checked once: a file that is missing or that
   TensorFlow cannot decode is skipped with one warning naming it (an error
   with `strict`);
2. the splits are completed: a layout with no splits of its own is split
   at random by image (seeded); one with a training split but no validation
   or test split gets it from its other held-out split (every other image
   by name) or, with neither, at random from train; the rule is reported;
3. each image is decoded once and repeated for each of its captions.

Example:

>>> import os, tempfile
>>> import numpy as np, tensorflow as tf
>>> from keras_attention.tasks.captioning.caption_files import caption_file_splits
>>> from keras_attention.tasks.captioning.layouts.caption_listing import CaptionListing
>>> root = tempfile.mkdtemp()
>>> images = {}
>>> for index in range(5):
...     path = os.path.join(root, f"{index}.png")
...     _ = open(path, "wb").write(tf.io.encode_png(np.zeros((4, 6, 3), np.uint8)).numpy())
...     images[path] = [f"caption {index}"]
>>> listing = CaptionListing("captions.tsv", root, {"all": images})
>>> splits = caption_file_splits(listing, (4, 6), 0.2, 0.2, seed=0)
checking that the 5 images decode: 5 images in ... s
>>> splits.sizes
{'train': 3, 'validation': 1, 'test': 1}
"""

import os
import warnings

import numpy as np
import tensorflow as tf

from keras_attention.data.dataset_paths import names_for_message
from keras_attention.data.dataset_splits import SPLIT_NAMES
from keras_attention.data.dataset_splits import DatasetSplits
from keras_attention.data.held_out_splits import every_other
from keras_attention.data.held_out_splits import seeded_split
from keras_attention.data.image_files import undecodable_images
from keras_attention.progress import ProgressBar
from keras_attention.tasks.captioning.layouts.caption_listing import ALL


def resize_image(image, size):
    """uint8 or float image `(h, w, 3)` -> float32 `(size[0], size[1], 3)` in 0..255.

    `size=None` keeps the image's own size.
    """
    if size is None:
        return tf.cast(image, tf.float32)
    image = tf.image.resize(image, size, antialias=True)
    return tf.clip_by_value(image, 0.0, 255.0)


def decode_image_file(path):
    """The pixels of an image file, uint8 `(h, w, 3)`."""
    return tf.io.decode_image(tf.io.read_file(path), channels=3, expand_animations=False)


def one_element_per_caption(image, captions):
    """`(image, captions (n,))` -> `n` copies of the image, ready for `unbatch`."""
    count = tf.shape(captions)[0]
    images = tf.repeat(image[None], count, axis=0)  # (n, H, W, 3)
    return images, captions


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
        lambda path, texts: (resize_image(decode_image_file(path), size), texts),
        num_parallel_calls=tf.data.AUTOTUNE,
    )
    pairs = dataset.map(one_element_per_caption).unbatch()
    # `unbatch` forgets the length; the caption count gives it back, so that
    # `cardinality()` (and a schedule counted in steps) is right.
    return pairs.apply(tf.data.experimental.assert_cardinality(len(flat_captions)))


def _usable_images(listing, source, strict):
    """`listing.images` without the images that are missing or cannot be decoded (reported)."""
    listed = sorted({path for images in listing.images.values() for path in images})
    missing = [path for path in listed if not os.path.isfile(path)]
    present = [path for path in listed if os.path.isfile(path)]
    with ProgressBar(
        f"checking that the {len(present)} images decode", len(present), "images"
    ) as bar:
        unreadable = undecodable_images(present, progress=bar)
    if missing or unreadable:

        def names(paths):
            return names_for_message([os.path.relpath(path, listing.root) for path in paths])

        details = "; ".join(
            f"{len(files)} {kind}: {names(files)}"
            for kind, files in (("missing", missing), ("unreadable", unreadable))
            if files
        )
        count = f"{len(missing) + len(unreadable)} of {len(listed)} image(s)"
        where = f"listed by {source} under {listing.root}"
        if strict:
            raise ValueError(f"{count} {where} cannot be read; {details}.")
        warnings.warn(f"Skipped {count} {where}; {details}.", stacklevel=4)
    bad = set(missing) | set(unreadable)
    return {
        split: {path: captions for path, captions in images.items() if path not in bad}
        for split, images in listing.images.items()
    }


def _complete_splits(images, validation_fraction, test_fraction, seed):
    """`({split: [paths]}, rule)`: the three splits, the missing ones made as the rule says."""
    if ALL in images:
        train, validation, test = seeded_split(
            images[ALL], validation_fraction, test_fraction, seed
        )
        rule = (
            f"no splits of its own: validation {validation_fraction:.0%} and test "
            f"{test_fraction:.0%} of the images drawn at random (seed {seed})"
        )
        return {"train": train, "validation": validation, "test": test}, rule
    groups = {name: sorted(images.get(name, {})) for name in SPLIT_NAMES}
    if not groups["train"]:
        raise ValueError("has no readable training image")
    # A fixed shuffle of the training images: layouts list them grouped or sorted.
    order = np.random.default_rng(seed).permutation(len(groups["train"]))
    groups["train"] = [groups["train"][i] for i in order]
    rule = ""
    if groups["validation"] and not groups["test"]:
        groups["validation"], groups["test"] = every_other(groups["validation"])
        rule = "test: every other validation image by name"
    elif groups["test"] and not groups["validation"]:
        groups["validation"], groups["test"] = every_other(groups["test"])
        rule = "validation: every other test image by name"
    elif not groups["validation"] and not groups["test"]:
        groups["train"], groups["validation"], groups["test"] = seeded_split(
            groups["train"], validation_fraction, test_fraction, seed
        )
        rule = "validation and test drawn at random from train"
    return groups, rule


def caption_file_splits(
    listing, size, validation_fraction, test_fraction, seed, strict=False, source=None
):
    """The `(image, caption)` splits of a caption layout's listing.

    Args:
        listing: a `CaptionListing`.
        size: `(height, width)` the images are resized to; None keeps them.
        validation_fraction, test_fraction: shares of the held-out splits
            drawn at random, for a layout without them.
        seed: the seed of those draws and of the training images' order.
        strict: a missing or undecodable image raises a ValueError naming
            it, instead of being skipped with a warning naming it.
        source: the `--dataset` value, for messages.

    Returns:
        a `DatasetSplits` of `(image float32 (h, w, 3), caption tf.string)`
        pairs, whose `sizes` count images and whose `resized(size)` makes
        them again at another size.
    """
    source = source or listing.layout
    images = _usable_images(listing, source, strict)
    try:
        groups, completed = _complete_splits(images, validation_fraction, test_fraction, seed)
    except ValueError as error:
        raise ValueError(f"`dataset` {source} ({listing.layout}) {error}.") from None
    if not any(groups.values()):
        raise ValueError(f"`dataset` {source} ({listing.layout}) has no readable image.")
    captions = {path: texts for split in images.values() for path, texts in split.items()}
    rule = "; ".join(part for part in (listing.split_rule, completed) if part)

    def build(image_size):
        datasets = {
            name: _pairs_dataset(paths, [captions[path] for path in paths], image_size)
            for name, paths in groups.items()
        }
        sizes = {name: len(paths) for name, paths in groups.items()}
        return DatasetSplits(datasets, sizes, listing.layout, rule, rebuild=build)

    return build(size)
