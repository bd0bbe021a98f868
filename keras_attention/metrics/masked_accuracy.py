"""Accuracy over the real tokens of padded target sequences."""

import keras
from keras import ops

from keras_attention.losses.masked_cross_entropy import check_ignore_label


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
        check_ignore_label(ignore_label)
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
