"""Attention rollout: what a Vision Transformer's output attends to, through all its layers.

Abnar and Zuidema 2020, "Quantifying Attention Flow in Transformers",
https://arxiv.org/abs/2005.00928.
"""

import numpy as np

from keras_attention.visualization._labels import printable
from keras_attention.visualization._matplotlib import new_figure
from keras_attention.visualization._overlay import as_display_image
from keras_attention.visualization._overlay import check_columns
from keras_attention.visualization._overlay import draw_image
from keras_attention.visualization._overlay import panel_figure
from keras_attention.visualization.image_attention import draw_attention_map

HEAD_FUSIONS = ("mean", "max", "min")


def _as_layers(attention_maps):
    """A list of float arrays, one per layer, each (heads, N, N) or (B, heads, N, N)."""
    if isinstance(attention_maps, (list, tuple)):
        layers = [np.asarray(layer, dtype="float64") for layer in attention_maps]
    else:
        stacked = np.asarray(attention_maps, dtype="float64")
        if stacked.ndim not in (4, 5):
            raise ValueError(
                "Expected `attention_maps` to be a list of per-layer (heads, N, N) or "
                "(batch, heads, N, N) arrays, or one stacked (layers, heads, N, N) or "
                "(layers, batch, heads, N, N) array. "
                f"Received: attention_maps.shape={stacked.shape}"
            )
        layers = list(stacked)
    if not layers:
        raise ValueError(
            "Expected `attention_maps` to hold at least one layer. "
            f"Received: attention_maps={attention_maps!r}"
        )
    first = layers[0]
    for index, layer in enumerate(layers):
        if (
            layer.ndim not in (3, 4)
            or layer.shape[-1] != layer.shape[-2]
            or 0 in layer.shape
            or layer.ndim != first.ndim
            or layer.shape[-1] != first.shape[-1]
            or layer.shape[:-3] != first.shape[:-3]
        ):
            raise ValueError(
                "Expected every layer of `attention_maps` to have shape (heads, N, N) or "
                "(batch, heads, N, N), at least one head and token, and the same batch and "
                "N in every layer. "
                f"Received: attention_maps[0].shape={first.shape}, "
                f"attention_maps[{index}].shape={layer.shape}"
            )
        if not np.all(np.isfinite(layer)) or np.any(layer < 0.0):
            raise ValueError(
                "Expected `attention_maps` to hold finite, non-negative attention weights. "
                f"Received: attention_maps[{index}] with min={layer.min()}, max={layer.max()}"
            )
    return layers


def _discard_lowest(weights, discard_ratio):
    """Zeroes the lowest `discard_ratio` of each matrix's off-diagonal weights.

    Args:
        weights: (..., N, N) head-fused attention.
        discard_ratio: fraction of the N * (N - 1) off-diagonal entries to zero.

    Returns:
        A copy of `weights` with those entries set to 0; the diagonal (every
        token's attention to itself, the class token's included) is kept.
    """
    tokens = weights.shape[-1]
    count = int(discard_ratio * tokens * (tokens - 1))
    if count == 0:
        return weights
    flat = weights.reshape(-1, tokens * tokens)  # (M, N * N), one row per matrix
    off_diagonal = ~np.eye(tokens, dtype=bool).reshape(-1)  # (N * N,)
    # Diagonal entries rank last, so they are never among the lowest.
    ranking = np.where(off_diagonal, flat, np.inf)
    lowest = np.argsort(ranking, axis=-1, kind="stable")[:, :count]  # (M, count)
    kept = flat.copy()
    np.put_along_axis(kept, lowest, 0.0, axis=-1)
    return kept.reshape(weights.shape)  # (..., N, N)


def attention_rollout(attention_maps, head_fusion="mean", discard_ratio=0.0):
    """Attention rollout (Abnar and Zuidema 2020) through a stack of layers.

    For every layer the heads are fused into one (N, N) matrix W (mean, max
    or min over heads), optionally the lowest `discard_ratio` of its
    off-diagonal weights are zeroed (the diagonal, the class token's
    self-attention included, is never discarded), and the residual
    connection is accounted for as A = 0.5 * W + 0.5 * I with rows then
    renormalised to sum to 1. The rollout multiplies the layers together,
    last layer on the left: R = A_L @ ... @ A_1. Row i of R says how much
    token i at the output draws on each input token.

    Args:
        attention_maps: one attention array per layer, first layer first:
            a list of (heads, N, N) or (batch, heads, N, N) arrays (as
            attention layers return with `return_attention_scores=True`), or
            those stacked into one (layers, heads, N, N) or
            (layers, batch, heads, N, N) array.
        head_fusion: "mean", "max" or "min": how to merge the heads.
        discard_ratio: in [0, 1): fraction of the lowest off-diagonal weights
            of each fused matrix to set to 0 before adding the residual.

    Returns:
        float64 NumPy array: (N, N), or (batch, N, N) with batched maps; every
        row sums to 1.

    Example:

    >>> import numpy as np
    >>> from keras_attention.visualization.rollout import attention_rollout
    >>> uniform = np.full((2, 3, 3), 1 / 3)  # 2 heads, 3 tokens
    >>> rollout = attention_rollout([uniform, uniform])
    >>> rollout.shape
    (3, 3)
    >>> np.round(rollout.sum(axis=-1), 6).tolist()
    [1.0, 1.0, 1.0]
    """
    if head_fusion not in HEAD_FUSIONS:
        raise ValueError(
            f"Expected `head_fusion` to be one of {HEAD_FUSIONS}. "
            f"Received: head_fusion={head_fusion!r}"
        )
    if not isinstance(discard_ratio, (int, float, np.number)) or not 0.0 <= discard_ratio < 1.0:
        raise ValueError(
            "Expected `discard_ratio` to be a number in [0, 1). "
            f"Received: discard_ratio={discard_ratio!r}"
        )
    layers = _as_layers(attention_maps)
    fuse = {"mean": np.mean, "max": np.max, "min": np.min}[head_fusion]
    tokens = layers[0].shape[-1]
    identity = np.eye(tokens)
    rollout = np.broadcast_to(identity, layers[0].shape[:-3] + (tokens, tokens))  # ([B,] N, N)
    for layer in layers:
        weights = fuse(layer, axis=-3)  # ([B,] N, N)
        weights = _discard_lowest(weights, discard_ratio)
        # The residual connection carries half of each token through unchanged.
        mixed = 0.5 * weights + 0.5 * identity
        mixed = mixed / mixed.sum(axis=-1, keepdims=True)
        rollout = mixed @ rollout  # ([B,] N, N)
    return rollout


def _check_grid_size(grid_size):
    """(rows, columns) as two ints, or ValueError."""
    shape = tuple(grid_size) if hasattr(grid_size, "__len__") else (grid_size,)
    if len(shape) != 2 or not all(
        isinstance(size, (int, np.integer)) and size > 0 for size in shape
    ):
        raise ValueError(
            "Expected `grid_size` to be (rows, columns) of patches, two positive integers. "
            f"Received: grid_size={grid_size!r}"
        )
    return int(shape[0]), int(shape[1])


def _patch_maps(matrices, grid_size, has_class_token, argument):
    """Per-patch maps from (..., N, N) token-to-token matrices, as (..., gh, gw)."""
    grid_rows, grid_columns = _check_grid_size(grid_size)
    patches = grid_rows * grid_columns
    expected_tokens = patches + 1 if has_class_token else patches
    if matrices.shape[-1] != expected_tokens:
        token_count = "grid_size[0] * grid_size[1]"
        if has_class_token:
            token_count += " + 1 (class token)"
        raise ValueError(
            f"Expected `{argument}` to cover {token_count} = {expected_tokens} tokens. "
            f"Received: {argument}.shape={matrices.shape}, grid_size={grid_size!r}, "
            f"has_class_token={has_class_token}"
        )
    if has_class_token:
        flows = matrices[..., 0, 1:]  # (..., gh * gw): the class token's row, patches only
    else:
        # Without a class token the prediction pools every token: average their rows.
        flows = matrices.mean(axis=-2)  # (..., gh * gw)
    # Patches are numbered row by row, as patch embedding flattens the grid.
    return flows.reshape(flows.shape[:-1] + (grid_rows, grid_columns))  # (..., gh, gw)


def rollout_to_image_map(rollout, grid_size, has_class_token=True):
    """The rollout's attention to each image patch, laid out on the patch grid.

    With a class token (ViT's `[class]` embedding at position 0) the map is
    the class token's row of the rollout without its own entry; for models
    that average-pool all tokens instead, it is the mean of all rows.
    Patches are numbered row by row (top-left first), the order patch
    embeddings flatten the grid in.

    Args:
        rollout: (N, N) or (batch, N, N) output of `attention_rollout`.
        grid_size: (rows, columns) of the patch grid, e.g. (14, 14) for a
            224 x 224 image in 16 x 16 patches.
        has_class_token: whether token 0 is a class token.

    Returns:
        float64 NumPy array (rows, columns), or (batch, rows, columns).

    Example:

    >>> import numpy as np
    >>> from keras_attention.visualization.rollout import rollout_to_image_map
    >>> rollout = np.eye(5)
    >>> rollout[0] = [0.2, 0.1, 0.4, 0.2, 0.1]  # class token, then 4 patches
    >>> rollout_to_image_map(rollout, (2, 2)).tolist()
    [[0.1, 0.4], [0.2, 0.1]]
    """
    rollout = np.asarray(rollout, dtype="float64")
    if rollout.ndim not in (2, 3) or rollout.shape[-1] != rollout.shape[-2]:
        raise ValueError(
            "Expected `rollout` to have shape (N, N) or (batch, N, N). "
            f"Received: rollout.shape={rollout.shape}"
        )
    return _patch_maps(rollout, grid_size, has_class_token, "rollout")


def plot_rollout(image, rollout_map, title=None, map_title="attention rollout"):
    """Draws an image next to the image with its attention rollout laid over it.

    Args:
        image: (H, W, 3) pixels, uint8 or float in 0..255 (grayscale
            (H, W) and (H, W, 1) work too).
        rollout_map: (rows, columns) patch map from `rollout_to_image_map`;
            it is bilinearly upsampled to the image and coloured from 0 to
            its largest weight (the colour bar's range), so a nearly
            uniform map looks nearly uniform.
        title: optional title above the panels (for example the prediction).
        map_title: the overlay panel's title, for maps other than a rollout.

    Returns:
        A `matplotlib.figure.Figure` with two axes: the image and the overlay.

    Example:

    >>> import numpy as np
    >>> from keras_attention.visualization.rollout import plot_rollout
    >>> image = np.zeros((32, 32, 3), dtype="uint8")
    >>> figure = plot_rollout(image, np.arange(16.0).reshape(4, 4))
    >>> [axes.get_title() for axes in figure.axes]
    ['image', 'attention rollout']
    """
    display_image = as_display_image(image)
    rollout_map = np.asarray(rollout_map, dtype="float64")
    if rollout_map.ndim != 2:
        raise ValueError(
            "Expected `rollout_map` to be a 2D (rows, columns) patch map. "
            f"Received: rollout_map.shape={rollout_map.shape}"
        )
    height, width = display_image.shape[:2]
    figure = new_figure(figsize=(6.4, 3.0 * height / width + 0.5))
    draw_image(figure.add_subplot(1, 2, 1), display_image, title="image")
    draw_attention_map(figure.add_subplot(1, 2, 2), display_image, rollout_map, map_title)
    if title is not None:
        figure.suptitle(printable(title))
    return figure


def plot_head_maps(image, layer_attention, grid_size, has_class_token=True, columns=4, title=None):
    """Draws each head's attention of one layer over the image, one panel per head.

    For each head the map is the class token's attention to the patches (or
    the mean over all tokens' rows without a class token), upsampled to the
    image and coloured from 0 to the head's largest weight.

    Args:
        image: (H, W, 3) pixels, uint8 or float in 0..255 (grayscale
            (H, W) and (H, W, 1) work too).
        layer_attention: (heads, N, N) attention weights of one layer for
            one example.
        grid_size: (rows, columns) of the patch grid.
        has_class_token: whether token 0 is a class token.
        columns: panels per row.
        title: optional title above the panels.

    Returns:
        A `matplotlib.figure.Figure` with one axes per head, titled
        "head 0", "head 1", ...

    Example:

    >>> import numpy as np
    >>> from keras_attention.visualization.rollout import plot_head_maps
    >>> image = np.zeros((32, 32, 3), dtype="uint8")
    >>> attention = np.full((2, 5, 5), 0.2)  # 2 heads, class token + 2 x 2 patches
    >>> figure = plot_head_maps(image, attention, grid_size=(2, 2))
    >>> [axes.get_title() for axes in figure.axes]
    ['head 0', 'head 1']
    """
    display_image = as_display_image(image)
    layer_attention = np.asarray(layer_attention, dtype="float64")
    if (
        layer_attention.ndim != 3
        or layer_attention.shape[-1] != layer_attention.shape[-2]
        or 0 in layer_attention.shape
    ):
        raise ValueError(
            "Expected `layer_attention` to have shape (heads, N, N) with at least one head: "
            "one layer, one example. "
            f"Received: layer_attention.shape={layer_attention.shape}"
        )
    check_columns(columns)
    head_maps = _patch_maps(layer_attention, grid_size, has_class_token, "layer_attention")
    figure, rows, columns = panel_figure(head_maps.shape[0], columns, display_image.shape)
    for head, head_map in enumerate(head_maps):
        axes = figure.add_subplot(rows, columns, head + 1)
        draw_attention_map(axes, display_image, head_map, f"head {head}")
    if title is not None:
        figure.suptitle(printable(title))
    return figure
