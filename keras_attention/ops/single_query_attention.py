"""Attention from one query position, computed in the layout of the keys.

A decoding step attends from one new position over a whole key/value cache
`(B, S, H, D)`. The general kernels transpose keys and values to
`(B, H, S, D)` for their batched products and guard hidden non-finite
values in passes of their own; with one query the scores and the weighted
sum are multiply-and-reduce loops that read the cache once, as it lies.
"""

from keras import ops

from keras_attention.ops.softmax import softmax_with_empty_rows
from keras_attention.ops.softmax import zero_empty_rows


def single_query_attention(query, key, value, mask, scale, bias, return_weights):
    """softmax(q k^T * scale + bias) v for a query of length 1, as `dot_product_attention`.

    The contract is `dot_product_attention`'s: a hidden key or value never
    reaches the output, even NaN or inf; a query that may see a non-finite
    value gets NaN (its whole head); a query that may see no key gets output
    0 and weights 0. Scores and the weighted sum are computed in float32.

    Args:
        query: (B, 1, H, D).
        key: (B, S, H, D).
        value: (B, S, H, Dv).
        mask: None or a boolean (mB, mH, 1, S | 1) broadcastable to
            (B, H, 1, S), causality, windows and ruled-out biases merged in.
        scale: the factor of the scores.
        bias: None or a float (mB, mH, 1, S | 1) broadcastable to (B, H, 1, S).
        return_weights: also return the weights (B, H, 1, S).

    Returns:
        output (B, 1, H, Dv) in the dtype of `value`, and with
        `return_weights` the weights (B, H, 1, S) in that dtype.

    Example:

    >>> import numpy as np
    >>> q = np.random.rand(2, 1, 4, 8).astype("float32")
    >>> kv = np.random.rand(2, 6, 4, 8).astype("float32")
    >>> out = single_query_attention(q, kv, kv, None, 8**-0.5, None, False)
    >>> logits = np.einsum("bqhd,bkhd->bhqk", q, kv) * 8**-0.5
    >>> weights = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    >>> bool(np.allclose(out, np.einsum("bhqk,bkhd->bqhd", weights, kv), atol=1e-6))
    True
    """
    visible = None
    if mask is not None:
        # (mB, mH, 1, S) -> (mB, S, mH): the mask in the layout of the keys.
        visible = ops.transpose(mask[:, :, 0, :], (0, 2, 1))
        # A hidden key is zeroed so that a NaN in it reaches no gradient either.
        key = ops.where(visible[..., None], key, ops.zeros_like(key))
    query = ops.cast(query, "float32") * scale  # (B, 1, H, D)
    logits = ops.sum(query * ops.cast(key, "float32"), axis=-1)  # (B, S, H)
    if bias is not None:
        # (mB, mH, 1, S) -> (mB, S, mH)
        bias = ops.transpose(bias[:, :, 0, :], (0, 2, 1))
        logits = logits + ops.cast(bias, "float32")
    # (B, S, H) -> (B, H, 1, S): small, one number per key and head.
    logits = ops.expand_dims(ops.transpose(logits, (0, 2, 1)), 2)
    weights_mask = (
        None if visible is None else ops.expand_dims(ops.transpose(visible, (0, 2, 1)), 2)
    )
    weights, sees_any_key = softmax_with_empty_rows(logits, weights_mask)  # (B, H, 1, S)
    # (B, H, 1, S) -> (B, S, H, 1) against the values
    key_weights = ops.expand_dims(ops.transpose(weights[:, :, 0, :], (0, 2, 1)), -1)
    values = ops.cast(value, "float32")
    if visible is None:
        output = ops.sum(key_weights * values, axis=1, keepdims=True)  # (B, 1, H, Dv)
    else:
        # A hidden key's weight is exactly 0, but 0 * NaN is NaN: the sum runs
        # over finite values, and a visible non-finite one marks its head NaN.
        finite = ops.where(ops.isfinite(values), values, ops.zeros_like(values))
        output = ops.sum(key_weights * finite, axis=1, keepdims=True)  # (B, 1, H, Dv)
        # v * 0 is NaN exactly where v is not finite.
        marks = ops.where(visible[..., None], values * 0.0, ops.zeros_like(values))
        marks = ops.sum(ops.sum(marks, axis=1, keepdims=True), axis=-1, keepdims=True)
        output = ops.where(ops.isnan(marks), ops.full_like(output, float("nan")), output)
    if sees_any_key is not None:
        # (mB, mH, 1, 1) -> (mB, 1, mH, 1)
        output = output * ops.cast(ops.transpose(sees_any_key, (0, 2, 1, 3)), output.dtype)
    output = ops.cast(output, value.dtype)
    if not return_weights:
        return output
    return output, ops.cast(zero_empty_rows(weights, sees_any_key), value.dtype)
