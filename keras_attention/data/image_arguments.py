"""Argument checks shared by the image dataset loaders."""

import numpy as np


def image_size_pair(image_size):
    """`image_size` as `(height, width)` of positive ints."""
    if isinstance(image_size, (int, np.integer)) and not isinstance(image_size, bool):
        pair = (int(image_size), int(image_size))
    elif isinstance(image_size, (tuple, list)) and len(image_size) == 2:
        pair = tuple(image_size)
    else:
        pair = None
    if pair is None or not all(
        isinstance(side, (int, np.integer)) and not isinstance(side, bool) and side > 0
        for side in pair
    ):
        raise ValueError(
            "`image_size` must be a positive int or a (height, width) pair of positive ints. "
            f"Received: image_size={image_size!r}"
        )
    return int(pair[0]), int(pair[1])


def check_split_fractions(validation_fraction, test_fraction):
    """Raise a ValueError unless both fractions are in [0, 1) and sum below 1."""
    fractions = {"validation_fraction": validation_fraction, "test_fraction": test_fraction}
    for name, value in fractions.items():
        if not 0.0 <= value < 1.0:
            raise ValueError(f"`{name}` must be in [0, 1). Received: {name}={value!r}")
    if validation_fraction + test_fraction >= 1.0:
        raise ValueError(
            "`validation_fraction + test_fraction` must be below 1. Received: "
            f"validation_fraction={validation_fraction!r}, test_fraction={test_fraction!r}"
        )
