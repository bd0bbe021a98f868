"""Checks and input handling that every multi-head attention layer shares.

`MultiHeadAttention` and `GroupQueryAttention` take the same `flash_attention`
switch, refuse keys and values of different batch or length alike, and hand
their projections mask-free inputs the same way.
"""

from keras import ops

from keras_attention.validation import check_bool


def check_flash_attention(flash_attention, implementation):
    """`flash_attention` is None or a bool that agrees with `implementation`.

    Args:
        flash_attention: None (follow `implementation`), True (the fused
            kernel) or False (never the fused kernel).
        implementation: the layer's kernel choice, as
            `keras_attention.ops.dot_product_attention` takes it.

    Raises:
        ValueError: naming the argument, when it is not None or a bool, or
            when it contradicts `implementation`.

    Example:

    >>> from keras_attention.layers.head_attention_checks import check_flash_attention
    >>> check_flash_attention(True, "auto")
    >>> check_flash_attention(True, "chunked")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: `flash_attention=True` needs implementation="auto" or "fused"...
    """
    if flash_attention is None:
        return
    check_bool("flash_attention", flash_attention)
    if flash_attention and implementation not in ("auto", "fused"):
        raise ValueError(
            '`flash_attention=True` needs implementation="auto" or "fused". '
            f"Received: implementation={implementation!r}"
        )
    if not flash_attention and implementation == "fused":
        raise ValueError(
            '`flash_attention=False` contradicts implementation="fused". '
            f"Received: flash_attention={flash_attention}"
        )


def check_key_value_shapes(key_shape, value_shape):
    """`key` and `value` agree on every axis but the last (their features may differ).

    Example:

    >>> from keras_attention.layers.head_attention_checks import check_key_value_shapes
    >>> check_key_value_shapes((None, 5, 8), (2, 5, 3))
    >>> check_key_value_shapes((2, 5, 8), (2, 4, 8))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: All dimensions of `key` and `value` except the last one must be equal...
    """
    same_rank = len(key_shape) == len(value_shape)
    if not same_rank or not all(
        sizes_match(k, v) for k, v in zip(key_shape[:-1], value_shape[:-1])
    ):
        raise ValueError(
            "All dimensions of `key` and `value` except the last one must be equal. "
            f"Received: key_shape={tuple(key_shape)}, value_shape={tuple(value_shape)}"
        )


def sizes_match(a, b):
    """Whether two axis sizes agree; an unknown size (None) agrees with any."""
    return a is None or b is None or a == b


def without_keras_mask(tensor):
    """`tensor` without the padding mask keras attaches to it.

    The attention layers turn an input's padding mask into an attention mask
    themselves; their projections do not support masking and would warn, so
    they get a mask-free alias.
    """
    if getattr(tensor, "_keras_mask", None) is None:
        return tensor
    return ops.copy(tensor)
