"""How much of a captioner's attention falls on the object a word names.

When a captioner emits the word naming an object ("circle"), its attention
map over the CNN feature grid should sit on that object. These functions
measure the fraction of the attention mass inside the object's pixel mask.

The attention map `(h, w)` and the mask `(H, W)` live on different grids. The
mask is brought down to the feature grid by area: `coverage[i, j]` is the
fraction of cell `(i, j)`'s image area inside the mask (cells cover
`H / h x W / w` pixels each; a pixel split between cells counts for each by
its overlap). The fraction on the object is then

    sum_ij a_ij * coverage_ij / sum_ij a_ij,

which is exactly the attention mass inside the mask when each cell's weight is
spread evenly over the pixels it covers (box upsampling of the map). A map
spread uniformly over the grid scores the object's share of the image area:
the chance level. All functions take and return NumPy values.
"""

import numpy as np


def _overlap_matrix(num_pixels, num_cells):
    """`(num_cells, num_pixels)`: the share of each cell's extent covered by each pixel."""
    cell = num_pixels / num_cells  # cell extent in pixels
    starts = np.arange(num_cells)[:, None] * cell  # (cells, 1)
    pixels = np.arange(num_pixels)[None, :]  # (1, pixels)
    overlap = np.clip(np.minimum(starts + cell, pixels + 1) - np.maximum(starts, pixels), 0, None)
    return overlap / cell  # each row sums to 1


def mask_coverage_on_grid(mask, grid_size):
    """The fraction of each grid cell's area that lies inside a pixel mask.

    Args:
        mask: bool or 0/1 array `(H, W)`.
        grid_size: `(h, w)` of the feature grid, positive ints, at most `(H, W)`.

    Returns:
        float64 array `(h, w)` with values in [0, 1].

    Example:

    >>> import numpy as np
    >>> from keras_attention.tasks.captioning.attention_on_objects import mask_coverage_on_grid
    >>> mask = np.zeros((4, 4), bool)
    >>> mask[:2, :3] = True  # the top half, three columns of four
    >>> mask_coverage_on_grid(mask, (2, 2)).tolist()
    [[1.0, 0.5], [0.0, 0.0]]
    """
    mask = np.asarray(mask, dtype="float64")
    if mask.ndim != 2 or mask.size == 0:
        raise ValueError(
            f"`mask` must be a non-empty (H, W) array. Received: mask.shape={mask.shape}"
        )
    shape = tuple(grid_size) if isinstance(grid_size, (tuple, list)) else None
    if (
        shape is None
        or len(shape) != 2
        or not all(isinstance(size, (int, np.integer)) and 0 < size for size in shape)
        or shape[0] > mask.shape[0]
        or shape[1] > mask.shape[1]
    ):
        raise ValueError(
            f"`grid_size` must be (h, w), positive ints no larger than the mask {mask.shape}. "
            f"Received: grid_size={grid_size!r}"
        )
    rows = _overlap_matrix(mask.shape[0], shape[0])  # (h, H)
    cols = _overlap_matrix(mask.shape[1], shape[1])  # (w, W)
    return rows @ mask @ cols.T  # (h, H) @ (H, W) @ (W, w) -> (h, w)


def attention_on_mask(attention, mask):
    """The fraction of an attention map's mass that falls inside a pixel mask.

    Args:
        attention: non-negative weights `(h, w)` over the feature grid (they
            need not sum to 1).
        mask: bool `(H, W)` over the image.

    Returns:
        float in [0, 1] (0 for a map with no mass).

    Example:

    >>> import numpy as np
    >>> from keras_attention.tasks.captioning.attention_on_objects import attention_on_mask
    >>> mask = np.zeros((4, 4), bool)
    >>> mask[:2, :2] = True  # the top-left cell of a 2x2 grid
    >>> round(attention_on_mask(np.array([[0.7, 0.1], [0.1, 0.1]]), mask), 6)
    0.7
    """
    attention = np.asarray(attention, dtype="float64")
    if attention.ndim != 2 or not np.all(np.isfinite(attention)) or np.any(attention < 0):
        raise ValueError(
            "`attention` must be a finite, non-negative (h, w) map. "
            f"Received: attention with shape {attention.shape}"
        )
    coverage = mask_coverage_on_grid(mask, attention.shape)
    total = attention.sum()
    return float((attention * coverage).sum() / total) if total > 0 else 0.0


def object_attention_fractions(words, attention, objects):
    """For each object of a scene, the attention on it when its shape word is emitted.

    The `k`-th object (in `objects` order) whose shape word is `s` is matched
    with the `k`-th step whose word is `s`, so a caption that names the
    objects in the reference order is measured object by object; an object
    whose shape word the caption lacks gets None.

    Args:
        words: the word emitted at each step, `T` strings (or bytes), such
            as the decoded tokens; trailing padding steps may be left out.
        attention: `(T', h, w)` attention maps of the steps, `T' >= T`.
        objects: the scene's objects in caption order, dicts with "shape"
            (the word naming it) and "mask" (bool `(H, W)`), as
            `keras_attention.tasks.captioning.builtin_scenes` makes them.

    Returns:
        list with one float in [0, 1] (or None) per object.

    Example:

    >>> import numpy as np
    >>> from keras_attention.tasks.captioning.attention_on_objects import (
    ...     object_attention_fractions)
    >>> left = np.zeros((4, 4), bool); left[:, :2] = True
    >>> right = np.zeros((4, 4), bool); right[:, 2:] = True
    >>> objects = [{"shape": "circle", "mask": left}, {"shape": "square", "mask": right}]
    >>> attention = np.array([[[0.25, 0.25], [0.25, 0.25]],   # "a"
    ...                       [[0.5, 0.0], [0.4, 0.1]],      # "circle"
    ...                       [[0.0, 0.5], [0.0, 0.5]]])     # "square"
    >>> object_attention_fractions(["a", "circle", "square"], attention, objects)
    [0.9, 1.0]
    """
    words = [word.decode("utf-8") if isinstance(word, bytes) else str(word) for word in words]
    attention = np.asarray(attention, dtype="float64")
    if attention.ndim != 3 or attention.shape[0] < len(words):
        raise ValueError(
            "`attention` must be (steps, h, w) with a map for every word. "
            f"Received: attention.shape={attention.shape} for {len(words)} words"
        )
    fractions = []
    used = {}
    for scene_object in objects:
        shape_word = scene_object["shape"]
        steps = [t for t, word in enumerate(words) if word == shape_word]
        occurrence = used.get(shape_word, 0)
        used[shape_word] = occurrence + 1
        if occurrence >= len(steps):
            fractions.append(None)
            continue
        fractions.append(attention_on_mask(attention[steps[occurrence]], scene_object["mask"]))
    return fractions


def attention_on_objects_summary(captions_words, attentions, scenes_objects):
    """The mean attention on the named object over many scenes, with its chance level.

    Args:
        captions_words: per scene, the words emitted at each step.
        attentions: per scene, `(T, h, w)` attention maps (or one array
            `(N, T, h, w)`).
        scenes_objects: per scene, its objects in caption order (see
            `object_attention_fractions`).

    Returns:
        dict with "fraction" (mean attention on the named object over the
        measured objects), "chance" (the mean share of a grid cell's area
        the objects cover: the fraction of a uniform attention map),
        "measured" (objects whose shape word was emitted) and "objects"
        (all objects). The means are NaN when nothing was measured.

    Example:

    >>> import numpy as np
    >>> from keras_attention.tasks.captioning.attention_on_objects import (
    ...     attention_on_objects_summary)
    >>> mask = np.zeros((4, 4), bool); mask[:2, :2] = True
    >>> summary = attention_on_objects_summary(
    ...     [["a", "circle"]], np.array([[[[0.25, 0.25], [0.25, 0.25]], [[1, 0], [0, 0]]]]),
    ...     [[{"shape": "circle", "mask": mask}, {"shape": "square", "mask": ~mask}]])
    >>> summary
    {'fraction': 1.0, 'chance': 0.25, 'measured': 1, 'objects': 2}
    """
    if not len(captions_words) == len(attentions) == len(scenes_objects):
        raise ValueError(
            "`captions_words`, `attentions` and `scenes_objects` must have one entry per scene. "
            f"Received: {len(captions_words)}, {len(attentions)} and {len(scenes_objects)} entries"
        )
    fractions, chances, total = [], [], 0
    for words, attention, objects in zip(captions_words, attentions, scenes_objects):
        total += len(objects)
        grid = np.asarray(attention).shape[1:]
        fractions_of_scene = object_attention_fractions(words, attention, objects)
        for scene_object, fraction in zip(objects, fractions_of_scene):
            if fraction is None:
                continue
            fractions.append(fraction)
            chances.append(float(mask_coverage_on_grid(scene_object["mask"], grid).mean()))
    mean = lambda values: float(np.mean(values)) if values else float("nan")  # noqa: E731
    return {
        "fraction": mean(fractions),
        "chance": mean(chances),
        "measured": len(fractions),
        "objects": total,
    }


def attention_peak_in_box(attention, box, image_shape):
    """Whether an attention map's highest cell lies on a box of the image.

    The peak cell's centre, in image pixels, must fall inside the box: the
    map "looks at" the object (a glyph, a word's region) the box encloses.
    The grid cells split the image evenly, `H / h x W / w` pixels each.

    Args:
        attention: weights `(h, w)` over the feature grid.
        box: `(top, left, bottom, right)` in pixels of the image, bottom and
            right exclusive.
        image_shape: `(H, W)` of the image the box is drawn on.

    Returns:
        bool.

    Example:

    >>> import numpy as np
    >>> from keras_attention.tasks.captioning.attention_on_objects import attention_peak_in_box
    >>> attention = np.zeros((2, 6)); attention[1, 4] = 1.0  # cell centre (24, 72)
    >>> attention_peak_in_box(attention, (10, 64, 30, 80), (32, 96))
    True
    >>> attention_peak_in_box(attention, (10, 0, 30, 32), (32, 96))
    False
    """
    attention = np.asarray(attention, dtype="float64")
    if attention.ndim != 2 or attention.size == 0 or not np.all(np.isfinite(attention)):
        raise ValueError(
            "`attention` must be a finite, non-empty (h, w) map. "
            f"Received: attention with shape {attention.shape}"
        )
    if len(tuple(box)) != 4:
        raise ValueError(f"`box` must be (top, left, bottom, right). Received: box={box!r}")
    shape = tuple(image_shape)
    if len(shape) != 2 or not all(size > 0 for size in shape):
        raise ValueError(
            "`image_shape` must be (H, W), two positive sizes. "
            f"Received: image_shape={image_shape!r}"
        )
    row, column = np.unravel_index(np.argmax(attention), attention.shape)
    centre_y = (row + 0.5) * shape[0] / attention.shape[0]
    centre_x = (column + 0.5) * shape[1] / attention.shape[1]
    top, left, bottom, right = box
    return bool(top <= centre_y < bottom and left <= centre_x < right)
