"""Spatial attention of an image captioner, drawn over the image word by word."""

import numpy as np

from keras_attention.visualization._labels import as_labels
from keras_attention.visualization._labels import printable
from keras_attention.visualization._matplotlib import new_figure
from keras_attention.visualization._overlay import as_display_image
from keras_attention.visualization._overlay import draw_image
from keras_attention.visualization._overlay import draw_overlay
from keras_attention.visualization._overlay import panel_figure

# The note drawn under an image whose caption has no word.
EMPTY_CAPTION_NOTE = "(empty caption: no word, no attention map)"


def _bilinear_matrix(source_size, target_size):
    """(target_size, source_size) matrix that linearly interpolates one axis.

    Pixel centres are aligned the way image resizing aligns them
    (`keras.ops.image.resize`, `tf.image.resize`): output pixel `i` reads
    source coordinate `(i + 0.5) * source_size / target_size - 0.5`, clamped
    at the borders.
    """
    coordinates = (np.arange(target_size) + 0.5) * source_size / target_size - 0.5
    coordinates = np.clip(coordinates, 0.0, source_size - 1)
    lower = np.floor(coordinates).astype("int64")
    upper = np.minimum(lower + 1, source_size - 1)
    fraction = coordinates - lower
    rows = np.arange(target_size)
    matrix = np.zeros((target_size, source_size))
    np.add.at(matrix, (rows, lower), 1.0 - fraction)
    np.add.at(matrix, (rows, upper), fraction)
    return matrix


def upsample_attention(attention, image_shape, return_range=False, low=None):
    """Resizes an (h, w) attention map to an (H, W) image, scaled to [0, 1].

    The map is resized bilinearly (so a feature-map cell becomes a smooth
    blob centred on the image region it covers) and then scaled so that
    `low` is 0 and its largest value 1, ready to draw as a heat map. By
    default `low` is the map's smallest value (min-max scaling): a constant
    map then carries no "where" information and comes out as zeros. With
    `low=0.0` every weight is drawn in proportion to the largest, so a
    nearly uniform map stays nearly uniform.

    Args:
        attention: (h, w) attention weights over a feature map.
        image_shape: (H, W), the height and width to resize to.
        return_range: also return `(low, high)`, the attention weights that
            0 and 1 stand for (for a colour bar in the map's own units).
        low: None (the map's smallest value) or the weight that 0 stands
            for, such as 0.0 for attention weights; values below it (never,
            for weights) lower it to the map's smallest.

    Returns:
        float64 NumPy array of shape (H, W) with values in [0, 1], and with
        `return_range=True` also `(low, high)`.

    Example:

    >>> import numpy as np
    >>> from keras_attention.visualization.image_attention import upsample_attention
    >>> attention = np.array([[0.0, 1.0], [0.0, 0.0]])
    >>> heat_map = upsample_attention(attention, (4, 4))
    >>> heat_map.shape
    (4, 4)
    >>> heat_map[0].tolist()  # top row: brightest under the attended top-right cell
    [0.0, 0.25, 0.75, 1.0]
    >>> upsample_attention(np.array([[0.25, 0.5]]), (1, 2), low=0.0).tolist()
    [[0.5, 1.0]]
    """
    attention = np.asarray(attention, dtype="float64")
    if attention.ndim != 2 or attention.size == 0:
        raise ValueError(
            "Expected `attention` to be a non-empty 2D (h, w) map. "
            f"Received: attention.shape={attention.shape}"
        )
    if not np.all(np.isfinite(attention)):
        raise ValueError(
            f"Expected `attention` to hold only finite values. Received: attention={attention}"
        )
    shape = tuple(image_shape)
    if len(shape) != 2 or not all(
        isinstance(size, (int, np.integer)) and size > 0 for size in shape
    ):
        raise ValueError(
            "Expected `image_shape` to be (H, W), two positive integers. "
            f"Received: image_shape={image_shape}"
        )
    height, width = shape
    rows = _bilinear_matrix(attention.shape[0], height)  # (H, h)
    columns = _bilinear_matrix(attention.shape[1], width)  # (W, w)
    resized = rows @ attention @ columns.T  # (H, h) @ (h, w) @ (w, W) -> (H, W)
    if low is not None and not (
        isinstance(low, (int, float, np.number)) and not isinstance(low, bool) and np.isfinite(low)
    ):
        raise ValueError(f"Expected `low` to be None or a finite number. Received: low={low!r}")
    smallest = float(resized.min())
    low, high = smallest if low is None else min(float(low), smallest), float(resized.max())
    heat_map = np.zeros_like(resized) if high - low <= 0.0 else (resized - low) / (high - low)
    return (heat_map, (low, high)) if return_range else heat_map


def draw_attention_map(axes, display_image, attention_map, title):
    """Draws `attention_map` (h, w), upsampled to the image, over it with a colour bar.

    Colours run from weight 0 (transparent: the plain image) to the map's
    largest weight, which the colour bar gives (`upsample_attention` with
    `low=0.0`). A map whose weights hardly differ, such as the nearly
    uniform attention of an untrained model, is drawn in nearly one colour:
    small differences are not stretched over the whole colour range.

    Args:
        axes: a matplotlib `Axes`.
        display_image: an (H, W, 3) or (H, W) image in [0, 1], as drawn.
        attention_map: (h, w) weights of a coarser grid over the image.
        title: the panel title.

    Example:

    >>> import numpy as np
    >>> from keras_attention.visualization._matplotlib import new_figure
    >>> axes = new_figure(figsize=(2.0, 2.0)).add_subplot()
    >>> draw_attention_map(axes, np.zeros((8, 8, 3)), np.eye(2), "bird")
    >>> axes.get_title()
    'bird'
    """
    heat_map, value_range = upsample_attention(
        attention_map, display_image.shape[:2], return_range=True, low=0.0
    )
    draw_overlay(axes, display_image, heat_map, title=title, value_range=value_range)


def plot_caption_attention(image, attention, words, columns=4, title=None):
    """Draws where a captioner looked while it generated each word.

    The first panel is the image itself; each following panel shows the
    image with that word's attention map (bilinearly upsampled from the
    feature-map grid) laid over it as a heat map, titled with the word, as in
    the "Show, Attend and Tell" figures (Xu et al. 2015). Each map has its
    own colour bar, labelled with the attention weights its colours stand for.

    A caption with no word (a captioner that ends at once: `words` empty,
    `attention` of shape `(0, h, w)`) gives the image alone, with
    `EMPTY_CAPTION_NOTE` under it.

    Args:
        image: (H, W, 3) pixels, uint8 or float in 0..255 (grayscale
            (H, W) and (H, W, 1) work too).
        attention: (T, h, w) attention over the (h, w) feature grid, one map
            per generated word (T may be 0).
        words: the T generated words (strings or bytes), one per map.
        columns: panels per row.
        title: optional title above the panels (for example the caption).

    Returns:
        A `matplotlib.figure.Figure` with T + 1 axes: the image, then one per
        word.

    Example:

    >>> import numpy as np
    >>> from keras_attention.visualization.image_attention import plot_caption_attention
    >>> image = np.zeros((32, 32, 3), dtype="uint8")
    >>> attention = np.random.default_rng(0).random((3, 4, 4))
    >>> figure = plot_caption_attention(image, attention, ["a", "bird", "flying"])
    >>> [axes.get_title() for axes in figure.axes]
    ['', 'a', 'bird', 'flying']
    >>> figure = plot_caption_attention(image, np.zeros((0, 4, 4)), [])
    >>> len(figure.axes), figure.axes[0].get_xlabel()
    (1, '(empty caption: no word, no attention map)')
    """
    display_image = as_display_image(image)
    attention = np.asarray(attention, dtype="float64")
    if _is_empty(words):
        if attention.ndim != 3 or attention.shape[0] != 0:
            raise ValueError(
                "Expected no attention map for an empty caption, attention.shape[0] == 0. "
                f"Received: len(words)=0, attention.shape={attention.shape}"
            )
        return _plot_image_with_note(display_image, EMPTY_CAPTION_NOTE, title)
    labels = as_labels(words, "words")
    if attention.ndim != 3:
        raise ValueError(
            "Expected `attention` to have shape (T, h, w): one (h, w) map per word. "
            f"Received: attention.shape={attention.shape}"
        )
    if attention.shape[0] != len(labels):
        raise ValueError(
            "Expected one attention map per word, len(words) == attention.shape[0]. "
            f"Received: len(words)={len(labels)}, attention.shape={attention.shape}"
        )
    figure, rows, columns = panel_figure(len(labels) + 1, columns, display_image.shape)
    draw_image(figure.add_subplot(rows, columns, 1), display_image)
    for index, (word, word_attention) in enumerate(zip(labels, attention)):
        draw_attention_map(
            figure.add_subplot(rows, columns, index + 2), display_image, word_attention, word
        )
    if title is not None:
        figure.suptitle(printable(title))
    return figure


def _is_empty(words):
    return not isinstance(words, (str, bytes)) and hasattr(words, "__len__") and len(words) == 0


def _plot_image_with_note(display_image, note, title):
    """One panel: the image, with `note` written under it."""
    height, width = display_image.shape[:2]
    panel_width = 2.5
    figure = new_figure(figsize=(panel_width, panel_width * height / width + 0.8))
    axes = figure.add_subplot(1, 1, 1)
    draw_image(axes, display_image)
    # draw_image hides the axis; the label stays visible as text under the panel.
    axes.set_axis_on()
    axes.set_xticks([])
    axes.set_yticks([])
    axes.set_xlabel(note)
    if title is not None:
        figure.suptitle(printable(title))
    return figure
