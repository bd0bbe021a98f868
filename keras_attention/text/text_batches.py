"""Text handed to a vocabulary learner: a list of strings or a tf.data.Dataset, as batches."""

import numpy as np
import tensorflow as tf

# Strings counted at once; batching only speeds up counting.
TEXT_BATCH_SIZE = 1024


def text_batches(texts, batch_size=TEXT_BATCH_SIZE):
    """A `tf.data.Dataset` of `(B,)` string batches from a list of strings or a dataset of strings.

    Args:
        texts: a non-empty list (tuple, array) of strings, or a
            `tf.data.Dataset` of strings (scalars, or batches kept as they are).
        batch_size: strings per batch for lists and datasets of scalars.

    Returns:
        `tf.data.Dataset` of `tf.string` tensors `(B,)`.

    Example:

    >>> from keras_attention.text.text_batches import text_batches
    >>> [batch.shape.as_list() for batch in text_batches(["a", "b", "c"], batch_size=2)]
    [[2], [1]]
    """
    if isinstance(texts, tf.data.Dataset):
        spec = texts.element_spec
        if not isinstance(spec, tf.TensorSpec) or spec.dtype != tf.string:
            raise ValueError(
                "`texts` must be a tf.data.Dataset of strings. "
                f"Received: texts with element_spec={spec}"
            )
        return texts.batch(batch_size) if spec.shape.rank == 0 else texts
    if isinstance(texts, str) or not isinstance(texts, (list, tuple, np.ndarray)) or not len(texts):
        raise ValueError(
            "`texts` must be a non-empty list of strings or a tf.data.Dataset of strings. "
            f"Received: texts={texts!r:.80}"
        )
    strings = tf.constant(list(texts), dtype=tf.string)
    return tf.data.Dataset.from_tensor_slices(strings).batch(batch_size)
