"""The Swin Transformer's window attention, block and patch merging in NumPy, for tests.

Written from the paper's formulas (Liu et al. 2021, section 3), one window
and one token at a time, without the layers' reshapes.
"""

import math

import numpy as np

# The exact GELU needs erf; math has it, NumPy does not.
_erf = np.vectorize(math.erf, otypes=[float])


def layer_norm(x, gamma, beta, epsilon):
    mean = x.mean(-1, keepdims=True)
    variance = x.var(-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + epsilon) * gamma + beta


def gelu(x):
    return 0.5 * x * (1.0 + _erf(x / np.sqrt(2.0)))


def bias_table_row(query, key, window):
    """Row of the (2M-1)^2 table for window-local tokens `query`, `key` (row, col)."""
    dy = query[0] - key[0] + window - 1
    dx = query[1] - key[1] + window - 1
    return dy * (2 * window - 1) + dx


def window_attention(x, weights, window, num_heads, visible=None):
    """W-MSA on a (B, H, W, C) map whose sides are multiples of `window`.

    weights: dict with qkv_kernel (C, 3C), qkv_bias (3C,), table ((2M-1)^2, h),
    out_kernel (C, C), out_bias (C,). visible(window_index, i, j) -> bool.
    Returns outputs (B, H, W, C) and weights (B, windows, h, M^2, M^2).
    """
    batch, height, width, channels = x.shape
    head_dim = channels // num_heads
    out = np.zeros_like(x)
    cells = [(r, c) for r in range(window) for c in range(window)]  # row-major in a window
    all_weights = []
    for row0 in range(0, height, window):
        for col0 in range(0, width, window):
            index = len(all_weights)
            tokens = np.stack([x[:, row0 + r, col0 + c] for r, c in cells], 1)  # (B, M^2, C)
            qkv = tokens @ weights["qkv_kernel"] + weights["qkv_bias"]
            q, k, v = np.split(qkv, 3, axis=-1)
            window_weights = np.zeros((batch, num_heads, len(cells), len(cells)))
            heads_out = []
            for h in range(num_heads):
                part = slice(h * head_dim, (h + 1) * head_dim)
                scores = q[..., part] @ np.swapaxes(k[..., part], 1, 2) / np.sqrt(head_dim)
                for i, query in enumerate(cells):
                    for j, key in enumerate(cells):
                        scores[:, i, j] += weights["table"][bias_table_row(query, key, window), h]
                        if visible is not None and not visible(index, i, j):
                            scores[:, i, j] = -np.inf
                # A padding query may see no key at all: its row stays 0.
                seen = np.isfinite(scores).any(-1, keepdims=True)
                scores = np.where(
                    seen, scores - np.where(seen, scores, 0).max(-1, keepdims=True), 0
                )
                probabilities = np.where(seen, np.exp(scores), 0.0)
                probabilities /= np.maximum(probabilities.sum(-1, keepdims=True), 1e-30)
                window_weights[:, h] = probabilities
                heads_out.append(probabilities @ v[..., part])
            attended = np.concatenate(heads_out, -1) @ weights["out_kernel"] + weights["out_bias"]
            for t, (r, c) in enumerate(cells):
                out[:, row0 + r, col0 + c] = attended[:, t]
            all_weights.append(window_weights)
    return out, np.stack(all_weights, 1)


def same_image_part(height, width, window, shift):
    """visible(window_index, i, j) for the rolled, padded map, from first principles.

    Two tokens of a shifted window are neighbours in the image when the roll
    did not wrap one of them around: their offset on the rolled map equals
    their offset on the padded map. Keys in the padding are never visible.
    """
    padded = (-(-height // window) * window, -(-width // window) * window)
    windows_per_row = padded[1] // window

    def original(window_index, token):
        # Rolled-map position -> position on the padded, unrolled map.
        row = (window_index // windows_per_row) * window + token // window
        col = (window_index % windows_per_row) * window + token % window
        return (row + shift) % padded[0], (col + shift) % padded[1], row, col

    def visible(window_index, i, j):
        qr, qc, qr_rolled, qc_rolled = original(window_index, i)
        kr, kc, kr_rolled, kc_rolled = original(window_index, j)
        if kr >= height or kc >= width:
            return False
        return (qr - kr, qc - kc) == (qr_rolled - kr_rolled, qc_rolled - kc_rolled)

    return visible


def swin_block(x, weights, window, shift, num_heads, epsilon):
    """LN -> pad -> roll -> masked W-MSA -> roll back -> crop -> residual; LN -> MLP -> residual."""
    _, height, width, _ = x.shape
    if min(height, width) <= window:
        window, shift = min(height, width), 0
    padded = (-(-height // window) * window, -(-width // window) * window)
    h = layer_norm(x, weights["norm1_gamma"], weights["norm1_beta"], epsilon)
    h = np.pad(h, ((0, 0), (0, padded[0] - height), (0, padded[1] - width), (0, 0)))
    h = np.roll(h, (-shift, -shift), axis=(1, 2))
    visible = same_image_part(height, width, window, shift)
    h, attention = window_attention(h, weights, window, num_heads, visible)
    h = np.roll(h, (shift, shift), axis=(1, 2))[:, :height, :width]
    x = x + h
    y = layer_norm(x, weights["norm2_gamma"], weights["norm2_beta"], epsilon)
    y = gelu(y @ weights["fc1_kernel"] + weights["fc1_bias"]) @ weights["fc2_kernel"]
    return x + y + weights["fc2_bias"], attention


def patch_merging(x, gamma, beta, kernel, epsilon):
    """(B, H, W, C) -> (B, ceil(H/2), ceil(W/2), 2C): [x(2i,2j), x(2i+1,2j), x(2i,2j+1), x(2i+1,2j+1)]."""
    batch, height, width, channels = x.shape
    x = np.pad(x, ((0, 0), (0, height % 2), (0, width % 2), (0, 0)))
    rows, cols = x.shape[1] // 2, x.shape[2] // 2
    merged = np.zeros((batch, rows, cols, 4 * channels))
    for i in range(rows):
        for j in range(cols):
            merged[:, i, j] = np.concatenate(
                [
                    x[:, 2 * i, 2 * j],
                    x[:, 2 * i + 1, 2 * j],
                    x[:, 2 * i, 2 * j + 1],
                    x[:, 2 * i + 1, 2 * j + 1],
                ],
                -1,
            )
    return layer_norm(merged, gamma, beta, epsilon) @ kernel
