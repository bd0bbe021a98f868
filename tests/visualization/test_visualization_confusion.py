import matplotlib.image
import numpy as np
import pytest

from keras_attention.visualization.confusion import confusion_matrix
from keras_attention.visualization.confusion import plot_confusion_matrix

CLASSES = ["cat", "dog", "bird"]
# 3 cats: 2 right, 1 called dog; 2 dogs: both right; 1 bird called cat.
LABELS = [0, 0, 0, 1, 1, 2]
PREDICTIONS = [0, 1, 0, 1, 1, 0]
HAND_COUNTS = [[2, 1, 0], [0, 2, 0], [1, 0, 0]]


def test_confusion_matrix_by_hand():
    counts = confusion_matrix(LABELS, PREDICTIONS, num_classes=3)
    np.testing.assert_array_equal(counts, HAND_COUNTS)
    # An unused fourth class adds an empty row and column.
    np.testing.assert_array_equal(
        confusion_matrix(LABELS, PREDICTIONS, num_classes=4),
        [[2, 1, 0, 0], [0, 2, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0]],
    )


def test_confusion_matrix_matches_counting_pairs():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 5, size=200)
    predictions = rng.integers(0, 5, size=200)
    expected = np.zeros((5, 5), dtype=int)
    for label, prediction in zip(labels, predictions):
        expected[label, prediction] += 1
    np.testing.assert_array_equal(confusion_matrix(labels, predictions, 5), expected)
    # Labels often arrive as whole-number floats.
    np.testing.assert_array_equal(
        confusion_matrix(labels.astype("float32"), predictions, 5), expected
    )


def test_confusion_matrix_rejects_bad_input():
    with pytest.raises(
        ValueError, match=r"indices in \[0, 3\). Received: predictions containing \[3\]"
    ):
        confusion_matrix([0, 1], [0, 3], num_classes=3)
    with pytest.raises(
        ValueError, match=r"indices in \[0, 3\). Received: labels containing \[-1\]"
    ):
        confusion_matrix([-1, 1], [0, 1], num_classes=3)
    with pytest.raises(ValueError, match=r"integer class indices. Received: labels=\[0.5 1. \]"):
        confusion_matrix([0.5, 1.0], [0, 1], num_classes=3)
    with pytest.raises(
        ValueError, match=r"1D array of class indices. Received: predictions.shape=\(2, 3\)"
    ):
        confusion_matrix([0, 1], np.zeros((2, 3), int), num_classes=3)
    with pytest.raises(
        ValueError, match=r"same length. Received: labels.shape=\(2,\), predictions.shape=\(3,\)"
    ):
        confusion_matrix([0, 1], [0, 1, 1], num_classes=3)
    with pytest.raises(ValueError, match="positive integer. Received: num_classes=0"):
        confusion_matrix([0], [0], num_classes=0)


def _cell_texts(figure):
    return [text.get_text() for text in figure.axes[0].texts]


def test_plot_writes_row_rates_in_the_cells(tmp_path):
    figure = plot_confusion_matrix(LABELS, PREDICTIONS, CLASSES, title="validation")
    matrix_axes = figure.axes[0]
    assert len(figure.axes) == 2  # matrix and colour bar
    assert [label.get_text() for label in matrix_axes.get_xticklabels()] == CLASSES
    assert [label.get_text() for label in matrix_axes.get_yticklabels()] == CLASSES
    assert figure.get_suptitle() == "validation"
    # Row by row: cats 2/3, 1/3, 0; dogs 0, 1, 0; birds 1, 0, 0.
    assert _cell_texts(figure) == [
        "0.67",
        "0.33",
        "0.00",
        "0.00",
        "1.00",
        "0.00",
        "1.00",
        "0.00",
        "0.00",
    ]
    # Each text sits on its own cell: x is the predicted class, y the true one.
    positions = [text.get_position() for text in matrix_axes.texts]
    assert positions == [(column, row) for row in range(3) for column in range(3)]

    path = tmp_path / "confusion.png"
    figure.savefig(path)
    pixels = matplotlib.image.imread(path)
    assert pixels.ndim == 3 and pixels.shape[2] == 4 and pixels.std() > 0.0


def test_plot_writes_counts_and_keeps_absent_classes_at_zero():
    counts = plot_confusion_matrix(LABELS, PREDICTIONS, CLASSES, normalize=False)
    assert _cell_texts(counts) == [str(count) for row in HAND_COUNTS for count in row]

    # No example of "bird": its row stays 0 instead of 0 / 0.
    rates = plot_confusion_matrix([0, 1], [1, 1], CLASSES)
    assert _cell_texts(rates)[6:] == ["0.00", "0.00", "0.00"]
    assert np.all(np.isfinite(rates.axes[0].images[0].get_array()))


def test_plot_checks_labels_against_the_class_names():
    with pytest.raises(ValueError, match=r"indices in \[0, 2\). Received: labels containing \[2\]"):
        plot_confusion_matrix(LABELS, PREDICTIONS, ["cat", "dog"])
