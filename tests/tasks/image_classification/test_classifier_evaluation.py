"""A classifier's test labels, predictions and first images; the class-prior loss."""

import math

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_attention.tasks.image_classification.evaluation import class_prior_loss
from keras_attention.tasks.image_classification.evaluation import evaluate_classifier
from keras_attention.tasks.image_classification.evaluation import images_classified


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


def test_tested_images_says_how_many_of_the_listed_ones_were_classified(recwarn):
    labels = np.array([0, 2, 2, 0])
    assert images_classified(labels) == "4 images"
    assert images_classified(labels, listed=4, listed_per_class=[2, 0, 2]) == "4 images"
    assert images_classified(labels, listed=6, listed_per_class=[2, 1, 3], class_names="abc") == (
        "4 of the 6 listed images (2 could not be decoded)"
    )
    # Class "b" had one test image and it is gone: the accuracy says nothing about it.
    assert [str(w.message) for w in recwarn.list] == [
        "no test image of class 'b' could be decoded (1 listed): the test accuracy says "
        "nothing about it; see skipped_images.txt in the run's folder"
    ]


def test_tested_images_names_no_class_while_each_keeps_an_image(recwarn):
    labels = np.array([0, 1, 2])
    assert images_classified(labels, listed=5, listed_per_class=[2, 2, 1], class_names="abc") == (
        "3 of the 5 listed images (2 could not be decoded)"
    )
    assert (
        images_classified(labels, listed=5) == "3 of the 5 listed images (2 could not be decoded)"
    )
    assert not recwarn.list
