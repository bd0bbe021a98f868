"""Lazy access to matplotlib, an optional dependency used only to draw."""

_INSTALL_HINT = (
    "Drawing attention needs matplotlib, which is an optional dependency. "
    "Install it with `pip install matplotlib` "
    '(or `pip install "keras-attention[examples]"`).'
)


def new_figure(figsize):
    """A `matplotlib.figure.Figure` that is not attached to pyplot.

    Building the figure directly (not through `pyplot`) leaves the global
    backend and pyplot's figure registry untouched, so drawing works in
    headless jobs and never leaks open figures.

    Args:
        figsize: (width, height) in inches.

    Returns:
        An empty `Figure` with constrained layout.

    Raises:
        ImportError: matplotlib is not installed.
    """
    try:
        from matplotlib.figure import Figure
    except ImportError as error:
        raise ImportError(_INSTALL_HINT) from error
    return Figure(figsize=figsize, layout="constrained")
