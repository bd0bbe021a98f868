"""Batches of `(images, one-hot labels)` for training and evaluating an image classifier.

One-hot labels let the loss smooth them. Only the shuffled (training) batches
are augmented: evaluation and export see the images as they are.

Example:

>>> import numpy as np
>>> import tensorflow as tf
>>> from keras_attention.tasks.image_classification.batches import make_classification_batches
>>> pairs = tf.data.Dataset.from_tensor_slices((np.zeros((5, 8, 8, 3), "float32"), [0, 1, 2, 0, 1]))
>>> images, labels = next(iter(make_classification_batches(pairs, 4, num_classes=3)))
>>> tuple(images.shape), labels.numpy().argmax(-1).tolist()
((4, 8, 8, 3), [0, 1, 2, 0])
"""

import tensorflow as tf

from keras_attention.data.image_augmentation import augment_batches
from keras_attention.data.image_shuffle import image_shuffle_buffer
from keras_attention.validation import check_positive_int

SHUFFLE_BUFFER = 4096


def make_classification_batches(
    dataset, batch_size, num_classes, shuffle_seed=None, augmentation="none"
):
    """Batched `(images, one-hot labels)`, shuffled and augmented for training.

    Args:
        dataset: unbatched `(image, integer label)` pairs.
        batch_size: images per batch.
        num_classes: length of the one-hot labels.
        shuffle_seed: None for evaluation batches (in order, the last one
            partial); an int for training batches: shuffled each epoch,
            augmented, and only full batches (one batch shape, compiled once).
        augmentation: a kind of `augment_batches` ("none", "geometric",
            "flip"), applied to training batches only.

    Returns:
        a prefetched `tf.data.Dataset`.

    Example:

    >>> import numpy as np
    >>> import tensorflow as tf
    >>> from keras_attention.tasks.image_classification.batches import make_classification_batches
    >>> pairs = tf.data.Dataset.from_tensor_slices((np.zeros((5, 4, 4, 3), "float32"), [0] * 5))
    >>> training = make_classification_batches(pairs, 2, 2, shuffle_seed=0, augmentation="flip")
    >>> [tuple(labels.shape) for _, labels in training]  # the partial batch is dropped
    [(2, 2), (2, 2)]
    """
    check_positive_int("batch_size", batch_size)
    check_positive_int("num_classes", num_classes)
    training = shuffle_seed is not None
    if training:
        buffer = image_shuffle_buffer(dataset, batch_size, SHUFFLE_BUFFER)
        dataset = dataset.shuffle(buffer, seed=shuffle_seed, reshuffle_each_iteration=True)
    dataset = dataset.batch(batch_size, drop_remainder=training)
    if training:
        dataset = augment_batches(dataset, augmentation, seed=shuffle_seed)
    dataset = dataset.map(lambda images, labels: (images, tf.one_hot(labels, num_classes)))
    return dataset.prefetch(tf.data.AUTOTUNE)
