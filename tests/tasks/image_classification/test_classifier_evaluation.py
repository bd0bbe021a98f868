"""A classifier's test labels, predictions and first images; the class-prior loss."""

import math

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_attention.tasks.image_classification.evaluation import class_prior_loss
from keras_attention.tasks.image_classification.evaluation import evaluate_classifier


def test_evaluate_classifier_gives_labels_predictions_and_first_images():
    images = np.arange(6 * 2 * 2 * 1, dtype="float32").reshape(6, 2, 2, 1)
    labels = np.array([2, 0, 1, 1, 0, 2])
    # A "model" that reads the class off the first pixel: pixel 4k predicts class (k % 3).
    model = keras.Sequential(
        [
            keras.Input((2, 2, 1)),
            keras.layers.Lambda(
                lambda x: keras.ops.one_hot(keras.ops.cast(x[:, 0, 0, 0] / 4, "int32") % 3, 3)
            ),
        ]
    )
    batches = tf.data.Dataset.from_tensor_slices((images, np.eye(3)[labels])).batch(4)
    true, predicted, first = evaluate_classifier(model, batches, num_images=2)
    np.testing.assert_array_equal(true, labels)
    np.testing.assert_array_equal(predicted, np.arange(6) % 3)
    np.testing.assert_array_equal(first, images[:2])
    with pytest.raises(ValueError, match="num_images"):
        evaluate_classifier(model, batches, num_images=0)


def test_class_prior_loss_is_the_entropy_of_the_class_frequencies():
    labels = np.array([0, 0, 0, 1, 2, 2])
    pairs = tf.data.Dataset.from_tensor_slices((np.zeros((6, 2, 2, 3)), labels))
    frequencies = np.bincount(labels) / len(labels)
    entropy = -sum(p * math.log(p) for p in frequencies)
    np.testing.assert_allclose(class_prior_loss(pairs), entropy, rtol=1e-6)
