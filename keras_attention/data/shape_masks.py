"""Filled shapes drawn on a pixel grid: what the built-in image data sets are made of."""

import numpy as np


def shape_mask(shape, center, size, image_size):
    """Boolean mask of one filled shape drawn on a square pixel grid.

    Pixel `(row, col)` is inside when its centre `(row + 0.5, col + 0.5)` is.

    Args:
        shape: one of "circle", "square", "triangle" (apex up), "diamond",
            "plus", "ring".
        center: `(row, col)` of the shape's centre, in pixels (floats allowed).
        size: side of the shape's bounding box, in pixels.
        image_size: side of the square image, in pixels.

    Returns:
        bool array `(image_size, image_size)`.

    Example:

    >>> from keras_attention.data.shape_masks import shape_mask
    >>> shape_mask("square", (2, 2), 2, 4).astype(int).tolist()
    [[0, 0, 0, 0], [0, 1, 1, 0], [0, 1, 1, 0], [0, 0, 0, 0]]
    """
    if size <= 0:
        raise ValueError(f"`size` must be positive. Received: size={size}")
    rows = np.arange(image_size, dtype=np.float64)[:, None] + 0.5  # (H, 1)
    cols = np.arange(image_size, dtype=np.float64)[None, :] + 0.5  # (1, W)
    dy = rows - center[0]
    dx = cols - center[1]
    half = size / 2
    if shape == "circle":
        mask = dy**2 + dx**2 <= half**2
    elif shape == "square":
        mask = (np.abs(dy) <= half) & (np.abs(dx) <= half)
    elif shape == "triangle":
        # Width grows linearly from the apex (top) to the full base (bottom).
        depth = dy + half
        mask = (depth >= 0) & (dy <= half) & (np.abs(dx) <= depth / 2)
    elif shape == "diamond":
        mask = np.abs(dy) + np.abs(dx) <= half
    elif shape == "plus":
        bar = size / 6
        vertical = (np.abs(dx) <= bar) & (np.abs(dy) <= half)
        horizontal = (np.abs(dy) <= bar) & (np.abs(dx) <= half)
        mask = vertical | horizontal
    elif shape == "ring":
        radius_squared = dy**2 + dx**2
        mask = (radius_squared <= half**2) & (radius_squared >= (0.55 * half) ** 2)
    else:
        raise ValueError(
            "`shape` must be one of 'circle', 'square', 'triangle', 'diamond', "
            f"'plus', 'ring'. Received: shape={shape!r}"
        )
    return np.broadcast_to(mask, (image_size, image_size)).copy()
