"""Argument checks shared by the whole package.

Each raises a ValueError in the form "what was expected. Received: name=value".
This module imports nothing from the package, so every level may use it.
"""

import math
import numbers

# Raw pixels, as 8-bit images store them: what the image models and their SavedModels take.
PIXEL_RANGE = (0.0, 255.0)


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


def check_optional_finite_number(name, value, positive=False):
    """`check_finite_number` that also accepts None."""
    if value is not None:
        check_finite_number(name, value, positive)


def check_rate(name, value):
    """Raise a ValueError unless `value` is a number in [0, 1)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 <= value < 1:
        raise ValueError(f"`{name}` must be a float in [0, 1). Received: {name}={value!r}")


def check_bool(name, value):
    """Raise a ValueError unless `value` is True or False."""
    if not isinstance(value, bool):
        raise ValueError(f"`{name}` must be True or False. Received: {name}={value!r}")


def check_choice(name, value, choices):
    """Raise a ValueError unless `value` is one of `choices` (a tuple, named in the message).

    Example:

    >>> check_choice("merge", "add", (None, "add", "concat"))
    >>> check_choice("merge", "sum", (None, "add", "concat"))
    Traceback (most recent call last):
    ...
    ValueError: `merge` must be one of (None, 'add', 'concat'). Received: merge='sum'
    """
    if value not in choices:
        raise ValueError(f"`{name}` must be one of {choices}. Received: {name}={value!r}")


def check_seed(seed, name="seed"):
    """Raise a ValueError unless `seed` is None or an int."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)):
        raise ValueError(f"`{name}` must be an integer or None. Received: {name}={seed!r}")


def check_seed_argument(name, value):
    """`check_seed` in the `(name, value)` form of the other checks."""
    check_seed(value, name)


def keep_checked_arguments(obj, arguments, checks):
    """Check constructor arguments, then keep each as an attribute of the same name.

    Args:
        obj: the object under construction (a layer).
        arguments: the constructor's arguments by name (its `locals()`).
        checks: `{name: check}`: each is called as `check(name, value)` and
            raises a ValueError for a bad value (the checks of this module, or
            a `functools.partial` of one).

    Example:

    >>> import functools, types
    >>> from keras_attention.validation import check_positive_int, check_rate
    >>> checks = {"units": check_positive_int, "dropout": check_rate,
    ...           "width": functools.partial(check_positive_int, allow_none=True)}
    >>> layer = types.SimpleNamespace()
    >>> keep_checked_arguments(layer, {"units": 4, "dropout": 0.1, "width": None}, checks)
    >>> layer.units, kept_arguments(layer, checks)
    (4, {'units': 4, 'dropout': 0.1, 'width': None})
    >>> keep_checked_arguments(layer, {"units": 0, "dropout": 0.1, "width": None}, checks)
    Traceback (most recent call last):
    ...
    ValueError: `units` must be a positive integer. Received: units=0
    """
    for name, check in checks.items():
        check(name, arguments[name])
    for name in checks:
        setattr(obj, name, arguments[name])


def kept_arguments(obj, names):
    """`{name: obj.name}` for each of `names`: the kept arguments, for a `get_config`."""
    return {name: getattr(obj, name) for name in names}


def check_rank(name, shape, rank, layout):
    """Raise a ValueError unless `shape` has `rank` axes.

    `layout` names the axes in the message, e.g. "(batch, length, features)".
    """
    if len(shape) != rank:
        raise ValueError(f"`{name}` must be {layout}. Received: {name}.shape={tuple(shape)}")


def check_known_last_axes(**shapes):
    """Raise a ValueError unless the last axis of every shape, by argument name, is known."""
    for name, shape in shapes.items():
        if shape[-1] is None:
            raise ValueError(
                f"The last axis of `{name}` must be known to build the layer. "
                f"Received: {name}_shape={tuple(shape)}"
            )


def check_position_window(length, start_index, table_size, message):
    """Raise a ValueError unless positions `start_index .. start_index + length - 1` fit a table.

    The table has `table_size` rows. A length or start index not known yet
    (None, a tensor) passes; a start index that is a number but no integer
    (1.5, True) does not. `message` is formatted with `length`,
    `start_index` and `table_size`.
    """
    if isinstance(start_index, bool) or (
        isinstance(start_index, numbers.Real) and not isinstance(start_index, numbers.Integral)
    ):
        raise ValueError(
            "`start_index` must be an integer (or a scalar integer tensor), the position of the "
            f"first element. Received: start_index={start_index!r}"
        )
    if length is None or not isinstance(start_index, numbers.Integral):
        return
    if start_index < 0 or start_index + length > table_size:
        raise ValueError(
            message.format(length=length, start_index=start_index, table_size=table_size)
        )
