"""The doubly stochastic attention penalty of Show, Attend and Tell.

Xu et al., "Show, Attend and Tell" (https://arxiv.org/abs/1502.03044),
section 4.2.1, eq. 14: at every step the attention weights sum to 1 over the
image positions; the penalty asks them to also sum to about 1 over the caption
steps, `sum_i (1 - sum_t a_{t,i})^2`, so that every part of the image gets
looked at over the course of the caption. The captioning cross-entropy is the
translation one (`keras_attention.losses.masked_sparse_categorical_crossentropy`).
"""

import keras
from keras import ops


def _check_strength(strength):
    if isinstance(strength, bool) or not isinstance(strength, (int, float)) or strength < 0:
        raise ValueError(f"`strength` must be a number >= 0. Received: strength={strength!r}")


def doubly_stochastic_penalty(alignments, step_mask=None):
    """`sum_i (1 - sum_t a_{t,i})^2` per caption, over its real steps only.

    Args:
        alignments: attention weights `(B, T, H, W)` over an image grid, or
            `(B, T, S)` over a sequence of positions.
        step_mask: optional bool `(B, T)`, True at the caption's real
            (non-padding) steps; padding steps add nothing to `sum_t`.

    Returns:
        float32 `(B,)`, the penalty of each caption.

    Example:

    >>> import numpy as np
    >>> from keras_attention.losses.doubly_stochastic import doubly_stochastic_penalty
    >>> alignments = np.array([[[1.0, 0.0], [1.0, 0.0], [0.5, 0.5]]])  # (1, 3, 2)
    >>> np.asarray(doubly_stochastic_penalty(alignments)).tolist()  # (1 - 2.5)^2 + (1 - 0.5)^2
    [2.5]
    >>> mask = np.array([[True, True, False]])
    >>> np.asarray(doubly_stochastic_penalty(alignments, mask)).tolist()  # (1 - 2)^2 + 1^2
    [2.0]
    """
    alignments = ops.cast(ops.convert_to_tensor(alignments), "float32")
    if len(alignments.shape) not in (3, 4):
        raise ValueError(
            "`alignments` must be (batch, steps, height, width) or (batch, steps, positions). "
            f"Received: alignments.shape={tuple(alignments.shape)}"
        )
    if step_mask is not None:
        step_mask = ops.convert_to_tensor(step_mask)
        if len(step_mask.shape) != 2:
            raise ValueError(
                "`step_mask` must be (batch, steps). "
                f"Received: step_mask.shape={tuple(step_mask.shape)}"
            )
        weights = ops.cast(step_mask, "float32")
        trailing = (1,) * (len(alignments.shape) - 2)
        weights = ops.reshape(weights, tuple(ops.shape(weights)) + trailing)  # (B, T, 1[, 1])
        alignments = alignments * weights  # zeroes the padding steps
    totals = ops.sum(alignments, axis=1)  # (B, H, W) or (B, S): sum over steps
    squared = ops.square(1.0 - totals)
    return ops.sum(ops.reshape(squared, (ops.shape(squared)[0], -1)), axis=1)  # (B,)


@keras.saving.register_keras_serializable(package="keras_attention")
class DoublyStochasticAttentionRegularizer(keras.layers.Layer):
    """Adds the doubly stochastic attention penalty to the model's loss.

    Xu et al., "Show, Attend and Tell" (https://arxiv.org/abs/1502.03044),
    eq. 14: `loss = -log p(y | x) + strength * sum_i (1 - sum_t a_{t,i})^2`.
    The paper's `-log p(y | x)` is summed over a caption's words, whereas a
    Keras captioner's cross-entropy is a mean over the real tokens of the
    batch; so the penalty summed over the batch's captions is divided by the
    batch's number of real tokens, which keeps the paper's balance between
    the two terms.

    The layer returns its first input unchanged: placed on the path from the
    alignments to the model's output, the penalty runs wherever the model
    runs (a functional model runs only the layers its outputs depend on).
    It is added with `add_loss`, so `model.fit` minimises it and
    `model.losses` shows it.

    Args:
        strength: the `lambda` of eq. 14, >= 0.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        inputs: any tensor, returned as it is (e.g. the logits).
        alignments: attention weights `(B, T, H, W)` or `(B, T, S)`.
        step_mask: optional bool `(B, T)`, True at real caption steps.

    Returns:
        `inputs`.

    Example:

    >>> import numpy as np
    >>> from keras_attention.losses.doubly_stochastic import (
    ...     DoublyStochasticAttentionRegularizer)
    >>> regularizer = DoublyStochasticAttentionRegularizer(strength=0.5)
    >>> logits = np.zeros((1, 2, 4), "float32")
    >>> alignments = np.full((1, 2, 2, 2), 0.25, "float32")  # every step uniform
    >>> _ = regularizer(logits, alignments)
    >>> [round(float(loss), 4) for loss in regularizer.losses]  # 0.5 * 4 * 0.5^2 / 2 steps
    [0.25]
    """

    def __init__(self, strength=1.0, **kwargs):
        super().__init__(**kwargs)
        _check_strength(strength)
        self.strength = strength
        self.supports_masking = True

    def call(self, inputs, alignments, step_mask=None):
        penalty = doubly_stochastic_penalty(alignments, step_mask)  # (B,)
        if step_mask is None:
            steps = ops.cast(ops.shape(alignments)[0] * ops.shape(alignments)[1], "float32")
        else:
            steps = ops.sum(ops.cast(step_mask, "float32"))
        self.add_loss(self.strength * ops.sum(penalty) / ops.maximum(steps, 1.0))
        return inputs

    def compute_output_shape(self, inputs_shape, alignments_shape, step_mask_shape=None):
        return inputs_shape

    def get_config(self):
        return {**super().get_config(), "strength": self.strength}
