"""Showing an image with an attention heat map laid over it."""

import math

import numpy as np

from keras_attention.visualization._labels import printable
from keras_attention.visualization._matplotlib import new_figure

# Opacity of the heat map where attention peaks. It fades to transparent
# where attention is lowest, so unattended regions show the plain image.
_PEAK_ALPHA = 0.7


def as_display_image(image, argument="image"):
    """Validates an image and scales its pixels from 0..255 to 0..1.

    Args:
        image: (H, W), (H, W, 1) or (H, W, 3) pixels, uint8 or float in 0..255.
        argument: the argument name to use in error messages.

    Returns:
        float (H, W) or (H, W, 3) array in [0, 1].
    """
    pixels = np.asarray(image)
    if pixels.ndim == 3 and pixels.shape[-1] == 1:
        pixels = pixels[..., 0]  # (H, W)
    if not (pixels.ndim == 2 or (pixels.ndim == 3 and pixels.shape[-1] == 3)):
        raise ValueError(
            f"Expected `{argument}` to have shape (H, W, 3), (H, W, 1) or (H, W). "
            f"Received: {argument}.shape={np.shape(image)}"
        )
    return np.clip(pixels.astype("float64") / 255.0, 0.0, 1.0)


def draw_image(axes, display_image, title=None):
    """Draws `display_image` on `axes` without ticks or frame.

    Args:
        axes: a matplotlib `Axes`.
        display_image: output of `as_display_image`.
        title: optional panel title.
    """
    if display_image.ndim == 2:
        axes.imshow(display_image, cmap="gray", vmin=0.0, vmax=1.0)
    else:
        axes.imshow(display_image)
    if title is not None:
        axes.set_title(printable(title))
    axes.set_axis_off()


def draw_overlay(axes, display_image, heat_map, title=None, value_range=None):
    """Draws `display_image` on `axes` with `heat_map` (same H, W) on top.

    Args:
        axes: a matplotlib `Axes`.
        display_image: output of `as_display_image`.
        heat_map: (H, W) array in [0, 1], already at the image's resolution.
        title: optional panel title.
        value_range: optional `(low, high)` attention weights that 0 and 1 of
            `heat_map` stand for; a colour bar beside the panel shows them.
    """
    draw_image(axes, display_image, title=title)
    shown = axes.imshow(heat_map, cmap="jet", vmin=0.0, vmax=1.0, alpha=_PEAK_ALPHA * heat_map)
    if value_range is not None:
        # An inset keeps `figure.axes` to one axes per panel.
        bar = axes.figure.colorbar(shown, cax=axes.inset_axes([1.03, 0.0, 0.05, 1.0]))
        bar.solids.set_alpha(1.0)  # the bar shows the colours, not the fading
        low, high = value_range
        bar.set_ticks([0.0, 0.5, 1.0])
        bar.set_ticklabels([f"{value:.3g}" for value in (low, (low + high) / 2, high)])
        bar.ax.tick_params(labelsize=7)


def check_columns(columns):
    """Raises a ValueError unless `columns`, panels per row, is a positive int."""
    if not isinstance(columns, (int, np.integer)) or columns < 1:
        raise ValueError(
            f"Expected `columns` to be a positive integer. Received: columns={columns}"
        )


def panel_figure(panels, columns, image_shape):
    """A figure for `panels` image panels in rows of at most `columns`.

    Panels are about 2.5 inches wide and keep the image's aspect ratio.

    Returns:
        `(figure, rows, columns)`, `columns` cut to `panels`.
    """
    check_columns(columns)
    columns = min(int(columns), panels)
    rows = math.ceil(panels / columns)
    height, width = image_shape[:2]
    panel_width = 2.5
    figure = new_figure(
        figsize=(panel_width * columns, (panel_width * height / width + 0.4) * rows)
    )
    return figure, rows, columns
