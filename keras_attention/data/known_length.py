"""Giving a `tf.data.Dataset` of unknown length its length, counted once."""

import tensorflow as tf


def with_known_length(dataset):
    """`dataset` with its cardinality known, counting its elements once if TF cannot tell.

    Keras treats a dataset of unknown length (after `filter`, `ignore_errors`,
    files read line by line) as one that may end anywhere: at the end of the
    first epoch it warns "Your input ran out of data", although nothing is
    wrong. Counting once and asserting the count removes that warning, lets
    the progress bar show the epoch's length, and fails loudly if the data
    later changes length.

    Args:
        dataset: a finite `tf.data.Dataset`.

    Returns:
        the dataset, with `cardinality()` >= 0.

    Example:

    >>> import tensorflow as tf
    >>> evens = tf.data.Dataset.range(10).filter(lambda x: x % 2 == 0)
    >>> int(evens.cardinality()) < 0, int(with_known_length(evens).cardinality())
    (True, 5)
    """
    count = int(dataset.cardinality())
    if count == tf.data.INFINITE_CARDINALITY:
        raise ValueError(
            "`dataset` must be finite to count its length. Received: a dataset of infinite "
            "cardinality (remove `.repeat()`)"
        )
    if count >= 0:
        return dataset
    count = int(dataset.reduce(tf.constant(0, tf.int64), lambda total, _: total + 1))
    return dataset.apply(tf.data.experimental.assert_cardinality(count))
