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

import tensorflow as tf


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


def decode_image_data(data):
    """The pixels of encoded image bytes (JPEG, PNG, GIF's first frame, BMP), uint8 `(h, w, 3)`."""
    return tf.io.decode_image(data, channels=3, expand_animations=False)


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
            lambda source: (resize_image(decode_image_data(read(source)), size), True)
        )
        unusable = tf.data.Dataset.from_tensors(
            (tf.zeros((1, 1, 3) if size is None else shape), False)
        )
        first = decoded.ignore_errors().concatenate(unusable).take(1)
        return first.map(lambda image, usable: (name, image, usable, *rest))

    checked = items.interleave(
        decode_or_mark,
        cycle_length=tf.data.AUTOTUNE,
        num_parallel_calls=tf.data.AUTOTUNE,
        deterministic=deterministic,
    )
    checked = checked.filter(lambda name, image, usable, *rest: skipped.keep(usable, name))
    return checked.map(lambda name, image, usable, *rest: (tf.ensure_shape(image, shape), *rest))
