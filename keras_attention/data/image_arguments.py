"""Argument checks shared by the image dataset loaders."""

import numpy as np


def int_pair(value):
    """An int `n` as `(n, n)`, a list or tuple of two ints as a tuple; None for anything else.

    Example:

    >>> int_pair(3), int_pair([2, 5]), int_pair((2, 5.0)), int_pair(True)
    ((3, 3), (2, 5), None, None)
    """

    def is_int(number):
        return isinstance(number, (int, np.integer)) and not isinstance(number, bool)

    if is_int(value):
        return int(value), int(value)
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(map(is_int, value)):
        return int(value[0]), int(value[1])
    return None


def image_size_pair(image_size):
    """`image_size` as `(height, width)` of positive ints."""
    pair = int_pair(image_size)
    if pair is None or min(pair) <= 0:
        raise ValueError(
            "`image_size` must be a positive int or a (height, width) pair of positive ints. "
            f"Received: image_size={image_size!r}"
        )
    return pair


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
