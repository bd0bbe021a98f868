"""Cross-entropy over the real tokens of padded target sequences (translation, captions)."""

import keras
from keras import ops

from keras_attention.losses.replica_share import replica_share


def check_ignore_label(ignore_label):
    """Raise a ValueError unless `ignore_label` is an int label id."""
    if isinstance(ignore_label, bool) or not isinstance(ignore_label, int):
        raise ValueError(
            f"`ignore_label` must be an integer label id. Received: ignore_label={ignore_label!r}"
        )


@keras.saving.register_keras_serializable(package="keras_attention")
def masked_sparse_categorical_crossentropy(y_true, y_pred, ignore_label=0, from_logits=True):
    """Mean cross-entropy over the tokens whose label is not `ignore_label`.

    `sum_t mask_t * -log p(y_t) / sum_t mask_t` over the whole batch, with
    `mask_t = (y_t != ignore_label)`: every real token weighs the same,
    whatever the length of its sentence, and padding weighs nothing. A batch
    with no real token gives 0. Pass it to `model.compile(loss=...)`.

    Args:
        y_true: integer labels `(B, T)`; `ignore_label` marks padding.
        y_pred: logits (or probabilities) `(B, T, V)`.
        ignore_label: the label id to ignore (padding).
        from_logits: whether `y_pred` holds logits rather than probabilities.

    Returns:
        A scalar float32 loss. Under a `tf.distribute` strategy with several
        replicas it is this replica's share (the mean over its tokens divided
        by the replicas), as keras scales its own losses.

    Example:

    >>> import numpy as np
    >>> logits = np.log(np.array([[[0.5, 0.5], [0.9, 0.1]]], "float32"))
    >>> float(masked_sparse_categorical_crossentropy(np.array([[1, 0]]), logits))  # -log 0.5
    0.6931...
    """
    check_ignore_label(ignore_label)
    y_true = ops.convert_to_tensor(y_true)
    y_pred = ops.cast(ops.convert_to_tensor(y_pred), "float32")
    if len(y_true.shape) + 1 != len(y_pred.shape):
        raise ValueError(
            "`y_pred` must have one more axis (the classes) than `y_true`. Received: "
            f"y_true.shape={tuple(y_true.shape)}, y_pred.shape={tuple(y_pred.shape)}"
        )
    mask = ops.cast(ops.not_equal(y_true, ignore_label), "float32")  # (B, T)
    # The ignored labels may lie outside the classes; any valid id does there.
    labels = ops.where(ops.not_equal(y_true, ignore_label), y_true, ops.zeros_like(y_true))
    losses = keras.losses.sparse_categorical_crossentropy(
        labels, y_pred, from_logits=from_logits
    )  # (B, T)
    mean = ops.sum(losses * mask) / ops.maximum(ops.sum(mask), 1.0)
    return replica_share(mean)  # keras sums the replicas' losses and gradients
