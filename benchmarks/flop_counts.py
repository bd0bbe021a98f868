"""FLOPs counted from the formulas, for throughput as a fraction of a machine's rate.

Only matrix products count (a multiply-add is 2 FLOPs); softmax, norms and
other elementwise work are left out, as model FLOPs utilisation (MFU) usually
counts them.
"""


def vit_flops_per_image(image_size, patch_size, hidden_dim, num_layers, mlp_dim, num_classes):
    """Training FLOPs of one image through a ViT: 3 x the forward multiply-adds x 2.

    Counts the patch projection, the attention projections, the scores and
    weighted sums, the MLP and the head. The backward pass costs twice the
    forward one, hence the 3.

    Example:

    >>> round(vit_flops_per_image(224, 16, 768, 12, 3072, 1000) / 1e9, 1)  # ViT-B/16
    105.4
    """
    tokens = (image_size // patch_size) ** 2 + 1
    patch_inputs = patch_size * patch_size * 3
    per_layer = (
        4 * tokens * hidden_dim * hidden_dim  # q, k, v, output projections
        + 2 * tokens * tokens * hidden_dim  # scores and weighted sum
        + 2 * tokens * hidden_dim * mlp_dim  # MLP
    )
    forward = (tokens - 1) * patch_inputs * hidden_dim + num_layers * per_layer
    forward += hidden_dim * num_classes
    return 3 * 2 * forward


def attention_flops(batch, heads, query_length, key_length, head_dim, causal=False, backward=False):
    """FLOPs of one attention call: scores `Q K^T` and the weighted sum `P V`.

    Each is `2 * B * H * Tq * Tk * D`; a causal mask halves the pairs that
    matter (counted as half, as FlashAttention's papers do); the backward pass
    does 2.5x the forward products (dV, dP, dS->dQ, dK, and the recomputed
    scores are counted as FlashAttention-2 counts them).

    Example:

    >>> attention_flops(1, 1, 4, 4, 2)
    128
    """
    flops = 2 * 2 * batch * heads * query_length * key_length * head_dim
    if causal:
        flops //= 2
    if backward:
        flops = flops * 7 // 2  # forward (1) + backward (2.5)
    return flops


def banded_attention_flops(batch, heads, length, window, head_dim, backward=False):
    """FLOPs of causal attention where each query sees its last `window` keys (itself included).

    Example:

    >>> banded_attention_flops(1, 1, 4, 2, 1)  # 1 + 2 + 2 + 2 = 7 pairs, 4 FLOPs each
    28
    """
    pairs = sum(min(position + 1, window) for position in range(length))
    flops = 2 * 2 * batch * heads * pairs * head_dim
    return flops * 7 // 2 if backward else flops
