"""The number of elements of a `tf.data.Dataset`, counted once where its size is unknown.

A filtered dataset (skipped files, some tensorflow-datasets sets) does not
know its length; the training scripts need it for the schedule and the
training recipe.

Example:

>>> import tensorflow as tf
>>> from keras_attention.data.dataset_length import dataset_length
>>> numbers = tf.data.Dataset.range(10)
>>> dataset_length(numbers), dataset_length(numbers.filter(lambda x: x % 3 == 0))
(10, 4)
"""


def dataset_length(dataset):
    """Number of elements of `dataset` (batches of a batched one).

    Args:
        dataset: a finite `tf.data.Dataset`.

    Returns:
        int: its cardinality where known, else the count of one pass over it.

    Example:

    >>> import tensorflow as tf
    >>> from keras_attention.data.dataset_length import dataset_length
    >>> dataset_length(tf.data.Dataset.range(7).batch(2))
    4
    """
    count = int(dataset.cardinality())
    if count < 0:  # unknown (-2); an infinite dataset (-1) would never finish either way
        count = int(dataset.reduce(0, lambda total, _: total + 1))
    return count
