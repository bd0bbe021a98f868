"""The alignment matrix of a translation: which source word each target word attended to."""

import numpy as np

from keras_attention.visualization._labels import as_labels
from keras_attention.visualization._labels import printable
from keras_attention.visualization._matplotlib import new_figure


def plot_alignment(weights, source_tokens, target_tokens, title=None):
    """Draws attention weights between a translation and its source sentence.

    Rows (y) are the generated target tokens, columns (x) the source tokens,
    as in the figures of Bahdanau et al. 2015: cell (t, s) is how much the
    decoder attended to source token `s` while producing target token `t`.
    Brighter cells mean more attention; a colour bar gives the scale.

    `weights` must match the tokens exactly: slice padding off first
    (`weights[:len(target_tokens), :len(source_tokens)]`). An empty
    translation (or source) has nothing to align: the figure then says so
    instead of drawing a matrix.

    Args:
        weights: (T, S) attention weights, a NumPy array or anything
            `np.asarray` takes (a tensor, nested lists).
        source_tokens: the S source tokens (strings or bytes), drawn as
            column labels.
        target_tokens: the T target tokens, drawn as row labels.
        title: optional title above the matrix.

    Returns:
        A `matplotlib.figure.Figure` with two axes: the matrix and its
        colour bar.

    Example:

    >>> import numpy as np
    >>> from keras_attention.visualization.alignment import plot_alignment
    >>> weights = np.array([[0.9, 0.1, 0.0], [0.1, 0.2, 0.7]])
    >>> figure = plot_alignment(weights, ["la", "maison", "bleue"], ["the", "house"])
    >>> [label.get_text() for label in figure.axes[0].get_xticklabels()]
    ['la', 'maison', 'bleue']
    >>> [label.get_text() for label in figure.axes[0].get_yticklabels()]
    ['the', 'house']
    >>> plot_alignment(np.zeros((0, 3)), ["la", "maison", "bleue"], []).axes[0].texts[0].get_text()
    'empty translation: nothing to align'
    """
    empty = _empty_side(source_tokens, target_tokens)
    if empty is not None:
        return _empty_alignment_figure(weights, empty, title)
    source_labels = as_labels(source_tokens, "source_tokens")
    target_labels = as_labels(target_tokens, "target_tokens")
    weights = np.asarray(weights, dtype="float64")
    expected_shape = (len(target_labels), len(source_labels))
    if weights.shape != expected_shape:
        raise ValueError(
            "Expected `weights` to be a 2D array of shape "
            f"(len(target_tokens), len(source_tokens)) = {expected_shape}. "
            f"Received: weights.shape={weights.shape}"
        )
    return _alignment_figure(weights, source_labels, target_labels, title)


def _alignment_figure(weights, source_labels, target_labels, title):
    """The (T, S) matrix with its token labels, the source on top, and a colour bar."""
    # About half an inch per token keeps labels readable for short and long sentences.
    width = max(4.0, 0.5 * len(source_labels) + 2.0)
    height = max(3.0, 0.5 * len(target_labels) + 1.5)
    figure = new_figure(figsize=(width, height))
    axes = figure.add_subplot()
    # The brightest cell is the largest weight; the colour bar gives the absolute scale.
    brightest = max(1e-12, float(weights.max()))
    image = axes.imshow(weights, cmap="gray", vmin=0.0, vmax=brightest)
    axes.set_xticks(np.arange(len(source_labels)), labels=source_labels, rotation=90)
    axes.set_yticks(np.arange(len(target_labels)), labels=target_labels)
    # Source sentence on top, read left to right above the matrix, as in the paper.
    axes.xaxis.tick_top()
    axes.xaxis.set_label_position("top")
    axes.set_xlabel("source")
    axes.set_ylabel("target")
    if title is not None:
        figure.suptitle(printable(title))
    figure.colorbar(image, ax=axes, label="attention weight")
    return figure


def _empty_side(source_tokens, target_tokens):
    """The name of the first empty token sequence, or None."""
    for name, tokens in (("target_tokens", target_tokens), ("source_tokens", source_tokens)):
        if not isinstance(tokens, (str, bytes)) and hasattr(tokens, "__len__") and len(tokens) == 0:
            return name
    return None


def _empty_alignment_figure(weights, empty, title):
    """A figure saying that the `empty` side (a token argument's name) has nothing to align."""
    weights = np.asarray(weights)
    if weights.size:
        raise ValueError(
            f"Expected `weights` to be empty for an empty {empty}. "
            f"Received: weights.shape={weights.shape}"
        )
    figure = new_figure(figsize=(4.0, 1.5))
    axes = figure.add_subplot()
    axes.set_axis_off()
    empty_name = "translation" if empty == "target_tokens" else "source"
    axes.text(0.5, 0.5, f"empty {empty_name}: nothing to align", ha="center", va="center")
    if title is not None:
        figure.suptitle(printable(title))
    return figure
