"""Confusion matrices of a classifier: counting and drawing which class was mistaken for which."""

import numpy as np

from keras_attention.visualization._labels import as_labels
from keras_attention.visualization._labels import printable
from keras_attention.visualization._matplotlib import new_figure


def _as_class_indices(values, argument, num_classes):
    """1D int64 array of class indices in [0, num_classes), from ints or integral floats."""
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(
            f"Expected `{argument}` to be a 1D array of class indices. "
            f"Received: {argument}.shape={array.shape}"
        )
    if array.dtype.kind not in "iub":
        # Floats are fine when they hold whole numbers (labels often arrive as float32).
        if array.dtype.kind != "f" or not np.all(np.isfinite(array) & (array == np.round(array))):
            raise ValueError(
                f"Expected `{argument}` to hold integer class indices. Received: {argument}={array}"
            )
    indices = array.astype("int64")
    outside = (indices < 0) | (indices >= num_classes)
    if np.any(outside):
        raise ValueError(
            f"Expected `{argument}` to hold class indices in [0, {num_classes}). "
            f"Received: {argument} containing {indices[outside][:5].tolist()}"
        )
    return indices


def confusion_matrix(labels, predictions, num_classes):
    """Counts how often each true class was predicted as each class.

    Args:
        labels: (N,) true class indices in [0, num_classes).
        predictions: (N,) predicted class indices in [0, num_classes)
            (take `argmax` of probabilities first).
        num_classes: number of classes C.

    Returns:
        int64 NumPy array (C, C): entry [i, j] counts examples of true
        class i predicted as class j, so rows are true classes and the
        diagonal holds the correct predictions.

    Example:

    >>> from keras_attention.visualization.confusion import confusion_matrix
    >>> confusion_matrix([0, 0, 1, 2], [0, 1, 1, 2], num_classes=3).tolist()
    [[1, 1, 0], [0, 1, 0], [0, 0, 1]]
    """
    if (
        not isinstance(num_classes, (int, np.integer))
        or isinstance(num_classes, bool)
        or num_classes < 1
    ):
        raise ValueError(
            "Expected `num_classes` to be a positive integer. "
            f"Received: num_classes={num_classes!r}"
        )
    labels = _as_class_indices(labels, "labels", num_classes)
    predictions = _as_class_indices(predictions, "predictions", num_classes)
    if labels.shape != predictions.shape:
        raise ValueError(
            "Expected `labels` and `predictions` to have the same length. "
            f"Received: labels.shape={labels.shape}, predictions.shape={predictions.shape}"
        )
    # Each (true, predicted) pair gets one bin: true * C + predicted.
    counts = np.bincount(labels * num_classes + predictions, minlength=num_classes * num_classes)
    return counts.reshape(num_classes, num_classes)  # (C, C)


def plot_confusion_matrix(labels, predictions, class_names, normalize=True, title=None):
    """Draws the confusion matrix with its value written in every cell.

    Args:
        labels: (N,) true class indices.
        predictions: (N,) predicted class indices.
        class_names: the C class names, in class-index order; they label
            both axes (true classes on rows, predictions on columns).
        normalize: if True, each row is divided by its total so cells show
            the rate at which a true class was predicted as each class (rows
            of classes absent from `labels` stay 0); if False, raw counts.
        title: optional title above the matrix.

    Returns:
        A `matplotlib.figure.Figure` with two axes: the matrix and its
        colour bar.

    Example:

    >>> from keras_attention.visualization.confusion import plot_confusion_matrix
    >>> figure = plot_confusion_matrix([0, 1, 1], [0, 1, 0], ["cat", "dog"])
    >>> [label.get_text() for label in figure.axes[0].get_yticklabels()]
    ['cat', 'dog']
    >>> [text.get_text() for text in figure.axes[0].texts]
    ['1.00', '0.00', '0.50', '0.50']
    """
    names = as_labels(class_names, "class_names")
    num_classes = len(names)
    counts = confusion_matrix(labels, predictions, num_classes)
    if normalize:
        totals = counts.sum(axis=1, keepdims=True)  # (C, 1)
        values = counts / np.maximum(totals, 1)
        cell_format = "{:.2f}"
        high = 1.0
    else:
        values = counts
        cell_format = "{:d}"
        high = max(1, int(counts.max()))

    # About half an inch per class; the cell text shrinks for many classes.
    size = max(4.0, 0.5 * num_classes + 2.0)
    figure = new_figure(figsize=(size + 1.0, size))
    axes = figure.add_subplot()
    image = axes.imshow(values, cmap="Blues", vmin=0.0, vmax=high)
    ticks = np.arange(num_classes)
    axes.set_xticks(ticks, labels=names, rotation=45, ha="right", rotation_mode="anchor")
    axes.set_yticks(ticks, labels=names)
    axes.set_xlabel("predicted class")
    axes.set_ylabel("true class")
    font_size = 10 if num_classes <= 10 else 7
    for row in range(num_classes):
        for column in range(num_classes):
            value = values[row, column]
            # Light text on dark cells, dark text on light ones.
            color = "white" if value > 0.5 * high else "black"
            axes.text(
                column,
                row,
                cell_format.format(value.item()),
                ha="center",
                va="center",
                color=color,
                fontsize=font_size,
            )
    if title is not None:
        figure.suptitle(printable(title))
    figure.colorbar(image, ax=axes, label="rate" if normalize else "count")
    return figure
