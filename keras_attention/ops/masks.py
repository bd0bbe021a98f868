"""Boolean attention masks: True means "may attend".

Every mask here is a boolean tensor that broadcasts against attention scores
shaped `(batch, heads, query_length, key_length)`. Masks made from one sequence
(padding) are `(batch, length)`; masks made from positions (causal, sliding
window) are `(query_length, key_length)`. `merge_masks` combines any of them.

Every layer and op takes masks under one rule:

- dtype: boolean, True = may attend. Integer masks are read exactly as
  `mask != 0` (what tokenizers' 0/1 attention masks mean). Float masks are
  refused: an additive mask (0 = attend, -1e9 = hide) read as boolean would
  be inverted. Convert it with `mask == 0` (additive) or `mask > 0.5` (0/1).
- rank: a padding mask is `(batch, length)` (a feature map's is
  `(batch, height, width)`); an attention mask broadcasts against the
  scores with NumPy rules: rank 2 is `(Tq, Tk)`, rank 3 `(B, Tq, Tk)` and
  rank 4 `(B, H, Tq, Tk)`.

Example:

>>> import keras_attention as ka
>>> ka.ops.causal_mask(3).numpy().astype(int).tolist()
[[1, 0, 0], [1, 1, 0], [1, 1, 1]]
>>> ka.ops.causal_mask(1, 4, offset=2).numpy().astype(int).tolist()
[[1, 1, 1, 0]]
"""

from keras import ops
from keras.backend import standardize_dtype

from keras_attention.validation import check_non_negative_int

# The token id that pads sequences, in every tokenizer and model of the package.
PADDING_ID = 0


def _check_length(name, value):
    """A length or offset: an int >= 0, or a tensor (checked when it runs)."""
    if hasattr(value, "dtype") and not isinstance(value, bool):
        return
    check_non_negative_int(name, value)


def boolean_mask(mask, name="mask"):
    """`mask` as a boolean tensor, refusing float masks (see the module docstring).

    Args:
        mask: a boolean or integer tensor or array (integers: nonzero = True).
        name: the argument's name, for the error message.

    Returns:
        a boolean tensor of the same shape.

    Example:

    >>> import numpy as np
    >>> boolean_mask(np.array([1, 0, 2])).numpy().tolist()
    [True, False, True]
    >>> boolean_mask(np.array([0.0, -1e9]))
    Traceback (most recent call last):
    ...
    ValueError: `mask` must be boolean (True = may attend)...
    """
    if not hasattr(mask, "dtype"):
        mask = ops.convert_to_tensor(mask)
    dtype = standardize_dtype(mask.dtype)
    if dtype == "bool":
        return ops.cast(mask, "bool")
    if "float" in dtype or "complex" in dtype:
        raise ValueError(
            f"`{name}` must be boolean (True = may attend) or integer (nonzero = may attend). "
            f"Received: {name}.dtype={dtype}. A float mask is ambiguous: convert an additive "
            f"mask (0 = attend, -1e9 = hide) with `{name} == 0` and a 0/1 mask with "
            f"`{name} > 0.5`."
        )
    return ops.not_equal(mask, 0)


def relative_positions(query_length, key_length, offset=0):
    """`(query_length, key_length)` int32 matrix of query position minus key position.

    Query `i` is at position `offset + i`, key `j` at `j`: the distance that
    causal and sliding-window masks and relative position biases are made of.

    Args:
        query_length: number of queries (int or scalar tensor).
        key_length: number of keys (int or scalar tensor).
        offset: absolute position of the first query (int or scalar tensor).

    Example:

    >>> import numpy as np
    >>> from keras_attention.ops.masks import relative_positions
    >>> np.asarray(relative_positions(2, 4, offset=1)).tolist()
    [[1, 0, -1, -2], [2, 1, 0, -1]]
    """
    for name, value in (("query_length", query_length), ("key_length", key_length)):
        _check_length(name, value)
    _check_length("offset", offset)
    query_positions = ops.arange(query_length, dtype="int32") + ops.cast(offset, "int32")
    key_positions = ops.arange(key_length, dtype="int32")
    return query_positions[:, None] - key_positions[None, :]  # (Tq, 1) - (1, Tk)


def causal_mask(query_length, key_length=None, offset=0):
    """Lower-triangular mask: query `i` sees keys `0 .. offset + i`.

    `offset` is the absolute position of the first query, which is what a
    decoder needs when it runs one token at a time against a key/value cache:
    the query at cache index `p` is called with `query_length=1, offset=p`.

    Args:
        query_length: number of queries (int or scalar tensor).
        key_length: number of keys; defaults to `offset + query_length`.
        offset: absolute position of the first query (int or scalar tensor).

    Returns:
        bool tensor `(query_length, key_length)`.
    """
    _check_length("query_length", query_length)
    _check_length("offset", offset)
    if key_length is None:
        key_length = query_length + offset
    _check_length("key_length", key_length)
    return ops.greater_equal(relative_positions(query_length, key_length, offset), 0)


def sliding_window_mask(query_length, key_length=None, window=None, offset=0, causal=True):
    """Local attention: query at position p sees keys with |p - k| < window.

    With `causal=True` (the default) only keys `p - window + 1 .. p` are visible,
    as in Longformer/Mistral-style causal local attention.

    Returns:
        bool tensor `(query_length, key_length)`.
    """
    if isinstance(window, bool) or not isinstance(window, int) or window <= 0:
        raise ValueError(f"`window` must be a positive integer. Received: window={window!r}")
    _check_length("query_length", query_length)
    _check_length("offset", offset)
    if key_length is None:
        key_length = query_length + offset
    distance = relative_positions(query_length, key_length, offset)
    mask = ops.less(ops.abs(distance), window)
    if causal:
        mask = ops.logical_and(mask, ops.greater_equal(distance, 0))
    return mask


def padding_mask_from_lengths(lengths, max_length):
    """`(batch, max_length)` mask with the first `lengths[b]` positions True."""
    _check_length("max_length", max_length)
    lengths = ops.convert_to_tensor(lengths)
    if len(lengths.shape) != 1:
        raise ValueError(
            "`lengths` must be a 1D tensor of sequence lengths (batch,). "
            f"Received: lengths.shape={tuple(lengths.shape)}"
        )
    dtype = standardize_dtype(lengths.dtype)
    if "int" not in dtype:  # 1.5 positions would be cut to 1 without a word
        raise ValueError(
            f"`lengths` must hold integers, counts of positions. Received: lengths.dtype={dtype}"
        )
    positions = ops.arange(max_length, dtype="int32")
    # (1, T) < (B, 1) -> (B, T)
    return ops.less(positions[None, :], ops.cast(lengths, "int32")[:, None])


def padding_mask_from_ids(token_ids, padding_id=PADDING_ID):
    """`(batch, length)` mask that is False where `token_ids == padding_id`."""
    token_ids = ops.convert_to_tensor(token_ids)
    if len(token_ids.shape) < 1:
        raise ValueError(
            "`token_ids` must have at least one dimension. "
            f"Received: token_ids.shape={tuple(token_ids.shape)}"
        )
    return ops.not_equal(token_ids, ops.cast(padding_id, token_ids.dtype))


def key_padding_mask(key_mask):
    """Turn a `(batch, key_length)` padding mask into `(batch, 1, 1, key_length)`.

    The result broadcasts over heads and queries of `(B, H, Tq, Tk)` scores.
    """
    key_mask = boolean_mask(key_mask, "key_mask")
    if len(key_mask.shape) != 2:
        raise ValueError(
            "`key_mask` must be a (batch, key_length) mask. "
            f"Received: key_mask.shape={tuple(key_mask.shape)}"
        )
    return key_mask[:, None, None, :]


def query_key_mask(query_mask=None, key_mask=None):
    """`(batch, query_length, key_length)` mask from per-sequence padding masks.

    A query position that is padding attends to nothing; a key position that
    is padding is seen by no one. Either argument may be None.
    """
    mask = None
    if query_mask is not None:
        mask = boolean_mask(query_mask, "query_mask")[:, :, None]  # (B, Tq, 1)
    if key_mask is not None:
        key = boolean_mask(key_mask, "key_mask")[:, None, :]  # (B, 1, Tk)
        mask = key if mask is None else ops.logical_and(mask, key)
    return mask


def merge_masks(*masks):
    """Logical AND of the given masks, skipping `None`; None if all are None.

    The masks must broadcast against one another, e.g. a `(B, Tq, Tk)` padding
    mask with a `(Tq, Tk)` causal mask.
    """
    merged = None
    for mask in masks:
        if mask is None:
            continue
        mask = boolean_mask(mask)
        if merged is None:
            merged = mask
            continue
        if not _broadcastable(merged.shape, mask.shape):
            raise ValueError(
                "Masks must broadcast against one another. Received masks of "
                f"shapes {tuple(merged.shape)} and {tuple(mask.shape)}"
            )
        merged = ops.logical_and(merged, mask)
    return merged


def _broadcastable(shape_a, shape_b):
    for a, b in zip(reversed(tuple(shape_a)), reversed(tuple(shape_b))):
        if a is None or b is None or a == 1 or b == 1 or a == b:
            continue
        return False
    return True
