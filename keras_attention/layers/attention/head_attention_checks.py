"""Checks, argument rules and input handling that the multi-head attention layers share.

`MultiHeadAttention` and `GroupQueryAttention` take the same `flash_attention`
switch and `attention_bias`, refuse keys and values of different batch or
length alike, and hand their projections mask-free inputs the same way.
"""

import functools
import numbers

import numpy as np
from keras import ops
from keras.backend import standardize_dtype

from keras_attention.validation import check_bool
from keras_attention.validation import check_positive_int
from keras_attention.validation import check_rate
from keras_attention.validation import check_seed_argument

# The arguments of a self-attention layer's heads, with their checks, for
# `keep_checked_arguments`: a layer adds its own (`key_dim`, ...).
HEAD_ARGUMENTS = {
    "num_heads": check_positive_int,
    "value_dim": functools.partial(check_positive_int, allow_none=True),
    "dropout": check_rate,
    "use_bias": check_bool,
    "seed": check_seed_argument,
}


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

    >>> from keras_attention.layers.attention.head_attention_checks import check_flash_attention
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


def check_attention_bias(attention_bias, overridden=False):
    """`attention_bias` as a float tensor, or a ValueError naming it.

    Args:
        attention_bias: the call argument: a float tensor or array added to
            the attention scores.
        overridden: whether the layer's `_compute_attention` is a subclass
            override, which keeps keras' arguments and so cannot take a bias.

    Returns:
        the bias as a tensor of its own float dtype.

    Example:

    >>> import numpy as np
    >>> from keras_attention.layers.attention.head_attention_checks import check_attention_bias
    >>> tuple(check_attention_bias(np.zeros((1, 2, 3, 3), "float32")).shape)
    (1, 2, 3, 3)
    >>> check_attention_bias(np.ones((3, 3), bool))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: `attention_bias` must be a float tensor added to the attention scores...
    """
    if not hasattr(attention_bias, "dtype"):
        attention_bias = ops.convert_to_tensor(attention_bias)
    dtype = standardize_dtype(attention_bias.dtype)
    if "float" not in dtype:
        raise ValueError(
            "`attention_bias` must be a float tensor added to the attention scores (use "
            "`attention_mask` for a boolean mask). "
            f"Received: attention_bias.dtype={dtype}, "
            f"attention_bias.shape={tuple(attention_bias.shape)}"
        )
    if overridden:
        raise ValueError(
            "`attention_bias` is not handed to an overridden `_compute_attention`, which "
            "takes keras' arguments; add the bias inside the override instead. "
            f"Received: attention_bias.shape={tuple(attention_bias.shape)}"
        )
    return ops.convert_to_tensor(attention_bias)


def check_key_value_shapes(key_shape, value_shape):
    """`key` and `value` agree on every axis but the last (their features may differ).

    Example:

    >>> from keras_attention.layers.attention.head_attention_checks import check_key_value_shapes
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


def check_cache_update_index(cache_update_index, query_shape, cache_shape):
    """A Python `cache_update_index` is an int at which the query's positions fit in the cache.

    A tensor index (a decoding loop's) is not checked: its value is known
    only when it runs, where an index past the end would be clamped.

    Example:

    >>> check_cache_update_index(3, (2, 1, 16), (2, 2, 4, 2, 8))
    >>> check_cache_update_index(4, (2, 1, 16), (2, 2, 4, 2, 8))
    Traceback (most recent call last):
    ...
    ValueError: `cache_update_index` must be from 0 to 3: the cache holds 4 positions and \
the query writes 1 from there. Received: cache_update_index=4
    """
    if hasattr(cache_update_index, "shape") and not isinstance(cache_update_index, numbers.Number):
        return
    if isinstance(cache_update_index, bool) or not isinstance(cache_update_index, numbers.Integral):
        raise ValueError(
            "`cache_update_index` must be an integer, the position of the first query in the "
            f"cache. Received: cache_update_index={cache_update_index!r}"
        )
    query_length = query_shape[1] if len(query_shape) == 3 else None
    cache_length = cache_shape[2] if len(cache_shape) == 5 else None
    if query_length is None or cache_length is None:
        return
    last = cache_length - query_length
    if not 0 <= cache_update_index <= last:
        raise ValueError(
            f"`cache_update_index` must be from 0 to {last}: the cache holds {cache_length} "
            f"positions and the query writes {query_length} from there. "
            f"Received: cache_update_index={cache_update_index}"
        )


def check_padding_mask(mask, name, input_name, input_shape):
    """A padding mask has the shape of the input it pads, without the feature axis.

    Checked before the mask is laid out against the scores, where a
    swapped `query_mask` / `value_mask` would be named only by a shape the
    caller never built.

    Example:

    >>> import numpy as np
    >>> check_padding_mask(np.ones((2, 6), bool), "query_mask", "query", (2, 4, 16))
    Traceback (most recent call last):
    ...
    ValueError: `query_mask` must have the shape of `query` without its feature axis, (2, 4). \
Received: query_mask.shape=(2, 6)
    """
    shape = tuple(mask.shape) if hasattr(mask, "shape") else np.shape(mask)
    expected = tuple(input_shape)[:-1]
    if len(shape) != len(expected) or not all(map(sizes_match, shape, expected)):
        raise ValueError(
            f"`{name}` must have the shape of `{input_name}` without its feature axis, "
            f"{expected}. Received: {name}.shape={shape}"
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
