"""The argument checks of the attention ops: their tensors, masks, biases and scale.

`dot_product_attention`, `attention_weights` and `chunked_attention` all
take query, key and value as (B, T, H, D) float tensors, a boolean mask and
a float bias of rank 2 (Tq, Tk), 3 (B, Tq, Tk) or 4 (B, H, Tq, Tk), and a
scale; each checks them here, so that a float (additive) mask or integer
inputs are refused by every one of them rather than read wrongly by some.

Example:

>>> import numpy as np
>>> from keras_attention.ops.attention_arguments import normalize_mask
>>> q = np.zeros((1, 2, 1, 4), "float32")
>>> tuple(normalize_mask(np.array([[1, 0], [1, 1]]), q, q).shape)
(1, 1, 2, 2)
>>> normalize_mask(np.array([[0.0, -1e9], [0.0, 0.0]]), q, q)
Traceback (most recent call last):
...
ValueError: `mask` must be boolean (True = may attend) or integer (nonzero = may attend)...
"""

import math
import numbers

import keras
from keras import ops

from keras_attention.ops.masks import boolean_mask


def check_attention_inputs(query, key, value):
    """Raise a ValueError unless query, key and value are float (B, T, H, D) tensors that fit."""
    for name, tensor in (("query", query), ("key", key), ("value", value)):
        if len(tensor.shape) != 4:
            raise ValueError(
                f"`{name}` must be 4D (batch, length, heads, head_dim). "
                f"Received: {name}.shape={tuple(tensor.shape)}"
            )
        dtype = keras.backend.standardize_dtype(tensor.dtype)
        if "float" not in dtype:  # integer scores would be cut to integer weights
            raise ValueError(
                f"`{name}` must be a float tensor. Received: {name}.dtype={dtype}; "
                f"cast it first, e.g. keras.ops.cast({name}, 'float32')"
            )
    if not _dims_match(query.shape[-1], key.shape[-1]):
        raise ValueError(
            "`query` and `key` must have the same head_dim (last axis). "
            f"Received: query.shape={tuple(query.shape)}, key.shape={tuple(key.shape)}"
        )
    if not _dims_match(key.shape[1], value.shape[1]):
        raise ValueError(
            "`key` and `value` must have the same length (axis 1). "
            f"Received: key.shape={tuple(key.shape)}, value.shape={tuple(value.shape)}"
        )
    for axis, axis_name in ((0, "batch"), (2, "heads")):
        sizes = {t.shape[axis] for t in (query, key, value)} - {None}
        if len(sizes) > 1:
            raise ValueError(
                f"`query`, `key` and `value` must have the same {axis_name} size "
                f"(axis {axis}). Received: query.shape={tuple(query.shape)}, "
                f"key.shape={tuple(key.shape)}, value.shape={tuple(value.shape)}"
            )


def _dims_match(a, b):
    return a is None or b is None or a == b


def normalize_mask(mask, query, key):
    """Bring a boolean mask to rank 4 broadcastable to (B, H, Tq, Tk).

    Masks follow NumPy broadcasting against the (B, H, Tq, Tk) scores: a rank-2
    mask is (Tq, Tk), rank 3 is (B, Tq, Tk) and rank 4 is (B, H, Tq, Tk).
    """
    if mask is None:
        return None
    return ops.cast(_scores_rank(boolean_mask(mask), "mask", query, key), "bool")


def normalize_bias(bias, query, key):
    """Bring a float bias to rank 4 broadcastable to (B, H, Tq, Tk), keeping its dtype.

    A bias has the ranks of a mask: rank 2 is (Tq, Tk), rank 3 (B, Tq, Tk) and
    rank 4 (B, H, Tq, Tk); axes of size 1 stay size 1 (nothing is broadcast).
    """
    if bias is None:
        return None
    if not hasattr(bias, "dtype"):
        bias = ops.convert_to_tensor(bias)
    dtype = keras.backend.standardize_dtype(bias.dtype)
    if "float" not in dtype:
        raise ValueError(
            "`bias` must be a float tensor added to the scores. "
            f"Received: bias.dtype={dtype}, bias.shape={tuple(bias.shape)}"
        )
    return _scores_rank(ops.convert_to_tensor(bias), "bias", query, key)


def _scores_rank(tensor, name, query, key):
    """`tensor` of rank 2, 3 or 4 as rank 4 against the (B, H, Tq, Tk) scores, checked."""
    received_shape = tuple(tensor.shape)
    rank = len(received_shape)
    if rank < 2 or rank > 4:
        raise ValueError(
            f"`{name}` must have rank 2 (Tq, Tk), 3 (B, Tq, Tk) or 4 (B, H, Tq, Tk). "
            f"Received: {name}.shape={received_shape}"
        )
    if rank == 2:
        tensor = tensor[None, None]
    elif rank == 3:
        tensor = tensor[:, None]
    target = (query.shape[0], query.shape[2], query.shape[1], key.shape[1])
    for size, expected in zip(tensor.shape, target):
        if size is not None and expected is not None and size not in (1, expected):
            raise ValueError(
                f"`{name}` must broadcast to the attention scores (batch, heads, "
                f"query_length, key_length) = {target}. "
                f"Received: {name}.shape={received_shape}"
            )
    return tensor


def check_scale(scale):
    """Raise a ValueError unless `scale` is None, a finite number, or a tensor.

    Example:

    >>> check_scale(0.125)
    >>> check_scale(float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: `scale` must be a finite number multiplying the scores, or None for \
1 / sqrt(head_dim). Received: scale=nan
    """
    if scale is None or (hasattr(scale, "shape") and not isinstance(scale, numbers.Number)):
        return  # a tensor: its value is known when it runs
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real) or not math.isfinite(scale):
        raise ValueError(
            "`scale` must be a finite number multiplying the scores, or None for "
            f"1 / sqrt(head_dim). Received: scale={scale!r}"
        )


def default_scale(query):
    """1 / sqrt(head_dim), the scale of the scores when none is given.

    Example:

    >>> import numpy as np
    >>> default_scale(np.zeros((1, 2, 1, 16)))
    0.25
    """
    head_dim = query.shape[-1]
    if head_dim is None:
        raise ValueError(
            "`scale` is needed when the head_dim of `query` is unknown. "
            f"Received: query.shape={tuple(query.shape)}"
        )
    return 1.0 / math.sqrt(head_dim)
