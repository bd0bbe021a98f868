"""The images the Python methods of the image models take, checked before any graph runs.

`classify` and `caption` take a batch of raw pixels `(B, H, W, C)` in
0..255, uint8 or float, which the model normalises itself. What they are
given is checked here, in NumPy, so that a mistake is a `ValueError` that
names `images` (not an error from deep inside a compiled graph): one image
without its batch axis, grayscale for a colour model, a file name, NaN,
16-bit values. The most common mistake of all, images already divided by
255, is valid input that the model would answer as a nearly black image,
so it is named in a warning: a float batch whose largest value is above 0
and at most 1 (a real image with no pixel above 1 of 255 is black).

Example:

>>> import numpy as np
>>> from keras_attention.models.pixel_batches import checked_pixel_batch
>>> checked_pixel_batch(np.zeros((2, 4, 4, 3), "uint8"), 3, "classify").dtype
dtype('float32')
>>> checked_pixel_batch(np.zeros((4, 4, 3)), 3, "classify")
Traceback (most recent call last):
...
ValueError: `images` must be a batch (batch, height, width, 3), one image as a batch of one \
(images[None]). Received: images.shape=(4, 4, 3)
"""

import warnings

import numpy as np

from keras_attention.validation import PIXEL_RANGE


def checked_pixel_batch(images, channels, method):
    """`images` as a float32 NumPy batch `(B, H, W, channels)` of pixels in 0..255.

    Args:
        images: what the method was given: an array, a list or an eager
            tensor of pixels.
        channels: the channel count the model takes.
        method: the method's name, for the warning.

    Returns:
        float32 `np.ndarray` `(B, H, W, channels)`.

    Raises:
        ValueError: naming `images`: not numbers, not a non-empty batch of
            that shape, NaN or infinite values, or values outside 0..255.
    """
    try:
        pixels = np.asarray(images)
    except Exception:  # a ragged list of images of other sizes, ...
        pixels = None
    if pixels is None or not (
        np.issubdtype(pixels.dtype, np.number) or np.issubdtype(pixels.dtype, np.bool_)
    ):
        kind = type(images).__name__ if pixels is None else f"{pixels.dtype} values"
        raise ValueError(
            f"`images` must be pixels (batch, height, width, {channels}), uint8 or float in "
            f"0..255; to read image files, decode them first (e.g. keras.utils.load_img). "
            f"Received: {kind}{_shown(images)}"
        )
    if pixels.ndim != 4:
        raise ValueError(
            f"`images` must be a batch (batch, height, width, {channels}), one image as a batch "
            f"of one (images[None]). Received: images.shape={pixels.shape}"
        )
    if pixels.shape[-1] != channels or 0 in pixels.shape:
        raise ValueError(
            f"`images` must be (batch, height, width, {channels}) with at least one image of "
            f"height, width > 0. Received: images.shape={pixels.shape}"
        )
    given_floats = np.issubdtype(pixels.dtype, np.floating)  # integers are raw pixels anyway
    pixels = pixels.astype("float32")
    nonfinite = int(np.sum(~np.isfinite(pixels)))
    if nonfinite:
        raise ValueError(
            "`images` must hold finite pixel values (0..255). Received: images with "
            f"{nonfinite} NaN or infinite values"
        )
    low, high = PIXEL_RANGE
    smallest, largest = float(pixels.min()), float(pixels.max())
    if smallest < low or largest > high:
        raise ValueError(
            "`images` must hold pixel values in 0..255, as 8-bit images store them (uint8, or "
            f"float on that scale). Received: images with values from {smallest:g} to "
            f"{largest:g}"
        )
    if given_floats and 0.0 < largest <= 1.0:
        warnings.warn(
            f"{method}: every pixel of `images` is at most 1.0 (largest {largest:.3g}): this "
            "model reads raw pixels 0..255 and scales them itself, so images divided by 255 "
            "look nearly black to it. Pass `images * 255`.",
            stacklevel=3,
        )
    return pixels


def _shown(images):
    """` ('cat.jpg')` for a short string, else nothing."""
    return f" ({images!r})" if isinstance(images, str) and len(images) < 80 else ""
