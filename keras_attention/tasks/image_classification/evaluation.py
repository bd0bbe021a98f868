"""Judging an image classifier: its test predictions, and the loss of guessing by class frequency.

Example:

>>> import numpy as np, tensorflow as tf
>>> from keras_attention.tasks.image_classification.evaluation import class_prior_loss
>>> pairs = tf.data.Dataset.from_tensor_slices((np.zeros((4, 2, 2, 3)), [0, 1, 1, 0]))
>>> round(class_prior_loss(pairs), 4)  # two equally frequent classes: ln 2
0.6931
"""

import warnings

import numpy as np

from keras_attention.losses.prior_cross_entropy import prior_cross_entropy
from keras_attention.progress import ProgressBar
from keras_attention.validation import check_positive_int

# Training images whose labels give the class frequencies when no count is known.
PRIOR_SAMPLE = 4096


def evaluate_classifier(model, test_batches, num_images, num_test=None):
    """Test labels, predicted labels, and the first `num_images` test images, in one pass.

    Each test image is read and decoded once: the labels, predictions and
    first images come from the same pass over `test_batches`.

    Args:
        model: a classifier whose `predict_on_batch` gives `(B, classes)` scores.
        test_batches: batches of `(images, one-hot labels)`, in a fixed order.
        num_images: how many of the first test images to return.
        num_test: the test images, about, for the progress bar (None: unknown).

    Returns:
        `(labels, predictions, images)`: `(N,)` ints, `(N,)` ints and
        `(num_images, H, W, C)` images (fewer where the test set is smaller).
    """
    check_positive_int("num_images", num_images)
    labels, predictions, images = [], [], []
    with ProgressBar("classifying the test images", num_test, "images") as bar:
        for batch_images, one_hot in test_batches:
            scores = np.asarray(model.predict_on_batch(batch_images))  # (B, classes)
            predictions.append(np.argmax(scores, axis=-1))
            labels.append(np.argmax(one_hot, axis=-1))
            if sum(len(kept) for kept in images) < num_images:
                images.append(batch_images.numpy()[: num_images - sum(map(len, images))])
            bar.add(len(scores))
    if not labels:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0,))
    return np.concatenate(labels), np.concatenate(predictions), np.concatenate(images)


def images_classified(labels, listed=None, listed_per_class=None, class_names=()):
    """How many test images the accuracy is over, as words, said against the listed ones.

    Images that cannot be decoded are skipped where the pipeline meets them
    (nothing is decoded before training), so the test pass may see fewer
    images than the split lists. That is said after the count; a class whose
    every test image was lost is named in a warning, since the accuracy
    then says nothing about it.

    Args:
        labels: `(N,)` true labels of the images classified.
        listed: the test images the split lists (None: unknown).
        listed_per_class: the listed test images of each class, in label
            order (None: unknown).
        class_names: the classes' names, in label order.

    Returns:
        str, such as "8 images" or "7 of the 8 listed images (1 could not
        be decoded)".

    Example:

    >>> import numpy as np
    >>> from keras_attention.tasks.image_classification.evaluation import images_classified
    >>> images_classified(np.array([0, 1]), listed=2)
    '2 images'
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     images_classified(np.array([0]), 2, listed_per_class=[1, 1], class_names=["cat", "dog"])
    '1 of the 2 listed images (1 could not be decoded)'
    >>> str(caught[0].message)[:46]
    "no test image of class 'dog' could be decoded "
    """
    count = len(labels)
    if listed is None or count >= listed:
        return f"{count} images"
    if listed_per_class is not None:
        classified = np.bincount(np.asarray(labels, np.int64), minlength=len(listed_per_class))
        for label, (expected, seen) in enumerate(zip(listed_per_class, classified)):
            if expected and not seen:
                name = class_names[label] if label < len(class_names) else label
                warnings.warn(
                    f"no test image of class {name!r} could be decoded ({expected} listed): "
                    "the test accuracy says nothing about it; see skipped_images.txt in the "
                    "run's folder",
                    stacklevel=2,
                )
    return f"{count} of the {listed} listed images ({listed - count} could not be decoded)"


def class_prior_loss(train_split, class_counts=None, max_images=PRIOR_SAMPLE):
    """The loss of a model that ignores the image and predicts the class frequencies.

    Args:
        train_split: a `tf.data.Dataset` of unbatched `(image, label)` pairs.
        class_counts: the training images of each class, where the listing
            of the files gives them: nothing is read then.
        max_images: otherwise, the frequencies are those of the labels of
            the first `max_images` training images.

    Returns:
        float, in nats.

    Example:

    >>> from keras_attention.tasks.image_classification.evaluation import class_prior_loss
    >>> round(class_prior_loss(None, class_counts=[5, 5, 0]), 4)  # ln 2
    0.6931
    """
    if class_counts is not None:
        counts = np.asarray(class_counts, dtype="float64")
        frequencies = counts[counts > 0] / counts.sum()
        return float(-np.sum(frequencies * np.log(frequencies)))
    labels = train_split.take(max_images).map(lambda image, label: label).batch(1024)
    return prior_cross_entropy(list(labels.as_numpy_iterator()))
