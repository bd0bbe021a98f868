"""Images decoded where the input pipeline meets them; a file that cannot be is skipped and named.

A folder of a million images is listed before training, never decoded whole:
each image is read and decoded inside the `tf.data` pipeline, in parallel,
and one that is truncated, empty, unreadable or not an image is handed to a
`SkippedItems` (counted, its name appended to the run's file, or a stop
under `--strict`) instead of failing the epoch with an error that names no
file.

Example:

>>> import os, tempfile
>>> import numpy as np, tensorflow as tf
>>> from keras_attention.data.image_decoding import decoded_images
>>> from keras_attention.data.skipped_items import SkippedItems
>>> folder = tempfile.mkdtemp()
>>> good, bad = os.path.join(folder, "good.png"), os.path.join(folder, "bad.png")
>>> _ = open(good, "wb").write(tf.io.encode_png(np.zeros((4, 6, 3), np.uint8)).numpy())
>>> _ = open(bad, "wb").write(b"not a png")
>>> skipped = SkippedItems("image files that cannot be decoded")
>>> items = tf.data.Dataset.from_tensor_slices(([good, bad], [0, 1]))
>>> [(image.shape, int(label)) for image, label in decoded_images(items, skipped, (8, 8))]
[(TensorShape([8, 8, 3]), 0)]
>>> skipped.take_count()
1
"""

import os

import tensorflow as tf

from keras_attention.data.skipped_items import SkippedItems

# The run's file naming the image files that cannot be decoded (appended to, one a line).
SKIPPED_IMAGES_FILE = "skipped_images.txt"


def undecodable_images(output_dir=None, strict=False):
    """The `SkippedItems` of the image files that cannot be decoded, named in the run's folder.

    Args:
        output_dir: the run's folder, whose `skipped_images.txt` names each
            one; None names none.
        strict: stop at the first one instead (`--strict`).

    Example:

    >>> from keras_attention.data.image_decoding import undecodable_images
    >>> undecodable_images("runs/vit").message(2, "in epoch 1")
    'skipped 2 image files that cannot be decoded in epoch 1 (named in runs/vit/skipped_images.txt)'
    """
    log = None if output_dir is None else os.path.join(output_dir, SKIPPED_IMAGES_FILE)
    return SkippedItems("image files that cannot be decoded", log, strict=strict)


def resize_image(image, size):
    """uint8 or float image `(h, w, 3)` -> float32 `(size[0], size[1], 3)` in 0..255.

    `size=None` keeps the image's own size.

    Example:

    >>> import numpy as np
    >>> from keras_attention.data.image_decoding import resize_image
    >>> resize_image(np.full((4, 4, 3), 255, np.uint8), (2, 3)).shape
    TensorShape([2, 3, 3])
    """
    if size is None:
        return tf.cast(image, tf.float32)
    image = tf.image.resize(image, size, antialias=True)
    return tf.clip_by_value(image, 0.0, 255.0)


JPEG_SCALE_RATIOS = (8, 4, 2)  # the reductions libjpeg's decoder does in its DCT
# Images decoded by one inner dataset of `decoded_images`, when the items' shapes are fixed.
DECODED_CHUNK = 16


def decode_image_data(data, channels=3, size=None):
    """The pixels of encoded image bytes (JPEG, PNG, GIF's 1st frame, BMP, WebP), uint8 (h, w, C).

    An alpha channel is dropped (for `channels=3`); a grayscale image gives
    equal channels.

    With `size`, the `(height, width)` the image will be resized to, a JPEG
    at least twice as large on both sides is decoded at 1/2, 1/4 or 1/8 of
    its size by libjpeg itself (the largest reduction that keeps both sides
    at or above `size`): most of the decoding work is skipped, and the
    reduction averages blocks of pixels, so the resize that follows still
    only shrinks. Other formats are decoded whole.

    Example:

    >>> import numpy as np, tensorflow as tf
    >>> from keras_attention.data.image_decoding import decode_image_data
    >>> jpeg = tf.io.encode_jpeg(np.zeros((240, 320, 3), np.uint8))
    >>> decode_image_data(jpeg).shape, decode_image_data(jpeg, size=(24, 32)).shape
    (TensorShape([240, 320, 3]), TensorShape([30, 40, 3]))
    """

    def whole():
        if channels != 3:
            return tf.io.decode_image(data, channels=channels, expand_animations=False)
        # TensorFlow's WebP decoder refuses 3 channels of an image with alpha: decode the
        # channels it has (3 or 4), then drop the alpha, as the PNG decoder does.
        is_webp = tf.logical_and(
            tf.equal(tf.strings.substr(data, 0, 4), b"RIFF"),
            tf.equal(tf.strings.substr(data, 8, 4), b"WEBP"),
        )
        return tf.cond(
            is_webp,
            lambda: tf.io.decode_image(data, channels=0, expand_animations=False)[..., :3],
            lambda: tf.io.decode_image(data, channels=3, expand_animations=False),
        )

    if size is None:
        return tf.ensure_shape(whole(), (None, None, channels))  # (h, w, C)

    def reduced_jpeg():
        height, width = tf.unstack(tf.image.extract_jpeg_shape(data)[:2])
        reduction = tf.minimum(height // size[0], width // size[1])
        branches = [
            (reduction >= ratio, lambda ratio=ratio: tf.io.decode_jpeg(data, channels, ratio=ratio))
            for ratio in JPEG_SCALE_RATIOS
        ]
        return tf.case(branches, default=lambda: tf.io.decode_jpeg(data, channels))

    is_jpeg = tf.equal(tf.strings.substr(data, 0, 3), b"\xff\xd8\xff")
    image = tf.cond(is_jpeg, reduced_jpeg, whole)
    return tf.ensure_shape(image, (None, None, channels))  # (h, w, C)


def decoded_images(items, skipped, image_size=None, encoded=False, deterministic=True):
    """`(image, *rest)` for each item whose image decodes; the others go to `skipped`.

    Args:
        items: a `tf.data.Dataset` of `(path, *rest)`, an image file's path
            first (`rest`: its label, its captions, ...); with `encoded`,
            of `(image bytes, name, *rest)`.
        skipped: the `SkippedItems` told of each image that cannot be read
            or decoded, by its path (or name).
        image_size: `(height, width)` every image is resized to (float32
            pixels in 0..255), or None to keep each image's own size.
        encoded: the items hold the encoded bytes and a name, not a path.
        deterministic: keep the items' order (False lets a slow file be
            overtaken, for training batches).

    Returns:
        a `tf.data.Dataset` of `(image float32 (h, w, 3), *rest)`.
    """
    size = None if image_size is None else tuple(int(side) for side in image_size)
    shape = (None, None, 3) if size is None else (*size, 3)

    @tf.autograph.experimental.do_not_convert  # plain TensorFlow ops: faster tracing
    def decode_or_mark(*item):
        source, name = (item[0], item[1]) if encoded else (item[0], item[0])
        rest = item[2:] if encoded else item[1:]
        read = (lambda data: data) if encoded else tf.io.read_file
        # An error of reading or decoding ends the inner dataset only: its
        # place is then taken by the empty image marked unusable.
        decoded = tf.data.Dataset.from_tensors(source).map(
            lambda source: (resize_image(decode_image_data(read(source), size=size), size), True)
        )
        unusable = tf.data.Dataset.from_tensors(
            (tf.zeros((1, 1, 3) if size is None else shape), False)
        )
        first = decoded.ignore_errors().concatenate(unusable).take(1)
        return first.map(lambda image, usable: (name, image, usable, *rest))

    if size is not None and _fixed_shapes(items.element_spec):
        # Items of fixed shapes are decoded a chunk at a time: the same
        # skipping, with a few datasets a chunk instead of a few an image.
        items, decode_or_mark = items.batch(DECODED_CHUNK), _chunk_decoder(size, encoded)
    checked = items.interleave(
        decode_or_mark,
        cycle_length=tf.data.AUTOTUNE,
        num_parallel_calls=tf.data.AUTOTUNE,
        deterministic=deterministic,
    )
    checked = checked.filter(lambda name, image, usable, *rest: skipped.keep(usable, name))
    return checked.map(lambda name, image, usable, *rest: (tf.ensure_shape(image, shape), *rest))


def _fixed_shapes(element_spec):
    """Whether every component is a dense tensor of a fully known shape (batchable as is)."""
    specs = element_spec if isinstance(element_spec, tuple) else (element_spec,)
    return all(isinstance(spec, tf.TensorSpec) and spec.shape.is_fully_defined() for spec in specs)


def _chunk_decoder(size, encoded):
    """The inner dataset of a chunk of items: `(name, image, usable, *rest)` for each of them.

    The images that decode come first, in order; then each one that could
    not be read or decoded, marked unusable with a zero image.
    """
    shape = (*size, 3)

    @tf.autograph.experimental.do_not_convert  # plain TensorFlow ops: faster tracing
    def decode_chunk(*chunk):
        sources, names = (chunk[0], chunk[1]) if encoded else (chunk[0], chunk[0])
        rest = chunk[2:] if encoded else chunk[1:]
        read = (lambda data: data) if encoded else tf.io.read_file
        indices = tf.range(tf.shape(sources)[0])  # (k,)

        def decode_one(index):
            data = read(tf.gather(sources, index))
            return index, resize_image(decode_image_data(data, size=size), size)

        # An error drops that image only; the chunk's decoded ones then come as one batch.
        decoded = tf.data.Dataset.from_tensor_slices(indices).map(decode_one).ignore_errors()
        nothing = tf.data.Dataset.from_tensors((tf.zeros((0,), tf.int32), tf.zeros((0, *shape))))
        batched = decoded.batch(DECODED_CHUNK).concatenate(nothing).take(1)

        def marked(good, images):
            decodes = tf.reduce_any(tf.equal(indices[:, None], good[None, :]), axis=1)  # (k,)
            bad = tf.boolean_mask(indices, tf.logical_not(decodes))

            def items_at(where, pictures, usable):
                parts = (tf.gather(names, where), pictures, tf.fill(tf.shape(where), usable))
                parts += tuple(tf.gather(part, where) for part in rest)
                return tf.data.Dataset.from_tensor_slices(parts)

            blank = tf.zeros(tf.concat([tf.shape(bad), shape], axis=0))  # (bad, h, w, 3)
            return items_at(good, images, True).concatenate(items_at(bad, blank, False))

        return batched.flat_map(marked)

    return decode_chunk
