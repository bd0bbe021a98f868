"""Scaled dot-product attention with a choice of implementation."""

import math

import keras
from keras import ops

from keras_attention.ops.chunked_attention import chunked_attention
from keras_attention.ops.compilation import compiled_with_xla
from keras_attention.ops.hashed_dropout import hashed_dropout
from keras_attention.ops.masks import boolean_mask
from keras_attention.ops.query_scaling import scale_queries
from keras_attention.ops.softmax import MASKED_LOGIT
from keras_attention.ops.softmax import softmax_with_empty_rows
from keras_attention.ops.softmax import zero_empty_rows

IMPLEMENTATIONS = ("auto", "xla", "chunked", "fused")

# "auto" switches to the chunked kernel once one (Tq, Tk) score matrix per
# batch row and head would hold more than this many entries (64 MiB in float32).
_AUTO_CHUNKED_MIN_SCORES = 4096 * 4096
_CHUNK_SIZE = 512


def check_implementation(implementation):
    """Raise a ValueError unless `implementation` is one of IMPLEMENTATIONS."""
    if implementation not in IMPLEMENTATIONS:
        raise ValueError(
            f"`implementation` must be one of {IMPLEMENTATIONS}. "
            f"Received: implementation={implementation!r}"
        )


def _check_inputs(query, key, value):
    for name, tensor in (("query", query), ("key", key), ("value", value)):
        if len(tensor.shape) != 4:
            raise ValueError(
                f"`{name}` must be 4D (batch, length, heads, head_dim). "
                f"Received: {name}.shape={tuple(tensor.shape)}"
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
    mask = boolean_mask(mask)
    received_shape = tuple(mask.shape)
    rank = len(received_shape)
    if rank < 2 or rank > 4:
        raise ValueError(
            "`mask` must have rank 2 (Tq, Tk), 3 (B, Tq, Tk) or 4 (B, H, Tq, Tk). "
            f"Received: mask.shape={tuple(mask.shape)}"
        )
    if rank == 2:
        mask = mask[None, None]
    elif rank == 3:
        mask = mask[:, None]
    target = (query.shape[0], query.shape[2], query.shape[1], key.shape[1])
    for size, expected in zip(mask.shape, target):
        if size is not None and expected is not None and size not in (1, expected):
            raise ValueError(
                "`mask` must broadcast to the attention scores (batch, heads, "
                f"query_length, key_length) = {target}. "
                f"Received: mask.shape={received_shape}"
            )
    return ops.cast(mask, "bool")


def hide_unseen_rows(query, key, mask):
    """Zero the key rows no query may see, and the query rows that see no key.

    A hidden key's score is replaced before the softmax, but a NaN or inf in
    it could still reach a kernel that adds its mask (`-inf + NaN`) or the
    gradients. Values need no such step: `_finite_values` keeps every
    non-finite value from the queries that may not see it.

    Args:
        query, key: (B, T, H, D) tensors.
        mask: boolean, rank 4, broadcastable to (B, H, Tq, Tk).

    Returns:
        (query, key) with those rows set to 0.
    """
    # (mB, mH, mQ, mK) -> (mB, mK, mH, 1): is key k seen by any query?
    key_seen = ops.transpose(ops.any(mask, axis=2), (0, 2, 1))[..., None]
    key = ops.where(key_seen, key, ops.zeros_like(key))
    # (mB, mH, mQ, mK) -> (mB, mQ, mH, 1): does query q see any key?
    query_sees = ops.transpose(ops.any(mask, axis=3), (0, 2, 1))[..., None]
    query = ops.where(query_sees, query, ops.zeros_like(query))
    return query, key


def _causal(query_length, key_length):
    # Top-left aligned, as in keras.ops.dot_product_attention.
    rows = ops.arange(query_length, dtype="int32")[:, None]
    cols = ops.arange(key_length, dtype="int32")[None, :]
    return ops.greater_equal(rows, cols)[None, None]  # (1, 1, Tq, Tk)


def attention_weights(query, key, mask=None, is_causal=False, scale=None):
    """Softmax attention weights (B, H, Tq, Tk), float32, zero rows where all masked."""
    weights, sees_any_key = _weights_and_nonempty_rows(query, key, mask, is_causal, scale)
    return zero_empty_rows(weights, sees_any_key)


def _weights_and_nonempty_rows(query, key, mask, is_causal, scale):
    """Softmax weights whose fully masked rows are NOT yet zeroed, and which rows see a key.

    `sees_any_key` (mB, mH, Tq | 1, 1) is False on the rows whose every key
    is hidden, or None when no row can be empty; see `softmax_with_empty_rows`.
    """
    scale = _default_scale(query) if scale is None else scale
    logits = ops.einsum("bqhd,bkhd->bhqk", scale_queries(query, scale), key)  # (B, H, Tq, Tk)
    if is_causal:
        causal = _causal(ops.shape(query)[1], ops.shape(key)[1])
        mask = causal if mask is None else ops.logical_and(mask, causal)
    weights, sees_any_key = softmax_with_empty_rows(logits, mask)
    if is_causal and mask is causal:
        # Top-left causal alone hides no whole row: every query sees key 0.
        sees_any_key = None
    return weights, sees_any_key


def _default_scale(query):
    head_dim = query.shape[-1]
    if head_dim is None:
        raise ValueError(
            "`scale` is needed when the head_dim of `query` is unknown. "
            f"Received: query.shape={tuple(query.shape)}"
        )
    return 1.0 / math.sqrt(head_dim)


def dot_product_attention(
    query,
    key,
    value,
    mask=None,
    is_causal=False,
    scale=None,
    dropout_rate=0.0,
    training=False,
    return_weights=False,
    implementation="auto",
    seed=None,
):
    """Scaled dot-product attention, softmax(q k^T * scale) v, per head.

    Shapes follow `keras.ops.dot_product_attention`: heads on axis 2.

    Args:
        query: (batch, query_length, heads, head_dim).
        key: (batch, key_length, heads, head_dim).
        value: (batch, key_length, heads, value_dim).
        mask: optional boolean mask, True = may attend, broadcastable to
            (batch, heads, query_length, key_length) with NumPy rules: rank 2
            is (Tq, Tk), rank 3 is (B, Tq, Tk). Use `ops.key_padding_mask` to
            turn a (B, Tk) padding mask into (B, 1, 1, Tk).
        is_causal: query i sees keys 0..i only (top-left aligned).
        scale: multiplies the scores; defaults to 1 / sqrt(head_dim).
        dropout_rate: dropout on the attention weights when `training`.
        training: whether dropout is active.
        return_weights: also return the weights (batch, heads, Tq, Tk).
        implementation: "xla" materialises the scores; "chunked" walks over
            blocks of keys in O(length) extra memory with the same result;
            "fused" calls `keras.ops.dot_product_attention` (the backend's
            fused kernel where it has one); "auto" picks "chunked" for long
            sequences without dropout or weights, else "xla".
        seed: int or `keras.random.SeedGenerator` for dropout.

    A query whose every key is masked gets output 0 and weights 0 on every
    implementation and dtype. Keys and values hidden from a query never reach
    its output, even NaN or inf; a query that may see a non-finite value gets
    NaN. The softmax runs in float32.

    Returns:
        output (batch, query_length, heads, value_dim) in the dtype of
        `value`, and with `return_weights=True` also the weights in that dtype.

    Example:

    >>> import numpy as np
    >>> import keras_attention as ka
    >>> q = np.random.rand(2, 5, 4, 8).astype("float32")
    >>> kv = np.random.rand(2, 7, 4, 8).astype("float32")
    >>> out, w = ka.ops.dot_product_attention(q, kv, kv, return_weights=True)
    >>> tuple(out.shape), tuple(w.shape)
    ((2, 5, 4, 8), (2, 4, 5, 7))
    >>> chunked = ka.ops.dot_product_attention(q, kv, kv, implementation="chunked")
    >>> bool(np.allclose(out, chunked, atol=1e-6))
    True
    """
    check_implementation(implementation)
    if not isinstance(dropout_rate, (int, float)) or not 0.0 <= dropout_rate < 1.0:
        raise ValueError(
            f"`dropout_rate` must be a float in [0, 1). Received: dropout_rate={dropout_rate!r}"
        )
    query = ops.convert_to_tensor(query)
    key = ops.convert_to_tensor(key)
    value = ops.convert_to_tensor(value)
    _check_inputs(query, key, value)
    mask = normalize_mask(mask, query, key)
    if mask is not None:
        query, key = hide_unseen_rows(query, key, mask)
    value, nonfinite_value_rows = _finite_values(value, mask, is_causal)
    output = _attend(
        query,
        key,
        value,
        mask=mask,
        is_causal=is_causal,
        scale=scale,
        dropout_rate=dropout_rate,
        training=training,
        return_weights=return_weights,
        implementation=implementation,
        seed=seed,
    )
    if nonfinite_value_rows is None:
        return output
    if return_weights:
        output, weights = output
        return _restore_nonfinite(output, nonfinite_value_rows, mask, is_causal), weights
    return _restore_nonfinite(output, nonfinite_value_rows, mask, is_causal)


def _finite_values(value, mask, is_causal):
    """`value` with its non-finite entries set to 0, and which (B, Tk, H) rows had one.

    A key hidden from only some queries (causal attention, a (B, Tq, Tk)
    mask) keeps its value row, and a hidden weight of 0 times NaN is still
    NaN: the weighted sum runs over finite values, and `_restore_nonfinite`
    gives back NaN to the queries that may see a non-finite value. Without a
    mask nothing is hidden and the values are used as they are.
    """
    if mask is None and not is_causal:
        return value, None
    finite = ops.isfinite(value)
    nonfinite_rows = ops.logical_not(ops.all(finite, axis=-1))  # (B, Tk, H)
    return ops.where(finite, value, ops.zeros_like(value)), nonfinite_rows


def _restore_nonfinite(output, nonfinite_rows, mask, is_causal):
    """NaN on the output rows of the queries that may see a non-finite value row.

    Runs only when some value is non-finite, so the (B, H, Tq, Tk) mask it
    builds costs nothing on finite inputs.
    """

    def mark_rows():
        visible = mask
        if is_causal:
            causal = _causal(ops.shape(output)[1], ops.shape(nonfinite_rows)[1])
            visible = causal if visible is None else ops.logical_and(visible, causal)
        batch, query_length, heads = (ops.shape(output)[i] for i in range(3))
        key_length = ops.shape(nonfinite_rows)[1]
        visible = ops.broadcast_to(visible, (batch, heads, query_length, key_length))
        # (B, H, Tq, Tk) x (B, Tk, H) -> (B, Tq, H): how many non-finite rows each query sees
        seen = ops.einsum(
            "bhqk,bkh->bqh", ops.cast(visible, "float32"), ops.cast(nonfinite_rows, "float32")
        )
        sees_nonfinite = ops.greater(seen, 0.0)[..., None]  # (B, Tq, H, 1)
        return ops.where(sees_nonfinite, ops.full_like(output, float("nan")), output)

    return ops.cond(ops.any(nonfinite_rows), mark_rows, lambda: output)


def _attend(
    query,
    key,
    value,
    mask,
    is_causal,
    scale,
    dropout_rate,
    training,
    return_weights,
    implementation,
    seed,
):
    """The kernel `implementation` on checked inputs; see `dot_product_attention`."""
    scale = _default_scale(query) if scale is None else scale
    use_dropout = bool(training) and dropout_rate > 0.0

    if implementation == "auto":
        implementation = _choose_implementation(query, key, use_dropout, return_weights)
    if implementation == "chunked":
        if use_dropout:
            raise ValueError(
                'implementation="chunked" does not support dropout. '
                f"Received: dropout_rate={dropout_rate}, training={training}"
            )
        output = chunked_attention(query, key, value, mask, is_causal, scale, _CHUNK_SIZE)
        if not return_weights:
            return output
        weights = attention_weights(query, key, mask, is_causal, scale)
        return output, ops.cast(weights, value.dtype)
    if implementation == "fused":
        if use_dropout or return_weights:
            raise ValueError(
                'implementation="fused" can neither apply dropout nor return weights. '
                f"Received: dropout_rate={dropout_rate}, training={training}, "
                f"return_weights={return_weights}"
            )
        return _fused_attention(query, key, value, mask, is_causal, scale)

    # XLA fuses the deferred normalisation into fewer passes over the scores;
    # TensorFlow's graph executor is faster with its one-kernel softmax. In
    # float16 the unnormalised sum over Tk keys could pass 65504: normalise first.
    defer = compiled_with_xla() and keras.backend.standardize_dtype(value.dtype) != "float16"
    if return_weights or not defer:
        weights, sees_any_key = _weights_and_nonempty_rows(query, key, mask, is_causal, scale)
        weights = ops.cast(weights, value.dtype)
        dropped = hashed_dropout(weights, dropout_rate, seed) if use_dropout else weights
        output = ops.einsum("bhqk,bkhd->bqhd", dropped, value)  # (B, Tq, H, Dv)
    else:
        output, sees_any_key = _attend_then_normalize(
            query, key, value, mask, is_causal, scale, dropout_rate if use_dropout else 0.0, seed
        )
    if sees_any_key is not None:
        # Zero the rows that see no key on the output, (B, Tq, H, Dv), which is
        # Tk / Dv times smaller than the weights: (mB, mH, mQ, 1) -> (mB, mQ, mH, 1).
        output = output * ops.cast(ops.transpose(sees_any_key, (0, 2, 1, 3)), output.dtype)
    if not return_weights:
        return output
    return output, zero_empty_rows(weights, sees_any_key)


def _attend_then_normalize(query, key, value, mask, is_causal, scale, dropout_rate, seed):
    """softmax(l) v computed as (exp(l - max) v) / sum(exp(l - max)).

    Dividing the (B, Tq, H, Dv) output by the row sums instead of the
    (B, H, Tq, Tk) exponentials saves a pass over the scores forward and
    backward. Dropout commutes with the division (it scales elements, the
    sum scales rows), so it applies to the exponentials.
    """
    logits = ops.einsum("bqhd,bkhd->bhqk", scale_queries(query, scale), key)  # (B, H, Tq, Tk)
    logits = ops.cast(logits, "float32")
    if is_causal:
        causal = _causal(ops.shape(query)[1], ops.shape(key)[1])
        mask = causal if mask is None else ops.logical_and(mask, causal)
    sees_any_key = None
    if mask is not None:
        logits = ops.where(mask, logits, MASKED_LOGIT)
        if not (is_causal and mask is causal):  # top-left causal alone empties no row
            sees_any_key = ops.any(mask, axis=-1, keepdims=True)  # (mB, mH, Tq | 1, 1)
    row_max = ops.stop_gradient(ops.max(logits, axis=-1, keepdims=True))  # (B, H, Tq, 1)
    exponentials = ops.exp(logits - row_max)  # (B, H, Tq, Tk), in [0, 1]
    row_sum = ops.sum(exponentials, axis=-1, keepdims=True)  # (B, H, Tq, 1), >= 1
    exponentials = ops.cast(exponentials, value.dtype)
    if dropout_rate:
        exponentials = hashed_dropout(exponentials, dropout_rate, seed)
    output = ops.einsum("bhqk,bkhd->bqhd", exponentials, value)  # (B, Tq, H, Dv)
    # (B, H, Tq, 1) -> (B, Tq, H, 1)
    row_sum = ops.transpose(row_sum, (0, 2, 1, 3))
    return output / ops.cast(row_sum, output.dtype), sees_any_key


def kernel_for_call(implementation, return_weights, use_dropout):
    """The kernel that can serve a call of a layer set to `implementation`.

    `implementation` is what the layer was built with; `"auto"` is resolved
    per call by `dot_product_attention` itself.
    """
    # The fused kernel neither returns weights nor drops them out, the chunked
    # one does not drop out: materialise the scores then.
    if implementation == "fused" and (return_weights or use_dropout):
        return "xla"
    if implementation == "chunked" and use_dropout:
        return "xla"
    return implementation


def _choose_implementation(query, key, use_dropout, return_weights):
    if use_dropout or return_weights:
        return "xla"
    query_length, key_length = query.shape[1], key.shape[1]
    if query_length is None or key_length is None:
        return "xla"
    if query_length * key_length >= _AUTO_CHUNKED_MIN_SCORES:
        return "chunked"
    return "xla"


def _fused_attention(query, key, value, mask, is_causal, scale):
    output = ops.dot_product_attention(
        query, key, value, mask=mask, scale=scale, is_causal=is_causal
    )
    if mask is None:
        return output  # top-left causal or no mask: every query sees a key
    # keras spreads a fully masked row uniformly over the keys; make it 0.
    if is_causal:
        mask = ops.logical_and(mask, _causal(ops.shape(query)[1], ops.shape(key)[1]))
    sees_any_key = ops.any(mask, axis=-1)  # (mB, mH, Tq)
    # (mB, mH, Tq) -> (mB, Tq, mH, 1) to broadcast against (B, Tq, H, Dv)
    sees_any_key = ops.transpose(sees_any_key, (0, 2, 1))[..., None]
    return ops.where(sees_any_key, output, ops.zeros_like(output))
