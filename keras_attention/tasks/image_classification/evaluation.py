"""Judging an image classifier: its test predictions, and the loss of guessing by class frequency.

Example:

>>> import numpy as np, tensorflow as tf
>>> from keras_attention.tasks.image_classification.evaluation import class_prior_loss
>>> pairs = tf.data.Dataset.from_tensor_slices((np.zeros((4, 2, 2, 3)), [0, 1, 1, 0]))
>>> round(class_prior_loss(pairs), 4)  # two equally frequent classes: ln 2
0.6931
"""

import numpy as np

from keras_attention.losses.prior_cross_entropy import prior_cross_entropy
from keras_attention.progress import shows_bars
from keras_attention.validation import check_positive_int


def evaluate_classifier(model, test_batches, num_images):
    """Test labels, predicted labels, and the first `num_images` test images.

    Args:
        model: a classifier whose `predict` gives `(N, classes)` scores.
        test_batches: batches of `(images, one-hot labels)`, in a fixed order.
        num_images: how many of the first test images to return.

    Returns:
        `(labels, predictions, images)`: `(N,)` ints, `(N,)` ints and
        `(num_images, H, W, C)` images (fewer where the test set is smaller).
    """
    check_positive_int("num_images", num_images)
    # keras' bar on a terminal, one line otherwise (`--quiet` too).
    print("classifying the test images:")
    scores = model.predict(test_batches, verbose=1 if shows_bars() else 2)
    predictions = np.argmax(scores, axis=-1)
    labels = np.concatenate([np.argmax(one_hot, axis=-1) for _, one_hot in test_batches])
    first = test_batches.unbatch().batch(num_images).take(1)
    images = np.concatenate([images.numpy() for images, _ in first])
    return labels, predictions, images


def class_prior_loss(train_split):
    """The loss of a model that ignores the image and predicts the class frequencies.

    Args:
        train_split: a `tf.data.Dataset` of unbatched `(image, label)` pairs.

    Returns:
        float, in nats.
    """
    labels = train_split.map(lambda image, label: label).batch(1024)
    return prior_cross_entropy(list(labels.as_numpy_iterator()))
