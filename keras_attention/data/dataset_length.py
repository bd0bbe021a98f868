"""The length of a `tf.data.Dataset`: known, or counted once where TensorFlow cannot tell it.

A filtered dataset (skipped files, lines read from a file, some
tensorflow-datasets sets) does not know its length. `known_length` says it
without reading any data; `dataset_length` counts one pass where it is
unknown (a whole pass over a large data set: training never needs it, its
epochs are counted in steps); `with_known_length` asserts the count, for
the progress bar of an evaluation.

Example:

>>> import tensorflow as tf
>>> from keras_attention.data.dataset_length import dataset_length
>>> numbers = tf.data.Dataset.range(10)
>>> dataset_length(numbers), dataset_length(numbers.filter(lambda x: x % 3 == 0))
(10, 4)
"""

import tensorflow as tf


def known_length(dataset):
    """The length of `dataset` where TensorFlow knows it without reading it, else None.

    Args:
        dataset: a `tf.data.Dataset`.

    Returns:
        int >= 0, or None for an unknown or infinite length.

    Example:

    >>> import tensorflow as tf
    >>> from keras_attention.data.dataset_length import known_length
    >>> numbers = tf.data.Dataset.range(7)
    >>> known_length(numbers.batch(2)), known_length(numbers.filter(lambda x: x > 2))
    (4, None)
    """
    count = int(dataset.cardinality())
    return count if count >= 0 else None


def dataset_length(dataset):
    """Number of elements of `dataset` (batches of a batched one).

    Args:
        dataset: a finite `tf.data.Dataset`.

    Returns:
        int: its cardinality where known, else the count of one pass over it.

    Raises:
        ValueError: for an infinite dataset (`.repeat()`), which has no length.

    Example:

    >>> import tensorflow as tf
    >>> from keras_attention.data.dataset_length import dataset_length
    >>> dataset_length(tf.data.Dataset.range(7).batch(2))
    4
    """
    count = int(dataset.cardinality())
    if count == tf.data.INFINITE_CARDINALITY:
        raise ValueError(
            "`dataset` must be finite to count its length. Received: a dataset of infinite "
            "cardinality (remove `.repeat()`)"
        )
    if count < 0:  # unknown: count one pass
        count = int(dataset.reduce(tf.constant(0, tf.int64), lambda total, _: total + 1))
    return count


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
    >>> from keras_attention.data.dataset_length import with_known_length
    >>> evens = tf.data.Dataset.range(10).filter(lambda x: x % 2 == 0)
    >>> int(evens.cardinality()) < 0, int(with_known_length(evens).cardinality())
    (True, 5)
    """
    if int(dataset.cardinality()) >= 0:
        return dataset
    count = dataset_length(dataset)
    return dataset.apply(tf.data.experimental.assert_cardinality(count))
