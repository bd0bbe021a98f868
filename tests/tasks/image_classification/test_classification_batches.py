"""Image classification batches: one-hot labels, and augmentation of training batches only."""

import numpy as np
import pytest
import tensorflow as tf

from keras_attention.tasks.image_classification.batches import make_classification_batches


def _pairs():
    images = np.zeros((4, 16, 16, 3), "float32")
    images[:, 4:12, 7:9] = 255.0
    return images, tf.data.Dataset.from_tensor_slices((images, np.arange(4) % 2))


def test_only_training_batches_are_augmented():
    images, pairs = _pairs()
    evaluation = make_classification_batches(pairs, 4, 2, augmentation="geometric")
    ((batch, one_hot),) = list(evaluation.as_numpy_iterator())
    np.testing.assert_array_equal(batch, images)
    np.testing.assert_array_equal(one_hot.argmax(-1), [0, 1, 0, 1])
    training = make_classification_batches(pairs, 4, 2, shuffle_seed=0, augmentation="geometric")
    ((batch, _),) = list(training.as_numpy_iterator())
    assert batch.shape == images.shape and not np.allclose(batch, images)


def test_training_batches_are_shuffled_full_and_one_hot():
    labels = np.arange(10)
    pairs = tf.data.Dataset.from_tensor_slices((np.zeros((10, 2, 2, 3), "float32"), labels))
    training = make_classification_batches(pairs, 4, num_classes=10, shuffle_seed=1)
    batches = [one_hot for _, one_hot in training.as_numpy_iterator()]
    assert [b.shape for b in batches] == [(4, 10), (4, 10)]  # the last 2 are dropped
    seen = np.concatenate([b.argmax(-1) for b in batches])
    np.testing.assert_array_equal(np.concatenate(batches).sum(-1), np.ones(8))
    assert len(set(seen.tolist())) == 8 and seen.tolist() != list(range(8))
    evaluation = make_classification_batches(pairs, 4, num_classes=10)
    seen = [b.argmax(-1).tolist() for _, b in evaluation.as_numpy_iterator()]
    assert seen == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]  # in order, all kept


def test_bad_sizes_are_named():
    _, pairs = _pairs()
    with pytest.raises(ValueError, match="batch_size"):
        make_classification_batches(pairs, 0, 2)
    with pytest.raises(ValueError, match="num_classes"):
        make_classification_batches(pairs, 2, -1)
