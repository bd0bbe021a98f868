"""NumPy reference implementations of the attention formulas, for tests."""

import numpy as np


def softmax_with_mask(logits, mask):
    """Softmax over the last axis; rows with no visible entry are all zero."""
    logits = np.where(mask, logits, -np.inf)
    row_max = np.max(logits, axis=-1, keepdims=True)
    row_max = np.where(np.isfinite(row_max), row_max, 0.0)
    exponentials = np.where(mask, np.exp(logits - row_max), 0.0)
    total = exponentials.sum(axis=-1, keepdims=True)
    return np.divide(exponentials, total, out=np.zeros_like(exponentials), where=total > 0)


def _scores_rank(array):
    """A rank-2 (Tq, Tk) or rank-3 (B, Tq, Tk) array as rank 4 (B, H, Tq, Tk)."""
    if array.ndim == 2:
        return array[None, None]
    if array.ndim == 3:
        return array[:, None]
    return array


def scaled_dot_product_attention(
    query, key, value, mask=None, is_causal=False, scale=None, bias=None
):
    """softmax(q k^T * scale + bias) v with heads on axis 2; float64.

    query (B, Tq, H, D), key (B, Tk, H, D), value (B, Tk, H, Dv),
    mask and bias broadcastable to (B, H, Tq, Tk) (rank 2: (Tq, Tk), rank 3: (B, Tq, Tk)).
    """
    query, key, value = (np.asarray(t, np.float64) for t in (query, key, value))
    if scale is None:
        scale = 1.0 / np.sqrt(query.shape[-1])
    batch, query_length, heads, _ = query.shape
    key_length = key.shape[1]
    logits = np.einsum("bqhd,bkhd->bhqk", query, key) * scale
    if bias is not None:
        logits = logits + _scores_rank(np.asarray(bias, np.float64))
    full_mask = np.ones((batch, heads, query_length, key_length), bool)
    if mask is not None:
        mask = np.asarray(mask, bool)
        if mask.ndim == 2:
            mask = mask[None, None]
        elif mask.ndim == 3:
            mask = mask[:, None]
        full_mask &= mask
    if is_causal:
        full_mask &= np.tril(np.ones((query_length, key_length), bool))
    weights = softmax_with_mask(logits, full_mask)
    return np.einsum("bhqk,bkhd->bqhd", weights, value), weights


def sliding_window_band(query_length, key_length, window, causal):
    """(Tq, Tk) boolean band: |p - k| < window, and k <= p when causal."""
    distance = np.arange(query_length)[:, None] - np.arange(key_length)[None, :]
    band = np.abs(distance) < window
    return band & (distance >= 0) if causal else band


def attention_scores_gradient(
    query, key, value, upstream, mask=None, is_causal=False, scale=None, bias=None
):
    """d sum(output * upstream) / d scores, (B, H, Tq, Tk) float64, the scores being q k^T * scale + bias.

    With W = softmax(scores) and dW = upstream v^T, d scores = W * (dW - sum(dW * W) over keys);
    this is also the gradient of the bias before summing over the axes it broadcasts along.
    """
    _, weights = scaled_dot_product_attention(query, key, value, mask, is_causal, scale, bias)
    d_weights = np.einsum(
        "bqhd,bkhd->bhqk", np.asarray(upstream, np.float64), np.asarray(value, np.float64)
    )
    return weights * (d_weights - np.sum(d_weights * weights, axis=-1, keepdims=True))
