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


def scaled_dot_product_attention(query, key, value, mask=None, is_causal=False, scale=None):
    """softmax(q k^T * scale) v with heads on axis 2; float64.

    query (B, Tq, H, D), key (B, Tk, H, D), value (B, Tk, H, Dv),
    mask broadcastable to (B, H, Tq, Tk).
    """
    query, key, value = (np.asarray(t, np.float64) for t in (query, key, value))
    if scale is None:
        scale = 1.0 / np.sqrt(query.shape[-1])
    batch, query_length, heads, _ = query.shape
    key_length = key.shape[1]
    logits = np.einsum("bqhd,bkhd->bhqk", query, key) * scale
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
