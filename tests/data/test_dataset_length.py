"""Counting a dataset's elements where it does not know its length."""

import tensorflow as tf

from keras_attention.data.dataset_length import dataset_length


def test_known_and_unknown_lengths():
    numbers = tf.data.Dataset.range(25)
    assert dataset_length(numbers) == 25
    assert dataset_length(numbers.batch(4)) == 7
    assert dataset_length(numbers.batch(4, drop_remainder=True)) == 6
    filtered = numbers.filter(lambda x: x % 5 == 0)
    assert int(filtered.cardinality()) < 0  # unknown: counted
    assert dataset_length(filtered) == 5
    assert dataset_length(filtered.batch(2)) == 3
    assert dataset_length(numbers.take(0)) == 0
