"""Writing figures to disk."""

import pathlib


def save_figure(figure, path, dpi=100):
    """Saves a figure, creating the folders on the way, and returns where.

    The format follows the file extension (".png", ".pdf", ".svg", ...).

    Args:
        figure: a `matplotlib.figure.Figure`, such as the `plot_*` functions
            of this package return.
        path: the file to write (str or `os.PathLike`).
        dpi: resolution in dots per inch for raster formats.

    Returns:
        The `pathlib.Path` written.

    Example:

    >>> import os, tempfile
    >>> import numpy as np
    >>> from keras_attention.visualization.alignment import plot_alignment
    >>> from keras_attention.visualization.figures import save_figure
    >>> figure = plot_alignment(np.eye(2), ["a", "b"], ["x", "y"])
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = save_figure(figure, os.path.join(folder, "plots", "alignment.png"))
    ...     print(path.name, path.exists())
    alignment.png True
    """
    if not hasattr(figure, "savefig"):
        raise ValueError(
            "Expected `figure` to be a matplotlib Figure. "
            f"Received: figure of type {type(figure).__name__}"
        )
    if isinstance(dpi, bool) or not isinstance(dpi, (int, float)) or not dpi > 0:
        raise ValueError(f"Expected `dpi` to be a positive number. Received: dpi={dpi!r}")
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # "tight" trims the blank margin so the file holds just the figure.
    figure.savefig(path, dpi=dpi, bbox_inches="tight")
    return path
