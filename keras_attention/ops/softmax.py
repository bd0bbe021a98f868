"""Masked softmax in float32 that gives zeros, not NaN, for fully masked rows."""

from keras import ops

from keras_attention.ops.masks import boolean_mask

# Finite stand-in for -inf: large enough that exp() underflows to 0 in float32,
# finite so that `x - max(x)` never computes `-inf - (-inf)`.
MASKED_LOGIT = -1e30


def masked_softmax(logits, mask=None, axis=-1):
    """Softmax over `axis` where only positions with `mask == True` take part.

    The softmax always runs in float32, whatever the dtype of `logits`, and
    the result is float32. A row whose every position is masked comes out as
    all zeros (and has zero, finite gradients) instead of NaN or a uniform
    distribution over padding.

    Args:
        logits: scores, any float dtype; a -inf logit takes no part, as a
            masked position (a row of them gives zeros).
        mask: optional boolean (or integer, nonzero = keep) tensor
            broadcastable to `logits`; True = keep. A float mask is refused.
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
    # A -inf logit is a position that may not take part, as a -inf attention bias is.
    # (`!=`, not `>`: a NaN logit stays in, so that it still shows as NaN.)
    taking_part = ops.not_equal(logits, float("-inf"))
    mask = taking_part if mask is None else ops.logical_and(boolean_mask(mask), taking_part)
    weights, nonempty_rows = softmax_with_empty_rows(logits, mask, axis)
    return zero_empty_rows(weights, nonempty_rows)


def softmax_with_empty_rows(logits, mask=None, axis=-1):
    """float32 masked softmax that leaves fully masked rows uniform, and says which they are.

    Hidden logits become `MASKED_LOGIT`, whose exponential underflows to 0
    next to any real logit, so one fused softmax serves masked and unmasked
    rows alike. A row with nothing visible comes out uniform instead; the
    returned `nonempty_rows` (the mask reduced over `axis`, kept as size 1)
    is False there, so the caller can zero those rows, possibly on a smaller
    tensor than the weights (attention zeroes its output rather than the
    (B, H, Tq, Tk) weights).

    Args:
        logits: scores, any float dtype.
        mask: optional boolean tensor broadcastable to `logits`; True = keep.
        axis: the axis to normalise over.

    Returns:
        (weights, nonempty_rows): float32 weights of the shape of `logits`,
        and a boolean tensor, or None when `mask` is None.

    Example:

    >>> import numpy as np
    >>> weights, nonempty = softmax_with_empty_rows(
    ...     np.zeros((2, 2)), mask=np.array([[1, 0], [0, 0]], bool))
    >>> np.asarray(weights).tolist(), np.asarray(nonempty).tolist()
    ([[1.0, 0.0], [0.5, 0.5]], [[True], [False]])
    """
    logits = ops.cast(logits, "float32")
    if mask is None:
        return _softmax(logits, axis), None
    mask = boolean_mask(mask)  # a float (additive) mask is refused, not read as 0/1
    logits = ops.where(mask, logits, MASKED_LOGIT)
    return _softmax(logits, axis), ops.any(mask, axis=axis, keepdims=True)


def _softmax(logits, axis):
    """`ops.softmax`, without its warning when `axis` has size 1.

    Keras warns that a softmax over one entry is always 1 ("did you mean
    sigmoid?"); in attention that is what one key (a single-token sequence,
    a step over one cached position) means, so it is computed here as
    exp(x - max) / sum with one entry: 1, NaN for a NaN or infinite logit,
    and a zero gradient, as `ops.softmax` gives.
    """
    if logits.shape[axis] == 1:
        return ops.exp(logits - logits)
    return ops.softmax(logits, axis=axis)


def zero_empty_rows(tensor, nonempty_rows):
    """`tensor` with the rows where `nonempty_rows` is False set to 0 (None: unchanged)."""
    if nonempty_rows is None:
        return tensor
    return tensor * ops.cast(nonempty_rows, tensor.dtype)
