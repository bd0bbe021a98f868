"""Caption data sets read from files: the images checked, the splits completed, the pairs made.

`caption_file_splits` takes what a caption layout lists (a `CaptionListing`)
and makes the `(image, caption)` datasets of `load_caption_dataset`, never
reading an image before training:

1. a listed image whose file is missing is skipped with one warning naming
   it (an error with `strict`); the others are decoded where the pipeline
   meets them, and one that cannot be is skipped and named there
   (`SkippedItems`);
2. the splits are completed: a layout with no splits of its own is split
   at random by image (seeded); one with a training split but no validation
   or test split gets it from its other held-out split (every other image
   by name) or, with neither, at random from train; the rule is reported;
3. each image is decoded once and repeated for each of its captions; the
   training images come in a new order every epoch, drawn among their
   file names;
4. the training captions (a sample of at most `SAMPLE_SIZE` of them) are
   kept as strings, for the vocabulary and lengths to be learned without
   decoding an image.

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
>>> splits.sizes, splits.elements, sorted(splits.sample)
({'train': 3, 'validation': 1, 'test': 1}, {'train': 3, 'validation': 1, 'test': 1}, ...)
"""

import os
import random
import warnings

import numpy as np
import tensorflow as tf

from keras_attention.data.dataset_paths import names_for_message
from keras_attention.data.dataset_splits import SPLIT_NAMES
from keras_attention.data.dataset_splits import DatasetSplits
from keras_attention.data.held_out_splits import every_other
from keras_attention.data.held_out_splits import seeded_split
from keras_attention.data.image_decoding import decoded_images
from keras_attention.data.image_decoding import undecodable_images
from keras_attention.data.worker_shards import ONE_WORKER
from keras_attention.data.worker_shards import shard_for_worker
from keras_attention.tasks.captioning.layouts.caption_listing import ALL

# Training captions kept as strings, at most: the sample vocabularies and lengths come from.
SAMPLE_SIZE = 200_000
# A missing image of one of these names with one of these captions is a header line.
HEADER_IMAGE_NAMES = ("image", "images", "file", "filename", "file_name", "image_name", "path")
HEADER_CAPTION_NAMES = ("caption", "captions", "text", "sentence", "description")


def one_element_per_caption(image, captions):
    """`(image, captions (n,))` -> `n` copies of the image, ready for `unbatch`."""
    count = tf.shape(captions)[0]
    images = tf.repeat(image[None], count, axis=0)  # (n, H, W, 3)
    return images, captions


def _pairs_dataset(paths, captions, size, skipped, shuffle_seed=None, shard=ONE_WORKER):
    """Image paths and their caption lists -> one `(image, caption)` element per caption.

    With `shuffle_seed`, the images come in a new order every epoch, drawn
    among their paths before any is decoded; `shard` keeps one worker's
    images (`worker_shards`).
    """
    flat_captions = [text for texts in captions for text in texts]
    captions_per_image = tf.RaggedTensor.from_row_lengths(
        tf.constant(flat_captions, dtype=tf.string, shape=(len(flat_captions),)),
        tf.constant([len(texts) for texts in captions], dtype=tf.int64, shape=(len(paths),)),
    )
    items = tf.data.Dataset.from_tensor_slices(
        (tf.constant(paths, dtype=tf.string, shape=(len(paths),)), captions_per_image)
    )
    items = shard_for_worker(items, shard)
    if shuffle_seed is not None:
        items = items.shuffle(len(paths), seed=shuffle_seed, reshuffle_each_iteration=True)
    # Each image is decoded once, then repeated for each of its captions.
    decoded = decoded_images(items, skipped, size, deterministic=shuffle_seed is None)
    return decoded.map(one_element_per_caption).unbatch()


def _header_line(listing, missing):
    """`(path, "name<TAB>caption")` of a missing "image" that is a column header, or None.

    Caption files of `file<TAB>caption` lines have no header line; one such
    as `image<TAB>caption` would be read as a caption of an image file
    named "image". It is recognised by both of its names.
    """
    for images in listing.images.values():
        for path in missing:
            name = os.path.relpath(path, listing.root)
            if name.lower() not in HEADER_IMAGE_NAMES:
                continue
            for caption in images.get(path, ()):
                if caption.lower() in HEADER_CAPTION_NAMES:
                    return path, f"{name}<TAB>{caption}"
    return None


def _present_images(listing, source, strict):
    """`listing.images` without the images whose files are missing (reported); none is read."""
    listed = sorted({path for images in listing.images.values() for path in images})
    missing = [path for path in listed if not os.path.isfile(path)]
    header = _header_line(listing, missing) if missing else None
    if header:
        message = (
            f"{listing.layout} under {listing.root} has a header line, `{header[1]}`, read as "
            "an image file; it takes none: every line is `file<TAB>caption`. Remove that line"
        )
        if strict:
            raise ValueError(f"{message}.")
        warnings.warn(f"{message}; it is skipped.", stacklevel=4)
    unexpected = [path for path in missing if not header or path != header[0]]
    if unexpected:
        names = names_for_message([os.path.relpath(path, listing.root) for path in unexpected])
        count = f"{len(unexpected)} of {len(listed)} image(s)"
        where = f"listed by {source} under {listing.root}"
        if strict:
            raise ValueError(f"{count} {where} cannot be read; {len(unexpected)} missing: {names}.")
        warnings.warn(f"Skipped {count} {where}; {len(unexpected)} missing: {names}.", stacklevel=4)
    gone = set(missing)
    return {
        split: {path: captions for path, captions in images.items() if path not in gone}
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
    listing,
    size,
    validation_fraction,
    test_fraction,
    seed,
    strict=False,
    source=None,
    skipped=None,
    shuffle_seed=None,
    shard=ONE_WORKER,
):
    """The `(image, caption)` splits of a caption layout's listing.

    One function on purpose: its steps (check the images, complete the splits, count the
    captions) each call a helper, and `build`, which the splits keep to rebuild
    themselves at another size, needs all of their results.

    Args:
        listing: a `CaptionListing`.
        size: `(height, width)` the images are resized to; None keeps them.
        validation_fraction, test_fraction: shares of the held-out splits
            drawn at random, for a layout without them.
        seed: the seed of those draws and of the training images' order.
        strict: a missing image raises a ValueError naming it, instead of
            being skipped with a warning naming it; an image that cannot be
            decoded stops the run where the pipeline meets it (with
            `skipped`'s own setting when one is given).
        source: the `--dataset` value, for messages.
        skipped: the `SkippedItems` told of the images that cannot be
            decoded; by default one that counts them.
        shuffle_seed: the seed of the training images' order, drawn anew
            every epoch (default `seed`; the splits depend on `seed` only).
        shard: `(num_workers, index)`: the training split is this worker's
            images alone; one worker by default.

    Returns:
        a `DatasetSplits` of `(image float32 (h, w, 3), caption tf.string)`
        pairs, whose `sizes` count images, `elements` captions, `sample`
        holds training captions, and whose `resized(size)` makes them again
        at another size.
    """
    source = source or listing.layout
    if skipped is None:
        skipped = undecodable_images(strict=strict)
    images = _present_images(listing, source, strict)
    try:
        groups, completed = _complete_splits(images, validation_fraction, test_fraction, seed)
    except ValueError as error:
        raise ValueError(f"`dataset` {source} ({listing.layout}) {error}.") from None
    if not any(groups.values()):
        raise ValueError(f"`dataset` {source} ({listing.layout}) has no readable image.")
    captions = {path: texts for split in images.values() for path, texts in split.items()}
    rule = "; ".join(part for part in (listing.split_rule, completed) if part)

    elements = {name: sum(len(captions[path]) for path in paths) for name, paths in groups.items()}
    order_seed = seed if shuffle_seed is None else shuffle_seed
    train_captions = [text for path in groups["train"] for text in captions[path]]
    if len(train_captions) > SAMPLE_SIZE:
        train_captions = random.Random(seed).sample(train_captions, SAMPLE_SIZE)

    def build(image_size):
        # At their own size the images are only measured (`median_image_size`):
        # in listed order, unsharded, so that every worker and every resumed
        # run derives the same size from the same images.
        ordered = image_size is None
        datasets = {
            name: _pairs_dataset(
                paths,
                [captions[path] for path in paths],
                image_size,
                skipped,
                *((order_seed, shard) if name == "train" and not ordered else ()),
            )
            for name, paths in groups.items()
        }
        sizes = {name: len(paths) for name, paths in groups.items()}
        return DatasetSplits(
            datasets,
            sizes,
            listing.layout,
            rule,
            rebuild=build,
            sample=train_captions,
            skipped=(skipped,),
            elements=elements,
        )

    return build(size)
