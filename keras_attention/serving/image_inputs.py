"""Checks, inside a serving graph, that a request's images can be answered.

An image signature takes `images` of unknown rank: a batch `(B, H, W, C)`,
or one image `(H, W, C)` answered as one (outputs without their batch axis),
as a translator answers one string with one string. The rank is checked in
the graph: a signature declared `(None, None, None, C)` does not check the
rank of what it is given, and its graph, traced for rank 4, cannot see it.

The checks are `tf.debugging.Assert`s, which XLA compiles away: they must
run in the plain TensorFlow part of a serving function, before any
XLA-compiled call (the decoding of a captioner), as they do here.
"""

import tensorflow as tf

# Pixels are 0..255, as 8-bit images store them.
PIXEL_RANGE = (0.0, 255.0)


def image_input_spec(dtype=tf.float32):
    """The `images` input of an image signature: any rank, checked by `image_batch`.

    Args:
        dtype: the pixel dtype the signature takes.

    Returns:
        a `tf.TensorSpec` of unknown shape named `images`.

    Example:

    >>> image_input_spec()
    TensorSpec(shape=<unknown>, dtype=tf.float32, name='images')
    """
    return tf.TensorSpec(shape=None, dtype=dtype, name="images")


def image_batch(images, channels):
    """`images` as a checked `(B, H, W, channels)` batch, and the shape to answer in.

    Raises (when the graph runs) a `tf.errors.InvalidArgumentError` whose
    message names `images`, what was expected and what was received, for

    - a rank other than 3 (one image) or 4 (a batch);
    - a channel count other than `channels`, or a height or width of 0;
    - a NaN or infinite pixel (a confident label or a garbage caption
      otherwise);
    - a float pixel outside 0..255 (16-bit values, 1e38, negative values
      would be answered as if they were pixels).

    Args:
        images: a tensor of pixels, of any rank.
        channels: the channel count the model takes.

    Returns:
        `(batch, request_shape)`: the `(B, H, W, channels)` images (one image
        gets a batch axis of 1) and the leading shape of the request, `[B]`
        or `[]`, for `shaped_like_request`.

    Example:

    >>> import tensorflow as tf
    >>> batch, request_shape = image_batch(tf.zeros((5, 7, 3)), 3)
    >>> tuple(batch.shape), request_shape.numpy().tolist()
    ((1, 5, 7, 3), [])
    >>> image_batch(tf.fill((1, 2, 2, 3), 65535.0), 3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tensorflow...InvalidArgumentError: ...must hold pixel values in 0..255...
    """
    shape = tf.shape(images)
    rank = tf.size(shape)
    rank_check = _check(
        tf.logical_or(tf.equal(rank, 3), tf.equal(rank, 4)),
        f"`images` must be a batch (batch, height, width, {channels}) or one image "
        f"(height, width, {channels}). Received: images.shape={{}}",
        [shape],
    )
    with tf.control_dependencies([rank_check]):
        size_check = _check(
            tf.logical_and(tf.equal(shape[-1], channels), tf.reduce_all(shape[-3:-1] > 0)),
            f"`images` must be (batch, height, width, {channels}) with height, width > 0. "
            "Received: images.shape={}",
            [shape],
        )
    checks = [size_check]
    if images.dtype.is_floating:
        checks.append(_pixel_values_check(images, size_check))
    with tf.control_dependencies(checks):
        # (..., H, W, C) -> (B, H, W, C): one image becomes a batch of one.
        batch = tf.reshape(images, tf.concat([[-1], shape[-3:]], axis=0))
    return tf.ensure_shape(batch, (None, None, None, channels)), shape[:-3]


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


def shaped_like_request(outputs, request_shape):
    """Each `(B, ...)` output of `outputs` reshaped to `request_shape + (...)`.

    A batch request keeps its batch axis; one image (`request_shape` `[]`)
    gets outputs without it.

    Args:
        outputs: a dict of tensors with the batch on axis 0.
        request_shape: the leading shape `image_batch` returned.

    Returns:
        the dict of reshaped tensors.

    Example:

    >>> import tensorflow as tf
    >>> outputs = {"labels": tf.constant(["cat"])}
    >>> shaped_like_request(outputs, tf.constant([], tf.int32))["labels"].shape
    TensorShape([])
    """
    return {
        name: tf.reshape(value, tf.concat([request_shape, tf.shape(value)[1:]], axis=0))
        for name, value in outputs.items()
    }
