"""Masked softmax in float32 that gives zeros, not NaN, for fully masked rows."""

from keras import ops

# Finite stand-in for -inf: large enough that exp() underflows to 0 in float32,
# finite so that `x - max(x)` never computes `-inf - (-inf)`.
_MASKED_LOGIT = -1e30


def masked_softmax(logits, mask=None, axis=-1):
    """Softmax over `axis` where only positions with `mask == True` take part.

    The softmax always runs in float32, whatever the dtype of `logits`, and
    the result is float32. A row whose every position is masked comes out as
    all zeros (and has zero, finite gradients) instead of NaN or a uniform
    distribution over padding.

    Args:
        logits: scores, any float dtype.
        mask: optional boolean tensor broadcastable to `logits`; True = keep.
        axis: the axis to normalise over.

    Returns:
        float32 tensor of the shape of `logits`.

    Example:

    >>> import numpy as np
    >>> import keras_attention as ka
    >>> w = ka.ops.masked_softmax(np.zeros((2, 3)), mask=np.array([[1, 1, 0], [0, 0, 0]], bool))
    >>> np.round(np.asarray(w), 2).tolist()
    [[0.5, 0.5, 0.0], [0.0, 0.0, 0.0]]
    """
    logits = ops.cast(logits, "float32")
    if mask is None:
        return ops.softmax(logits, axis=axis)
    mask = ops.cast(mask, "bool")
    logits = ops.where(mask, logits, _MASKED_LOGIT)
    row_max = ops.stop_gradient(ops.max(logits, axis=axis, keepdims=True))
    exponentials = ops.where(mask, ops.exp(logits - row_max), 0.0)
    total = ops.sum(exponentials, axis=axis, keepdims=True)
    # Fully masked rows have total == 0: divide by 1 instead so they stay 0.
    return exponentials / ops.where(total > 0.0, total, 1.0)
