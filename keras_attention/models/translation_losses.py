"""Loss and accuracy over the real tokens of padded target sequences."""

import keras
from keras import ops


def _check_ignore_label(ignore_label):
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
        A scalar float32 loss.

    Example:

    >>> import numpy as np
    >>> logits = np.log(np.array([[[0.5, 0.5], [0.9, 0.1]]], "float32"))
    >>> float(masked_sparse_categorical_crossentropy(np.array([[1, 0]]), logits))  # -log 0.5
    0.6931...
    """
    _check_ignore_label(ignore_label)
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
    return ops.sum(losses * mask) / ops.maximum(ops.sum(mask), 1.0)


@keras.saving.register_keras_serializable(package="keras_attention")
class MaskedSparseCategoricalAccuracy(keras.metrics.Metric):
    """Fraction of real tokens (label != `ignore_label`) predicted right.

    Counts correct and real tokens over all batches it sees, so the result is
    the token accuracy of the whole epoch, not an average of batch ratios.

    Args:
        ignore_label: the label id to ignore (padding).
        name: name of the metric.
        dtype: dtype of the counters.

    Call arguments (`update_state`):
        y_true: integer labels `(B, T)`.
        y_pred: logits or probabilities `(B, T, V)`.
        sample_weight: optional weights `(B,)` (one per sentence) or `(B, T)`.

    Returns:
        `result()`: the accuracy, a scalar in [0, 1] (0 before any real token).

    Example:

    >>> import numpy as np
    >>> metric = MaskedSparseCategoricalAccuracy()
    >>> logits = np.array([[[0.0, 1.0], [1.0, 0.0], [1.0, 0.0]]], "float32")
    >>> metric.update_state(np.array([[1, 1, 0]]), logits)
    >>> float(metric.result())
    0.5
    """

    def __init__(self, ignore_label=0, name="masked_accuracy", dtype="float32"):
        super().__init__(name=name, dtype=dtype)
        _check_ignore_label(ignore_label)
        self.ignore_label = ignore_label
        self.correct = self.add_variable(
            shape=(), initializer="zeros", dtype=self.dtype, name="correct", aggregation="sum"
        )
        self.total = self.add_variable(
            shape=(), initializer="zeros", dtype=self.dtype, name="total", aggregation="sum"
        )

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = ops.convert_to_tensor(y_true)
        predicted = ops.argmax(y_pred, axis=-1)  # (B, T)
        weight = ops.cast(ops.not_equal(y_true, self.ignore_label), self.dtype)  # (B, T)
        if sample_weight is not None:
            sample_weight = ops.cast(sample_weight, self.dtype)
            for _ in range(len(weight.shape) - len(sample_weight.shape)):
                sample_weight = sample_weight[..., None]  # (B,) -> (B, 1)
            weight = weight * sample_weight
        hits = ops.cast(ops.equal(predicted, ops.cast(y_true, predicted.dtype)), self.dtype)
        self.correct.assign_add(ops.sum(hits * weight))
        self.total.assign_add(ops.sum(weight))

    def result(self):
        return self.correct / ops.maximum(self.total, 1e-12)

    def get_config(self):
        return {"ignore_label": self.ignore_label, "name": self.name, "dtype": self.dtype}
