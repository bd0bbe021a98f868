"""NumPy forward passes of attention blocks from their weights, for tests."""

import numpy as np


def layer_norm(x, gamma, beta, epsilon):
    mean = x.mean(-1, keepdims=True)
    variance = x.var(-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + epsilon) * gamma + beta


def softmax(logits, mask):
    logits = np.where(mask, logits, -np.inf)
    row_max = np.max(logits, -1, keepdims=True)
    row_max = np.where(np.isfinite(row_max), row_max, 0.0)
    e = np.where(mask, np.exp(logits - row_max), 0.0)
    total = e.sum(-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def multi_head_attention(query, value, weights, mask=None, bias=None):
    """keras MultiHeadAttention weights: [Wq, bq, Wk, bk, Wv, bv, Wo, bo].

    Wq (D, H, K), bq (H, K); Wo (H, Kv, Dout). mask and bias (added to the
    scaled scores) broadcastable to (B, H, T, S).
    Returns output (B, T, Dout) and weights (B, H, T, S).
    """
    wq, bq, wk, bk, wv, bv, wo, bo = weights
    q = np.einsum("btd,dhk->bthk", query, wq) + bq
    k = np.einsum("bsd,dhk->bshk", value, wk) + bk
    v = np.einsum("bsd,dhk->bshk", value, wv) + bv
    logits = np.einsum("bthk,bshk->bhts", q, k) / np.sqrt(q.shape[-1])
    logits = logits if bias is None else logits + bias
    full_mask = np.ones(logits.shape, bool) if mask is None else np.broadcast_to(mask, logits.shape)
    attention = softmax(logits, full_mask)
    context = np.einsum("bhts,bshk->bthk", attention, v)
    return np.einsum("bthk,hkd->btd", context, wo) + bo, attention


def relu(x):
    return np.maximum(x, 0.0)


def encoder_block(x, weights, mask=None, norm_first=False, epsilon=1e-5, bias=None):
    """Post- or pre-norm encoder block; weights in TransformerEncoderBlock order.

    [8 attention weights, ln1 gamma, ln1 beta, ln2 gamma, ln2 beta, W1, b1, W2, b2]
    """
    attention_weights = weights[:8]
    g1, b1, g2, b2, w_in, b_in, w_out, b_out = weights[8:]
    residual = x
    h = layer_norm(x, g1, b1, epsilon) if norm_first else x
    h, scores = multi_head_attention(h, h, attention_weights, mask, bias)
    x = residual + h
    if not norm_first:
        x = layer_norm(x, g1, b1, epsilon)
    residual = x
    h = layer_norm(x, g2, b2, epsilon) if norm_first else x
    h = relu(h @ w_in + b_in) @ w_out + b_out
    x = residual + h
    if not norm_first:
        x = layer_norm(x, g2, b2, epsilon)
    return x, scores
