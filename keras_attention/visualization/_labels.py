"""Turning tokens and class names into tick labels."""


def as_labels(values, argument):
    """Tick labels from a sequence of strings, bytes or other values.

    Bytes (as `tf.strings` hands them back) are decoded as UTF-8; anything
    else goes through `str`.

    Args:
        values: a sequence (list, tuple, 1D array) of labels.
        argument: the argument name to use in error messages.

    Returns:
        A non-empty list of `str`.
    """
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise ValueError(
            f"Expected `{argument}` to be a sequence of strings, one per label. "
            f"Received: {argument}={values!r}"
        )
    if len(values) == 0:
        raise ValueError(
            f"Expected `{argument}` to hold at least one label. Received: {argument}={values!r}"
        )
    return [
        value.decode("utf-8", errors="replace") if isinstance(value, bytes) else str(value)
        for value in values
    ]
