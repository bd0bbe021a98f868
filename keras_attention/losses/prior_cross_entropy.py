"""The loss of a model that ignores its input: the entropy of the label frequencies."""

import numpy as np


def prior_cross_entropy(labels, ignore=None):
    """Cross-entropy of always predicting the training label frequencies.

    A model that has learned nothing from its input can still reach this loss
    by predicting how often each label (class, or token) occurs; a loss that
    stays at it means the inputs are not used. For captions and translations
    the labels are the target tokens (padding left out): this is the unigram
    loss. For classes it is the loss of the class prior, below the loss of
    uniform guessing when classes are unbalanced.

    Args:
        labels: integer labels of any shape: an array, a list, or an iterable
            of arrays (batches of a `tf.data` pipeline as NumPy arrays).
        ignore: a label to leave out, such as the padding id 0.

    Returns:
        float, the entropy in nats (what keras' cross-entropy losses report).

    Example:

    >>> from keras_attention.losses.prior_cross_entropy import prior_cross_entropy
    >>> round(prior_cross_entropy([[3, 3, 5, 0], [5, 5, 3, 0]], ignore=0), 4)  # ln 2
    0.6931
    """
    if isinstance(labels, np.ndarray) or np.isscalar(labels):
        batches = [labels]
    elif isinstance(labels, (list, tuple)) and all(np.isscalar(item) for item in labels):
        batches = [labels]
    else:
        batches = labels
    counts = {}
    for batch in batches:
        values = np.asarray(batch).reshape(-1)
        if values.size and not np.issubdtype(values.dtype, np.integer):
            raise ValueError(
                f"`labels` must hold integer labels. Received: labels with dtype={values.dtype}"
            )
        if ignore is not None:
            values = values[values != ignore]
        for value, count in zip(*np.unique(values, return_counts=True)):
            counts[int(value)] = counts.get(int(value), 0) + int(count)
    total = sum(counts.values())
    if total == 0:
        raise ValueError(
            f"`labels` must hold at least one label other than ignore={ignore!r}. "
            "Received: no such label"
        )
    frequencies = np.array(list(counts.values()), dtype="float64") / total
    return float(-np.sum(frequencies * np.log(frequencies)))
