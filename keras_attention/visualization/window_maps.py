"""Window attention put back on the image: where a Swin Transformer's tokens attend.

A Swin block's attention is one `(M^2, M^2)` matrix per window (and head),
over a map that may be padded and cyclically shifted. These functions undo
both with the block's token positions (`window_layouts` of
`keras_attention.models.SwinTransformer`), NumPy only, so the maps can be
drawn with `plot_rollout` or explored with `write_vit_explorer`.
"""

import numpy as np


def _check_layouts(attention_maps, window_layouts):
    if len(attention_maps) != len(window_layouts) or not attention_maps:
        raise ValueError(
            "`attention_maps` and `window_layouts` must give one entry per block each. "
            f"Received: {len(attention_maps)} attention maps, {len(window_layouts)} layouts"
        )
    for weights, (_, positions) in zip(attention_maps, window_layouts):
        weights = np.asarray(weights)
        if weights.ndim != 5 or weights.shape[1] != len(positions):
            raise ValueError(
                "`attention_maps` must hold (batch, windows, heads, M^2, M^2) arrays whose "
                "windows match the layout's. Received: shape "
                f"{weights.shape} for {len(positions)} windows"
            )


def window_attention_matrices(weights, positions, num_tokens):
    """One block's window attention as full `(T, T)` matrices over the unshifted map.

    Args:
        weights: `(B, windows, heads, M^2, M^2)` attention weights.
        positions: `(windows, M^2)` map index of each window token, -1 for
            padding (`SwinTransformerBlock.window_token_positions()`).
        num_tokens: `T`, the map's rows times columns.

    Returns:
        float32 `(B, heads, T, T)`: entry `[b, h, i, j]` is the weight of
        query token `i` on key token `j` (row-major map indices), 0 where
        they do not share a window.

    Example:

    >>> import numpy as np
    >>> from keras_attention.visualization.window_maps import window_attention_matrices
    >>> weights = np.full((1, 2, 1, 2, 2), 0.5, "float32")  # 2 windows of 2 tokens
    >>> window_attention_matrices(weights, np.array([[0, 2], [1, 3]]), 4)[0, 0].tolist()
    [[0.5, 0.0, 0.5, 0.0], [0.0, 0.5, 0.0, 0.5], [0.5, 0.0, 0.5, 0.0], [0.0, 0.5, 0.0, 0.5]]
    """
    weights = np.asarray(weights, "float32")
    positions = np.asarray(positions)
    batch, _, heads = weights.shape[:3]
    full = np.zeros((batch, heads, num_tokens, num_tokens), "float32")
    for window, tokens in enumerate(positions):
        real = np.flatnonzero(tokens >= 0)
        rows, cols = np.ix_(tokens[real], tokens[real])
        full[:, :, rows, cols] = weights[:, window][:, :, real][:, :, :, real]
    return full


def window_attention_map(attention_maps, window_layouts):
    """Per image, the mean attention each first-stage token receives, on the first map.

    For every block working on the first (largest) map, the attention a
    key token receives is averaged over heads and over the queries of its
    window, and put back where the token lies (shifted windows unshifted,
    padding dropped); the blocks are then averaged. High values mark the
    patches the windows look at most.

    Args:
        attention_maps: one `(B, windows, heads, M^2, M^2)` array per block
            (`model.attention_maps(images)`).
        window_layouts: one `(map_size, positions)` per block
            (`model.window_layouts`).

    Returns:
        float32 `(B, rows, cols)` over the first map, to draw with
        `plot_rollout(image, maps[b])`.

    Example:

    >>> import numpy as np
    >>> from keras_attention.visualization.window_maps import window_attention_map
    >>> weights = np.zeros((1, 1, 1, 4, 4), "float32")
    >>> weights[..., 3] = 1.0  # every query looks at token 3
    >>> window_attention_map([weights], [((2, 2), np.array([[0, 1, 2, 3]]))])[0].tolist()
    [[0.0, 0.0], [0.0, 1.0]]
    """
    _check_layouts(attention_maps, window_layouts)
    first_size = tuple(window_layouts[0][0])
    total, blocks = 0.0, 0
    for weights, (map_size, positions) in zip(attention_maps, window_layouts):
        if tuple(map_size) != first_size:
            continue
        positions = np.asarray(positions)
        received = np.asarray(weights, "float32").mean(axis=(2, 3))  # (B, windows, M^2)
        flat = np.zeros((received.shape[0], first_size[0] * first_size[1]), "float32")
        real = positions >= 0
        flat[:, positions[real]] = received[:, real]
        total, blocks = total + flat, blocks + 1
    return (total / blocks).reshape(-1, *first_size)
