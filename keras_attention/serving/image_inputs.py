"""Checks, inside a serving graph, that a request's images can be answered."""

import tensorflow as tf


def checked_images(images, channels):
    """`images` once its channels and size are checked, with a readable error.

    A serving signature does not check shapes itself: without this check a
    bad request fails deep in the graph with a message about convolutions.
    """
    shape = tf.shape(images)
    size_check = tf.debugging.Assert(
        tf.logical_and(tf.equal(shape[-1], channels), tf.reduce_all(shape[1:3] > 0)),
        [
            f"`images` must be (batch, height, width, {channels}) with height, width > 0.",
            "Received: images.shape=",
            shape,
        ],
        summarize=4,
    )
    # NaN or inf pixels would come back as a confident label or a garbage caption.
    finite_check = tf.debugging.Assert(
        tf.reduce_all(tf.math.is_finite(images)),
        [
            "`images` must hold finite pixel values (0..255). Received: images with NaN or "
            "infinite values; count of non-finite values:",
            tf.reduce_sum(tf.cast(tf.logical_not(tf.math.is_finite(images)), tf.int32)),
        ],
    )
    with tf.control_dependencies([size_check, finite_check]):
        return tf.identity(images)
