"""Argument checks shared by the whole package.

Each raises a ValueError in the form "what was expected. Received: name=value".
This module imports nothing from the package, so every level may use it.
"""

import math
import numbers


def check_positive_int(name, value, allow_none=False):
    """Raise a ValueError unless `value` is a positive int (or None if allowed)."""
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        expected = "a positive integer or None" if allow_none else "a positive integer"
        raise ValueError(f"`{name}` must be {expected}. Received: {name}={value!r}")


def check_non_negative_int(name, value):
    """Raise a ValueError unless `value` is an int >= 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(f"`{name}` must be an integer >= 0. Received: {name}={value!r}")


def check_finite_number(name, value, positive=False):
    """Raise a ValueError unless `value` is a finite number >= 0 (> 0 if `positive`)."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
        or value < 0
        or (positive and value == 0)
    ):
        expected = "a positive finite number" if positive else "a finite number >= 0"
        raise ValueError(f"`{name}` must be {expected}. Received: {name}={value!r}")


def check_rate(name, value):
    """Raise a ValueError unless `value` is a number in [0, 1)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 <= value < 1:
        raise ValueError(f"`{name}` must be a float in [0, 1). Received: {name}={value!r}")


def check_bool(name, value):
    """Raise a ValueError unless `value` is True or False."""
    if not isinstance(value, bool):
        raise ValueError(f"`{name}` must be True or False. Received: {name}={value!r}")


def check_seed(seed):
    """Raise a ValueError unless `seed` is None or an int."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)):
        raise ValueError(f"`seed` must be an integer or None. Received: seed={seed!r}")
