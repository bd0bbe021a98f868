"""A warning for the most common image mistake: pixels scaled to 0..1 given to a 0..255 model.

The image models of this package read raw pixels, 0..255, and normalise
them inside. Images already divided by 255 (as many pipelines do) are
still valid numbers, so nothing fails: the model sees a nearly black
image and answers with confidence. Real images with no pixel above 1 of
255 are black, so a float batch whose largest value is above 0 and at
most 1 is named in a warning.

Example:

>>> import warnings
>>> import numpy as np
>>> from keras_attention.models.unit_scaled_pixels import warn_of_unit_scaled_pixels
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     warn_of_unit_scaled_pixels(np.full((1, 4, 4, 3), 0.5, "float32"), "classify")
>>> str(caught[0].message)[:62]
'classify: every pixel of `images` is at most 1.0 (largest 0.5)'
"""

import warnings

import numpy as np


def warn_of_unit_scaled_pixels(images, method):
    """Warns when a float batch of `images` holds no value above 1.

    Args:
        images: the pixels a Python method was given (an array or an eager
            tensor; a symbolic tensor is passed over).
        method: the method's name, for the message.
    """
    try:
        pixels = np.asarray(images)
    except Exception:  # a symbolic tensor: its values are not known here
        return
    if pixels.size == 0 or not np.issubdtype(pixels.dtype, np.floating):
        return
    largest = float(np.nanmax(pixels)) if not np.isnan(pixels).all() else None
    # 0 < largest <= 1: an all-black batch (largest 0) tells nothing of the scale.
    if largest is not None and 0.0 < largest <= 1.0 and float(np.nanmin(pixels)) >= 0.0:
        warnings.warn(
            f"{method}: every pixel of `images` is at most 1.0 (largest {largest:.3g}): this "
            "model reads raw pixels 0..255 and scales them itself, so images divided by 255 "
            "look nearly black to it. Pass `images * 255`.",
            stacklevel=3,
        )
