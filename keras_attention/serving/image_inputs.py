"""Checks, inside a serving graph, that a request's images can be answered.

An image signature takes `images` of unknown rank and checks in the graph
that it is a batch `(B, H, W, C)`: a signature declared
`(None, None, None, C)` does not check the rank of what it is given, and
its graph, traced for rank 4, cannot see it (`tf.rank` is folded to 4), so
one image `(H, W, C)` would run into the model and fail deep inside it.

One image is refused, with the fix in the message (`images[None]`), rather
than answered as one: the signature then describes its outputs with their
static shapes (`(-1, num_classes)`, `(-1, max_length, h, w)`), which
`saved_model_cli` and TF Serving's metadata show to clients, and keeps the
documented `(B, H, W, C)` contract; an image, unlike a string, is not a
scalar that a batch axis would be awkward to add to.

The checks are `tf.debugging.Assert`s, which XLA compiles away: they must
run in the plain TensorFlow part of a serving function, before any
XLA-compiled call (the decoding of a captioner), as they do here.
"""

import tensorflow as tf

from keras_attention.validation import PIXEL_RANGE


def image_input_spec(dtype=tf.float32):
    """The `images` input of an image signature: any rank, checked by `checked_images`.

    Args:
        dtype: the pixel dtype the signature takes.

    Returns:
        a `tf.TensorSpec` of unknown shape named `images`.

    Example:

    >>> image_input_spec()
    TensorSpec(shape=<unknown>, dtype=tf.float32, name='images')
    """
    return tf.TensorSpec(shape=None, dtype=dtype, name="images")


def checked_images(images, channels):
    """`images` checked as a `(B, H, W, channels)` batch of pixels, with that static rank.

    Raises (when the graph runs) a `tf.errors.InvalidArgumentError` whose
    message names `images`, what was expected and what was received, for

    - a rank other than 4 (one image `(H, W, C)` included: the message says
      to send it as a batch of one);
    - a channel count other than `channels`, or a height or width of 0;
    - a NaN or infinite pixel (a confident label or a garbage caption
      otherwise);
    - a float pixel outside 0..255 (16-bit values, 1e38, negative values
      would be answered as if they were pixels).

    Args:
        images: a tensor of pixels, of any rank.
        channels: the channel count the model takes.

    Returns:
        `images`, of static shape `(None, None, None, channels)`.

    Example:

    >>> import tensorflow as tf
    >>> checked_images(tf.zeros((2, 5, 7, 3)), 3).shape
    TensorShape([2, 5, 7, 3])
    >>> checked_images(tf.zeros((5, 7, 3)), 3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tensorflow...InvalidArgumentError: ...one image as a batch of one (images[None])...
    >>> checked_images(tf.fill((1, 2, 2, 3), 65535.0), 3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tensorflow...InvalidArgumentError: ...must hold pixel values in 0..255...
    """
    shape = tf.shape(images)
    rank_check = _check(
        tf.equal(tf.size(shape), 4),
        f"`images` must be a batch (batch, height, width, {channels}), one image as a batch "
        "of one (images[None]). Received: images.shape={}",
        [shape],
    )
    with tf.control_dependencies([rank_check]):
        size_check = _check(
            tf.logical_and(tf.equal(shape[-1], channels), tf.reduce_all(shape[1:3] > 0)),
            f"`images` must be (batch, height, width, {channels}) with height, width > 0. "
            "Received: images.shape={}",
            [shape],
        )
    checks = [size_check]
    if images.dtype.is_floating:
        checks.append(_pixel_values_check(images, size_check))
    with tf.control_dependencies(checks):
        images = tf.identity(images)
    return tf.ensure_shape(images, (None, None, None, channels))


def _pixel_values_check(images, after):
    """Asserts that the float `images` are finite, then that they lie in 0..255."""
    low, high = PIXEL_RANGE
    with tf.control_dependencies([after]):
        finite = tf.math.is_finite(images)
        finite_check = _check(
            tf.reduce_all(finite),
            "`images` must hold finite pixel values (0..255). Received: images with {} NaN or "
            "infinite values",
            [tf.reduce_sum(tf.cast(tf.logical_not(finite), tf.int32))],
        )
    with tf.control_dependencies([finite_check]):
        outside = tf.logical_or(images < low, images > high)
        return _check(
            tf.logical_not(tf.reduce_any(outside)),
            "`images` must hold pixel values in 0..255, as 8-bit images store them (uint8, or "
            "float on that scale). Received: images with values from {} to {} ({} values "
            "outside 0..255)",
            [
                tf.reduce_min(images),
                tf.reduce_max(images),
                tf.reduce_sum(tf.cast(outside, tf.int32)),
            ],
        )


def _check(condition, message, values):
    """An Assert of `condition` whose message is `message` with `values` in its `{}`s."""
    return tf.debugging.Assert(condition, [tf.strings.format(message, values, summarize=8)])
