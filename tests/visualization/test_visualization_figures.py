import pathlib

import matplotlib.image
import numpy as np
import pytest

from keras_attention.visualization.alignment import plot_alignment
from keras_attention.visualization.figures import save_figure


def _figure():
    return plot_alignment(np.eye(3), ["a", "b", "c"], ["x", "y", "z"])


def test_creates_missing_folders_and_returns_the_path(tmp_path):
    target = tmp_path / "nested" / "deeper" / "alignment.png"
    written = save_figure(_figure(), str(target))
    assert isinstance(written, pathlib.Path)
    assert written == target and target.is_file()
    pixels = matplotlib.image.imread(target)
    assert pixels.ndim == 3 and pixels.shape[2] == 4 and pixels.std() > 0.0


def test_dpi_sets_the_resolution(tmp_path):
    low = matplotlib.image.imread(save_figure(_figure(), tmp_path / "low.png", dpi=40))
    high = matplotlib.image.imread(save_figure(_figure(), tmp_path / "high.png", dpi=80))
    # Twice the dots per inch, about twice the pixels along each side.
    assert abs(high.shape[0] / low.shape[0] - 2.0) < 0.1
    assert abs(high.shape[1] / low.shape[1] - 2.0) < 0.1


def test_format_follows_the_extension(tmp_path):
    path = save_figure(_figure(), tmp_path / "alignment.svg")
    assert path.read_text().lstrip().startswith("<?xml")


def test_rejects_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="positive number. Received: dpi=0"):
        save_figure(_figure(), tmp_path / "a.png", dpi=0)
    with pytest.raises(ValueError, match="matplotlib Figure. Received: figure of type ndarray"):
        save_figure(np.zeros((2, 2)), tmp_path / "a.png")
