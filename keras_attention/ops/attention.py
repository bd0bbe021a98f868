"""Scaled dot-product attention with a choice of implementation."""

import keras
from keras import ops

from keras_attention.ops.attention_arguments import check_attention_inputs
from keras_attention.ops.attention_arguments import check_scale
from keras_attention.ops.attention_arguments import default_scale
from keras_attention.ops.attention_arguments import normalize_bias
from keras_attention.ops.attention_arguments import normalize_mask
from keras_attention.ops.chunked_attention import chunked_attention
from keras_attention.ops.compilation import compiled_with_xla
from keras_attention.ops.hashed_dropout import hashed_dropout
from keras_attention.ops.masks import merge_masks
from keras_attention.ops.masks import sliding_window_mask
from keras_attention.ops.query_scaling import scale_queries
from keras_attention.ops.single_query_attention import single_query_attention
from keras_attention.ops.softmax import MASKED_LOGIT
from keras_attention.ops.softmax import softmax_with_empty_rows
from keras_attention.ops.softmax import zero_empty_rows
from keras_attention.validation import check_choice
from keras_attention.validation import check_positive_int
from keras_attention.validation import check_rate

IMPLEMENTATIONS = ("auto", "xla", "chunked", "fused")

# "auto" switches to the chunked kernel once one (Tq, Tk) score matrix per
# batch row and head would hold more than this many entries (64 MiB in float32).
_AUTO_CHUNKED_MIN_SCORES = 4096 * 4096
_CHUNK_SIZE = 512


def check_implementation(implementation):
    """Raise a ValueError unless `implementation` is one of IMPLEMENTATIONS."""
    check_choice("implementation", implementation, IMPLEMENTATIONS)


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


def _positions_mask(query_length, key_length, is_causal, sliding_window):
    """(1, 1, Tq, Tk) mask of causality and the sliding window; None when neither applies."""
    if sliding_window is not None:
        band = sliding_window_mask(
            query_length, key_length, window=sliding_window, causal=is_causal
        )
        return band[None, None]
    if is_causal:
        return _causal(query_length, key_length)
    return None


def attention_weights(
    query, key, mask=None, is_causal=False, scale=None, bias=None, sliding_window=None
):
    """Softmax attention weights (B, H, Tq, Tk), float32, zero rows where all masked.

    `query` and `key` are (B, T, H, D) float tensors; `mask` (boolean) and
    `bias` (float) have the ranks `dot_product_attention` takes (see
    `normalize_mask`, `normalize_bias`).

    Example:

    >>> import numpy as np
    >>> q = np.random.rand(1, 2, 1, 4).astype("float32")
    >>> weights = attention_weights(q, q, mask=np.array([[True, False], [False, False]]))
    >>> np.round(np.asarray(weights), 2).tolist()
    [[[[1.0, 0.0], [0.0, 0.0]]]]
    """
    query, key = ops.convert_to_tensor(query), ops.convert_to_tensor(key)
    check_attention_inputs(query, key, key)
    check_scale(scale)
    check_positive_int("sliding_window", sliding_window, allow_none=True)
    mask = normalize_mask(mask, query, key)
    bias = normalize_bias(bias, query, key)
    if sliding_window is not None:
        band = _positions_mask(ops.shape(query)[1], ops.shape(key)[1], is_causal, sliding_window)
        mask = band if mask is None else ops.logical_and(mask, band)
    weights, sees_any_key = _weights_and_nonempty_rows(query, key, mask, is_causal, scale, bias)
    return zero_empty_rows(weights, sees_any_key)


def keys_the_bias_allows(mask, bias):
    """`mask` and-ed with the keys whose bias does not rule them out (None: no mask, no bias).

    A -inf bias means "may not attend": such a key is hidden like a masked
    one, and a query whose every key is masked or biased out is an empty row
    (output 0, weights 0) instead of the NaN of `softmax([-inf, ...])`. Any
    bias below `MASKED_LOGIT` counts as -inf: the chunked kernel, whose running
    maximum starts there, gives such keys no weight either. A NaN bias is
    not ruled out, so that it reaches the output.

    Args:
        mask: None or a rank-4 boolean mask.
        bias: None or a rank-4 float bias.

    Returns:
        a rank-4 boolean mask broadcastable to both, or `mask` when `bias` is None.

    Example:

    >>> import numpy as np
    >>> bias = np.array([[[[0.0, -np.inf], [-np.inf, -np.inf]]]], "float32")
    >>> np.asarray(keys_the_bias_allows(None, bias)).astype(int).tolist()
    [[[[1, 0], [0, 0]]]]
    """
    if bias is None:
        return mask
    ruled_out = ops.less(ops.cast(bias, "float32"), MASKED_LOGIT)
    allowed = ops.logical_not(ruled_out)
    return allowed if mask is None else ops.logical_and(mask, allowed)


def _biased_logits(query, key, scale, bias):
    """q k^T * scale (+ bias) as (B, H, Tq, Tk); float32 when there is a bias."""
    logits = ops.einsum("bqhd,bkhd->bhqk", scale_queries(query, scale), key)  # (B, H, Tq, Tk)
    if bias is None:
        return logits
    return ops.cast(logits, "float32") + ops.cast(bias, "float32")


def _weights_and_nonempty_rows(query, key, mask, is_causal, scale, bias=None):
    """Softmax weights whose fully masked rows are NOT yet zeroed, and which rows see a key.

    `sees_any_key` (mB, mH, Tq | 1, 1) is False on the rows whose every key
    is hidden, or None when no row can be empty; see `softmax_with_empty_rows`.
    """
    scale = default_scale(query) if scale is None else scale
    logits = _biased_logits(query, key, scale, bias)
    mask = keys_the_bias_allows(mask, bias)
    if is_causal:
        causal = _causal(ops.shape(query)[1], ops.shape(key)[1])
        mask = causal if mask is None else ops.logical_and(mask, causal)
    weights, sees_any_key = softmax_with_empty_rows(logits, mask)
    if is_causal and mask is causal:
        # Top-left causal alone hides no whole row: every query sees key 0.
        sees_any_key = None
    return weights, sees_any_key


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
    bias=None,
    sliding_window=None,
):
    """Scaled dot-product attention, softmax(q k^T * scale + bias) v, per head.

    Shapes follow `keras.ops.dot_product_attention`: heads on axis 2. (One
    function on purpose: the public contract of every kernel is documented
    here, hence the length; the body only checks and prepares the inputs,
    and `_attend` runs the kernel.)

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
            fused kernel where it has one); "auto" picks "fused" where it
            runs as cuDNN flash attention (JAX on a GPU, float16/bfloat16,
            no mask or bias, no dropout or weights), else "chunked" for long
            sequences without dropout or weights, else "xla". With one
            query position (a decoding step) "xla" and "chunked" compute
            in the layout of the keys, without transposing them
            (`single_query_attention`).
        seed: int or `keras.random.SeedGenerator` for dropout.
        bias: optional float tensor added to the scaled scores before the
            mask (relative position biases, ALiBi), with the ranks of `mask`:
            (Tq, Tk), (B, Tq, Tk) or (B, H, Tq, Tk), any axis of size 1. A
            masked position stays masked whatever its bias, and a -inf bias
            hides a key like the mask (see below); gradients flow into the
            bias. The "chunked" kernel reads it tile by tile, so a
            (1, H, 1, Tk) bias is never broadcast to (B, H, Tq, Tk).
        sliding_window: optional positive int `w`: query p sees only the keys
            k with |p - k| < w, or p - w < k <= p with `is_causal`, positions
            counted from 0 for queries and keys alike (top-left aligned), the
            rule of `ops.sliding_window_mask(Tq, Tk, window=w,
            causal=is_causal)`; combined with `mask`. The "chunked" kernel
            visits only the tiles of the band, in O(length * w) time; the
            others apply it as a mask.

    A query whose every key is masked gets output 0 and weights 0 on every
    implementation and dtype. A -inf `bias` means "may not attend" (as does
    any bias below -1e30): such a key gets weight 0, and a query whose every
    key is masked or biased to -inf is such an empty row too, output 0 and
    weights 0 with finite gradients, never NaN. Keys and values hidden from a query never reach
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

    A bias per head and key (1, H, 1, Tk), and a causal window of 3 keys:

    >>> slopes = np.array([1.0, 0.5, 0.25, 0.125], "float32")[None, :, None, None]
    >>> bias = -slopes * np.arange(7, dtype="float32")  # (1, 4, 1, 7)
    >>> banded = ka.ops.dot_product_attention(
    ...     q, kv, kv, bias=bias, is_causal=True, sliding_window=3, implementation="chunked")
    >>> window = ka.ops.sliding_window_mask(5, 7, window=3, causal=True)
    >>> masked = ka.ops.dot_product_attention(
    ...     q, kv, kv, bias=bias, mask=window, implementation="xla")
    >>> bool(np.allclose(banded, masked, atol=1e-6))
    True
    """
    check_implementation(implementation)
    check_rate("dropout_rate", dropout_rate)
    check_positive_int("sliding_window", sliding_window, allow_none=True)
    query = ops.convert_to_tensor(query)
    key = ops.convert_to_tensor(key)
    value = ops.convert_to_tensor(value)
    check_attention_inputs(query, key, value)
    check_scale(scale)
    mask = normalize_mask(mask, query, key)
    bias = normalize_bias(bias, query, key)
    use_dropout = bool(training) and dropout_rate > 0.0
    if implementation == "auto":
        implementation = _choose_implementation(
            query, key, value, mask, bias, sliding_window, use_dropout, return_weights
        )
    if query.shape[1] == 1 and implementation in ("xla", "chunked") and not use_dropout:
        # A decoding step: one query over the whole cache, read in place.
        positions = _positions_mask(1, ops.shape(key)[1], is_causal, sliding_window)
        mask = keys_the_bias_allows(merge_masks(mask, positions), bias)
        scale = default_scale(query) if scale is None else scale
        return single_query_attention(query, key, value, mask, scale, bias, return_weights)
    if sliding_window is not None and implementation != "chunked":
        # Only the chunked kernel walks the band; the others mask the scores.
        band = _positions_mask(ops.shape(query)[1], ops.shape(key)[1], is_causal, sliding_window)
        mask = band if mask is None else ops.logical_and(mask, band)
        sliding_window = None
    if mask is not None:
        query, key = hide_unseen_rows(query, key, mask)
    if sliding_window is not None:
        query, key = _hide_rows_outside_band(query, key, is_causal, sliding_window)
    hides_keys = mask is not None or is_causal or sliding_window is not None
    value, nonfinite_value_rows = _finite_values(value, hides_keys)
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
        bias=bias,
        sliding_window=sliding_window,
    )
    if nonfinite_value_rows is None:
        return output
    restore = (nonfinite_value_rows, mask, is_causal, sliding_window)
    if return_weights:
        output, weights = output
        return _restore_nonfinite(output, *restore), weights
    return _restore_nonfinite(output, *restore)


def _hide_rows_outside_band(query, key, is_causal, sliding_window):
    """Zero the query rows that no key of the band reaches, and the keys no query sees.

    Query p sees a key iff p < Tk + w - 1; key k is seen iff k < Tq + w - 1,
    or k < Tq when causal. Nothing to do (the usual case) when the lengths
    say so statically; see `hide_unseen_rows` for why.
    """
    query_length, key_length = query.shape[1], key.shape[1]
    key_reach = 0 if is_causal else sliding_window - 1
    if query_length is not None and key_length is not None:
        if query_length < key_length + sliding_window and key_length <= query_length + key_reach:
            return query, key
    query_length, key_length = ops.shape(query)[1], ops.shape(key)[1]
    # (Tq,) -> (1, Tq, 1, 1) against (B, Tq, H, D)
    query_sees = ops.arange(query_length, dtype="int32") < key_length + sliding_window - 1
    query = ops.where(query_sees[None, :, None, None], query, ops.zeros_like(query))
    key_seen = ops.arange(key_length, dtype="int32") < query_length + key_reach
    key = ops.where(key_seen[None, :, None, None], key, ops.zeros_like(key))
    return query, key


def _finite_values(value, hides_keys):
    """`value` with its non-finite entries set to 0, and which (B, Tk, H) rows had one.

    A key hidden from only some queries (causal attention, a (B, Tq, Tk)
    mask) keeps its value row, and a hidden weight of 0 times NaN is still
    NaN: the weighted sum runs over finite values, and `_restore_nonfinite`
    gives back NaN to the queries that may see a non-finite value. When
    nothing hides a key the values are used as they are.
    """
    if not hides_keys:
        return value, None
    finite = ops.isfinite(value)
    nonfinite_rows = ops.logical_not(ops.all(finite, axis=-1))  # (B, Tk, H)
    return ops.where(finite, value, ops.zeros_like(value)), nonfinite_rows


def _restore_nonfinite(output, nonfinite_rows, mask, is_causal, sliding_window):
    """NaN on the output rows of the queries that may see a non-finite value row.

    Only runs its branch when some value is non-finite, but XLA allocates the
    branch's buffers either way: with causality, a window or a per-key mask
    the count below needs only (B, Tk, H) prefix sums, never (B, H, Tq, Tk).
    """

    def mark_rows():
        query_length = ops.shape(output)[1]
        if mask is None or mask.shape[2] == 1:
            seen = _nonfinite_rows_in_reach(
                nonfinite_rows, mask, query_length, is_causal, sliding_window
            )
        else:
            seen = _nonfinite_rows_seen(
                nonfinite_rows, mask, query_length, is_causal, sliding_window
            )
        sees_nonfinite = ops.greater(seen, 0)[..., None]  # (B, Tq, H, 1)
        return ops.where(sees_nonfinite, ops.full_like(output, float("nan")), output)

    return ops.cond(ops.any(nonfinite_rows), mark_rows, lambda: output)


def _nonfinite_rows_seen(nonfinite_rows, mask, query_length, is_causal, sliding_window):
    """(B, Tq, H) count of non-finite rows each query sees, through a (.., Tq, Tk) mask."""
    batch, key_length, heads = (ops.shape(nonfinite_rows)[i] for i in range(3))
    visible = mask
    positions = _positions_mask(query_length, key_length, is_causal, sliding_window)
    if positions is not None:
        visible = ops.logical_and(visible, positions)
    visible = ops.broadcast_to(visible, (batch, heads, query_length, key_length))
    # (B, H, Tq, Tk) x (B, Tk, H) -> (B, Tq, H)
    return ops.einsum(
        "bhqk,bkh->bqh", ops.cast(visible, "float32"), ops.cast(nonfinite_rows, "float32")
    )


def _nonfinite_rows_in_reach(nonfinite_rows, key_mask, query_length, is_causal, sliding_window):
    """(B, Tq, H) count of non-finite rows among the keys query q reaches.

    Query q reaches the keys lo(q)..hi(q): all of them, 0..q when causal,
    q - w + 1 .. q + w - 1 (or .. q) with a window of w. `key_mask`
    (mB, mH, 1, Tk), when given, hides keys from every query alike. The
    count is a difference of prefix sums over the keys.
    """
    rows = nonfinite_rows
    if key_mask is not None:
        # (mB, mH, 1, Tk) -> (mB, Tk, mH) against (B, Tk, H)
        rows = ops.logical_and(rows, ops.transpose(key_mask[:, :, 0, :], (0, 2, 1)))
    rows = ops.cast(rows, "int32")
    if not is_causal and sliding_window is None:
        return ops.sum(rows, axis=1, keepdims=True)  # (B, 1, H): every query sees every key
    key_length = ops.shape(rows)[1]
    # (B, Tk, H) -> (B, Tk + 1, H): prefix[k] counts the rows of keys 0..k-1
    prefix = ops.pad(ops.cumsum(rows, axis=1), ((0, 0), (1, 0), (0, 0)))
    queries = ops.arange(query_length, dtype="int32")
    reach_after = 0 if is_causal else sliding_window - 1
    reach_before = key_length if sliding_window is None else sliding_window - 1
    last = ops.clip(queries + reach_after + 1, 0, key_length)  # one past hi(q)
    first = ops.clip(queries - reach_before, 0, key_length)  # lo(q)
    counts = ops.take(prefix, last, axis=1) - ops.take(prefix, first, axis=1)  # (B, Tq, H)
    return ops.maximum(counts, 0)


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
    bias,
    sliding_window,
):
    """The kernel `implementation` on checked inputs; see `dot_product_attention`.

    `sliding_window` reaches here only for the chunked kernel; the others
    receive it merged into `mask`.
    """
    scale = default_scale(query) if scale is None else scale
    use_dropout = bool(training) and dropout_rate > 0.0

    if implementation == "chunked":
        if use_dropout:
            raise ValueError(
                'implementation="chunked" does not support dropout. '
                f"Received: dropout_rate={dropout_rate}, training={training}"
            )
        output = chunked_attention(
            query, key, value, mask, is_causal, scale, _CHUNK_SIZE, bias, sliding_window
        )
        if not return_weights:
            return output
        weights = attention_weights(query, key, mask, is_causal, scale, bias, sliding_window)
        return output, ops.cast(weights, value.dtype)
    if implementation == "fused":
        if use_dropout or return_weights:
            raise ValueError(
                'implementation="fused" can neither apply dropout nor return weights. '
                f"Received: dropout_rate={dropout_rate}, training={training}, "
                f"return_weights={return_weights}"
            )
        return _fused_attention(query, key, value, mask, is_causal, scale, bias)

    # XLA fuses the deferred normalisation into fewer passes over the scores;
    # TensorFlow's graph executor is faster with its one-kernel softmax. In
    # float16 the unnormalised sum over Tk keys could pass 65504: normalise first.
    defer = compiled_with_xla() and keras.backend.standardize_dtype(value.dtype) != "float16"
    if return_weights or not defer:
        weights, sees_any_key = _weights_and_nonempty_rows(query, key, mask, is_causal, scale, bias)
        weights = ops.cast(weights, value.dtype)
        dropped = hashed_dropout(weights, dropout_rate, seed) if use_dropout else weights
        output = ops.einsum("bhqk,bkhd->bqhd", dropped, value)  # (B, Tq, H, Dv)
    else:
        rate = dropout_rate if use_dropout else 0.0
        output, sees_any_key = _attend_then_normalize(
            query, key, value, mask, is_causal, scale, rate, seed, bias
        )
    if sees_any_key is not None:
        # Zero the rows that see no key on the output, (B, Tq, H, Dv), which is
        # Tk / Dv times smaller than the weights: (mB, mH, mQ, 1) -> (mB, mQ, mH, 1).
        output = output * ops.cast(ops.transpose(sees_any_key, (0, 2, 1, 3)), output.dtype)
    if not return_weights:
        return output
    return output, zero_empty_rows(weights, sees_any_key)


def _attend_then_normalize(
    query, key, value, mask, is_causal, scale, dropout_rate, seed, bias=None
):
    """softmax(l) v computed as (exp(l - max) v) / sum(exp(l - max)).

    Dividing the (B, Tq, H, Dv) output by the row sums instead of the
    (B, H, Tq, Tk) exponentials saves a pass over the scores forward and
    backward. Dropout commutes with the division (it scales elements, the
    sum scales rows), so it applies to the exponentials.
    """
    logits = ops.cast(_biased_logits(query, key, scale, bias), "float32")
    mask = keys_the_bias_allows(mask, bias)
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


def _choose_implementation(
    query, key, value, mask, bias, sliding_window, use_dropout, return_weights
):
    if use_dropout or return_weights:
        return "xla"
    if sliding_window is None and _cudnn_flash_attention_applies(query, key, value, mask, bias):
        return "fused"
    query_length, key_length = query.shape[1], key.shape[1]
    if query_length is None or key_length is None:
        return "xla"
    if query_length * key_length >= _AUTO_CHUNKED_MIN_SCORES:
        return "chunked"
    return "xla"


def _on_jax_gpu():
    if keras.backend.backend() != "jax":
        return False
    import jax

    return jax.devices()[0].platform == "gpu"


def _cudnn_flash_attention_applies(query, key, value, mask, bias):
    """Whether keras' fused kernel runs this call as cuDNN flash attention (JAX on a GPU).

    On an H200 it took 0.04-0.16 GiB and 1.2-9.6 ms for causal attention
    at 8k-32k tokens, where the chunked kernel took 16-219 ms
    (benchmarks/README.md, GPU section). cuDNN takes float16 or bfloat16,
    equal query and value head sizes that are multiples of 8 up to 128, the
    same number of query and key heads, and even lengths (in training).
    keras hands a mask or bias to it as a bias it often cannot use, then
    falls back with an error in the log: those calls stay with our kernels.
    """
    if mask is not None or bias is not None or not _on_jax_gpu():
        return False
    if keras.backend.standardize_dtype(query.dtype) not in ("float16", "bfloat16"):
        return False
    head_dim, value_dim = query.shape[-1], value.shape[-1]
    if head_dim != value_dim or head_dim % 8 or head_dim > 128:
        return False
    if query.shape[2] != key.shape[2]:
        return False
    lengths = (query.shape[1], key.shape[1])
    return all(length is not None and length % 2 == 0 for length in lengths)


def _fused_attention(query, key, value, mask, is_causal, scale, bias=None):
    mask = keys_the_bias_allows(mask, bias)
    if bias is not None:
        # PyTorch's kernel takes a bias or a mask, and a bias or causality:
        # fold the mask and causality into the bias.
        positions = _positions_mask(ops.shape(query)[1], ops.shape(key)[1], is_causal, None)
        if positions is not None:
            mask = positions if mask is None else ops.logical_and(mask, positions)
        is_causal = False
        if mask is not None:
            dtype = keras.backend.result_type(query.dtype, key.dtype, value.dtype)
            bias = ops.where(mask, ops.cast(bias, dtype), _large_negative(dtype))
    output = ops.dot_product_attention(
        query,
        key,
        value,
        bias=bias,
        mask=None if bias is not None else mask,
        scale=scale,
        is_causal=is_causal,
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


def _large_negative(dtype):
    """A logit whose exponential vanishes next to any visible one, finite in `dtype`."""
    return -3e4 if keras.backend.standardize_dtype(dtype) == "float16" else -1e9
