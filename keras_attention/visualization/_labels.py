"""Turning tokens, class names and titles into text a figure can show.

A generated caption or translation may hold control characters (an
untrained model's byte pieces: "\\x1f", "\\x7f"); fonts have no glyph for
them, so matplotlib would draw an empty box and warn once per character.
They are shown as their escapes instead.
"""

import unicodedata


def printable(text):
    """`text` with each control, format or unassigned character written as its escape.

    Example:

    >>> from keras_attention.visualization._labels import printable
    >>> printable("a cat\\x1f on\\x7f a mat"), printable("café")
    ('a cat\\\\x1f on\\\\x7f a mat', 'café')
    """
    return "".join(
        char.encode("unicode_escape").decode("ascii")
        if unicodedata.category(char).startswith("C")
        else char
        for char in text
    )


def as_labels(values, argument):
    """Tick labels from a sequence of strings, bytes or other values.

    Bytes (as `tf.strings` hands them back) are decoded as UTF-8; anything
    else goes through `str`; control characters are shown as escapes (`printable`).

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
        printable(
            value.decode("utf-8", errors="replace") if isinstance(value, bytes) else str(value)
        )
        for value in values
    ]
