"""Exact memory-efficient attention over tiles of queries and keys.

Rabe and Staats, "Self-attention does not need O(n^2) memory"
(https://arxiv.org/abs/2112.05682), tiled as in FlashAttention
(https://arxiv.org/abs/2205.14135): walk over blocks of keys keeping, for
every query, a running maximum `m`, a running sum of exponentials `l` and a
running weighted sum of values. The result equals the materialised softmax up
to float32 rounding while only one `(query_block, key_block)` tile of scores
exists at a time. The gradient is written by hand and recomputes the scores of
each tile from the saved log-sum-exp, so the backward pass needs no `O(n^2)`
storage either.

Without a causal mask all queries form one block and the loop runs over key
blocks only (the largest matrix products). With a causal mask and known
lengths the queries are cut into blocks too, and the tiles that the mask hides
entirely are never visited, which halves the work of long sequences. Tiles
that no mask touches skip the masking altogether.

A sliding window (query p sees keys with |p - k| < w, and k <= p when
causal) cuts the queries into blocks as causality does, and each query block
visits only the key blocks that meet its band, so time is O(length * w)
instead of O(length^2).

An additive bias (B | 1, H | 1, Tq | 1, Tk | 1) is read tile by tile like
the mask, never broadcast to the whole score matrix; its gradient is the
gradient of the scores, summed over the axes the bias broadcasts along.
"""

from keras import ops

from keras_attention.ops.attention_arguments import check_attention_inputs
from keras_attention.ops.attention_arguments import check_scale
from keras_attention.ops.attention_arguments import default_scale
from keras_attention.ops.attention_arguments import normalize_bias
from keras_attention.ops.attention_arguments import normalize_mask
from keras_attention.ops.eager_graph import graph_when_eager
from keras_attention.ops.query_scaling import scale_queries
from keras_attention.ops.softmax import MASKED_LOGIT
from keras_attention.validation import check_positive_int

# The smallest block a sliding window shrinks the blocks to (see `_band_block_size`).
_MIN_BAND_BLOCK = 64


def _heads_first(tensor):
    """(B, T, H, D) -> (B, H, T, D): matrix products per head need no transposes."""
    return ops.transpose(tensor, (0, 2, 1, 3))


def _pad_axis(tensor, axis, padding, value=0):
    if isinstance(padding, int) and padding == 0:
        return tensor
    pad_width = [(0, 0)] * len(tensor.shape)
    pad_width[axis] = (0, padding)
    return ops.pad(tensor, pad_width, constant_values=value)


def _rows(tensor, start, size, axis):
    """`size` entries of `tensor` from `start` along `axis` (a dynamic slice)."""
    starts = [0] * len(tensor.shape)
    starts[axis] = start
    sizes = list(ops.shape(tensor))
    sizes[axis] = size
    return ops.slice(tensor, starts, sizes)


def _unpad(tensor, padding, length):
    """The first `length` entries of axis 2, unless nothing was padded."""
    if isinstance(padding, int) and padding == 0:
        return tensor
    return tensor[:, :, :length]


def _loop(start, stop, body, carry):
    """`ops.fori_loop`, skipped when the bounds say statically that it is empty."""
    if isinstance(start, int) and isinstance(stop, int) and start >= stop:
        return carry
    return ops.fori_loop(start, stop, body, carry)


def _write_rows(tensor, start, update, axis):
    """`tensor` with `update` written from `start` along `axis`."""
    starts = [0] * len(tensor.shape)
    starts[axis] = start
    return ops.slice_update(tensor, starts, update)


class _Tiling:
    """Block sizes, block counts and which tiles each mask touches.

    Query block `i` holds queries `[i * query_block, (i + 1) * query_block)`,
    key block `j` keys `[j * key_block, (j + 1) * key_block)`; lengths are
    padded up to whole blocks. Ranges of blocks come back as (start, stop)
    pairs of ints or int32 scalars (inside loops).
    """

    def __init__(self, query, key, mask, is_causal, block_size, bias=None, sliding_window=None):
        query_length, key_length = query.shape[1], key.shape[1]
        self.is_causal = is_causal
        self.window = sliding_window
        self.has_mask = mask is not None
        if key_length is not None:
            self.key_block = min(block_size, key_length)
            self.num_key_blocks = -(-key_length // self.key_block)
            self.key_padding = self.num_key_blocks * self.key_block - key_length
        else:
            key_length = ops.shape(key)[1]
            self.key_block = block_size
            self.num_key_blocks = (key_length + block_size - 1) // block_size
            self.key_padding = self.num_key_blocks * block_size - key_length
        self.key_length = key_length
        # Keys added to fill the last block must be hidden there.
        self.last_block_padded = not isinstance(self.key_padding, int) or self.key_padding > 0
        rows_known = all(t is None or t.shape[2] is not None for t in (mask, bias))
        lengths_known = query_length is not None and key.shape[1] is not None
        by_position = is_causal or sliding_window is not None
        if by_position and lengths_known and rows_known:
            self.query_block = min(block_size, query_length)
            self.num_query_blocks = -(-query_length // self.query_block)
            self.query_padding = self.num_query_blocks * self.query_block - query_length
        else:
            self.query_block = query_length if query_length is not None else ops.shape(query)[1]
            self.num_query_blocks = 1
            self.query_padding = 0
        self.query_length = self.query_block * self.num_query_blocks - self.query_padding
        self.tiled_queries = self.num_query_blocks > 1

    def key_range(self, query_block_index):
        """Key blocks that query block `i` sees, as (start, full_stop, stop).

        Blocks [start, full_stop) are entirely visible and need no mask;
        blocks [full_stop, stop) are partly visible and need one.
        """
        i = query_block_index
        first_query = i * self.query_block
        last_query = (i + 1) * self.query_block - 1
        start, stop = 0, self.num_key_blocks
        full_stop = stop - 1 if self.last_block_padded else stop
        if self.is_causal:
            # Key block j is fully visible when its last key <= the first query.
            full_stop = ops.minimum(full_stop, (first_query + 1) // self.key_block)
            # ... and partly visible while its first key <= the last query.
            stop = ops.minimum(stop, last_query // self.key_block + 1)
        if self.window is not None:
            # The band of block i spans keys first_query - w + 1 .. last_query + w - 1.
            if not self.is_causal:
                stop = ops.minimum(stop, (last_query + self.window - 1) // self.key_block + 1)
            start = ops.minimum(
                ops.maximum(first_query - self.window + 1, 0) // self.key_block, stop
            )
            full_stop = start  # every tile of a band is cut by it
        if self.has_mask:
            full_stop = start
        return start, full_stop, stop

    def query_range(self, key_block_index):
        """Query blocks that see key block `j`, as (start, full_start, stop).

        Blocks [start, full_start) see it partly and need a mask; blocks
        [full_start, stop) see all of it.
        """
        j = key_block_index
        blocks = self.num_query_blocks
        start, full_start, stop = 0, 0, blocks
        if self.is_causal:
            # Query block i sees key block j once its last query >= the first key.
            start = ops.minimum((j * self.key_block) // self.query_block, blocks)
            # ... and all of it once its first query >= the last key.
            full_start = ops.minimum(
                ops.maximum(start, -(-((j + 1) * self.key_block - 1) // self.query_block)),
                blocks,
            )
        if self.window is not None:
            # Queries first_key - w + 1 .. last_key + w - 1 (from first_key when causal).
            last_key = (j + 1) * self.key_block - 1
            stop = ops.minimum((last_key + self.window - 1) // self.query_block + 1, blocks)
            if not self.is_causal:
                first_query = ops.maximum(j * self.key_block - self.window + 1, 0)
                start = ops.minimum(first_query // self.query_block, stop)
            start = ops.minimum(start, stop)
            full_start = stop
        if self.has_mask:
            full_start = stop
        if self.last_block_padded:
            full_start = ops.where(ops.equal(j, self.num_key_blocks - 1), stop, full_start)
        return start, full_start, stop

    def visible(self, query_block_index, key_block_index, mask):
        """Boolean (mB, mH, q, k) mask of one tile: positions, key padding, `mask`."""
        key_positions = key_block_index * self.key_block + ops.arange(self.key_block, dtype="int32")
        visible = ops.less(key_positions, self.key_length)[None, None, None, :]
        if self.is_causal or self.window is not None:
            query_positions = query_block_index * self.query_block + ops.arange(
                self.query_block, dtype="int32"
            )
            distance = query_positions[:, None] - key_positions[None, :]  # (q, k)
            if self.is_causal:
                visible = ops.logical_and(visible, ops.greater_equal(distance, 0)[None, None])
            if self.window is not None:
                near = ops.less(ops.abs(distance), self.window)
                visible = ops.logical_and(visible, near[None, None])
        if mask is not None:
            visible = ops.logical_and(visible, self.tile(mask, query_block_index, key_block_index))
        return visible

    def pad(self, tensor, value):
        """Pad a (mB, mH, mQ, mK) mask or bias with `value` up to whole blocks."""
        if tensor is None:
            return None
        if tensor.shape[-1] != 1:
            tensor = _pad_axis(tensor, 3, self.key_padding, value)
        if self.tiled_queries and tensor.shape[2] != 1:
            tensor = _pad_axis(tensor, 2, self.query_padding, value)
        return tensor

    def tile(self, tensor, query_block_index, key_block_index):
        """The (mB, mH, q | 1, k | 1) part of a padded mask or bias that one tile reads."""
        if tensor.shape[-1] != 1:
            tensor = _rows(tensor, key_block_index * self.key_block, self.key_block, 3)
        if self.tiled_queries and tensor.shape[2] != 1:
            tensor = _rows(tensor, query_block_index * self.query_block, self.query_block, 2)
        return tensor

    def add_to_tile(self, tensor, query_block_index, key_block_index, update):
        """`tensor` (padded like a bias) with `update` added to the tile that `tile` reads."""
        starts = [0, 0, 0, 0]
        if tensor.shape[-1] != 1:
            starts[3] = key_block_index * self.key_block
        if self.tiled_queries and tensor.shape[2] != 1:
            starts[2] = query_block_index * self.query_block
        current = self.tile(tensor, query_block_index, key_block_index)
        return ops.slice_update(tensor, starts, current + update)


def _band_block_size(block_size, sliding_window):
    """The block size for a sliding window of w keys: at most w // 2.

    A query block visits about w + block keys per query; blocks of half the
    window keep that near 1.5 w, while tiles stay large enough (64 at least)
    for efficient matrix products.
    """
    return min(block_size, max(sliding_window // 2, _MIN_BAND_BLOCK))


def _sum_to_shape(tensor, shape):
    """Sum `tensor` (B, H, q, k) over the axes where `shape` has size 1, keeping them."""
    axes = tuple(a for a, size in enumerate(shape) if size == 1 and tensor.shape[a] != 1)
    return ops.sum(tensor, axis=axes, keepdims=True) if axes else tensor


class _TiledAttention:
    """The padded, heads-first operands of one call and the tile steps over them.

    The forward pass walks, for each query block, over its key blocks keeping
    a running maximum, sum and weighted sum; the backward pass walks, for each
    key block, over the query blocks that see it, recomputing each tile's
    probabilities from the saved log-sum-exp. Only one tile of scores exists
    at a time in either pass.
    """

    def __init__(self, tiling, mask, scale, query, key, value, bias):
        self.tiling = tiling
        self.mask = mask
        # The bias, padded with zeros to whole blocks, as float32 (or None).
        self.biases = tiling.pad(ops.cast(bias, "float32"), 0.0) if bias is not None else None
        # (B, T, H, D) -> (B, H, T, D), padded to whole blocks.
        scaled_query = _heads_first(scale_queries(query, scale))
        self.scaled_query = _pad_axis(scaled_query, 2, tiling.query_padding)
        self.keys = _pad_axis(_heads_first(key), 2, tiling.key_padding)
        self.values = _pad_axis(_heads_first(value), 2, tiling.key_padding)

    def query_rows(self, tensor, i):
        """Query block `i` of a (B, H, Tq_padded, ...) tensor (all of it when untiled)."""
        if not self.tiling.tiled_queries:
            return tensor
        return _rows(tensor, i * self.tiling.query_block, self.tiling.query_block, 2)

    def key_rows(self, tensor, j):
        """Key block `j` of a (B, H, Tk_padded, ...) tensor."""
        return _rows(tensor, j * self.tiling.key_block, self.tiling.key_block, 2)

    def tile_scores(self, query_block, i, j, masked):
        """Float32 (B, H, q, k) scores of tile (i, j) and its visibility (None if unmasked)."""
        key_block = self.key_rows(self.keys, j)
        scores = ops.einsum("bhqd,bhkd->bhqk", query_block, key_block)  # (B, H, q, k)
        scores = ops.cast(scores, "float32")
        if self.biases is not None:
            scores = scores + self.tiling.tile(self.biases, i, j)
        visible = self.tiling.visible(i, j, self.mask) if masked else None
        if visible is not None:
            scores = ops.where(visible, scores, MASKED_LOGIT)
        return scores, visible

    # Forward pass.

    def forward(self):
        """Output (B, H, Tq_padded, Dv) and log-sum-exp (B, H, Tq_padded), float32."""
        if not self.tiling.tiled_queries:
            return self._attend_query_block(0)
        tiling = self.tiling
        shape = ops.shape(self.scaled_query)
        padded_length = tiling.num_query_blocks * tiling.query_block

        def forward_over_query_blocks(i, carry):
            output, log_sum_exp = carry
            block_output, block_log_sum_exp = self._attend_query_block(i)
            start = i * tiling.query_block
            output = _write_rows(output, start, block_output, 2)
            log_sum_exp = _write_rows(log_sum_exp, start, block_log_sum_exp, 2)
            return output, log_sum_exp

        return ops.fori_loop(
            0,
            tiling.num_query_blocks,
            forward_over_query_blocks,
            (
                ops.zeros(
                    (shape[0], shape[1], padded_length, ops.shape(self.values)[-1]), "float32"
                ),
                ops.zeros((shape[0], shape[1], padded_length), "float32"),
            ),
        )

    def _attend_query_block(self, i):
        """Output (B, H, q, Dv) and log-sum-exp (B, H, q) of query block `i`.

        Unmasked key blocks run first, then the ones a mask cuts; rows that see
        no key get output 0 and log-sum-exp 0.
        """
        query_block = self.query_rows(self.scaled_query, i)  # (B, H, q, D)
        shape = ops.shape(query_block)
        carry = (
            ops.zeros((shape[0], shape[1], shape[2], ops.shape(self.values)[-1]), "float32"),
            ops.full((shape[0], shape[1], shape[2]), MASKED_LOGIT, "float32"),
            ops.zeros((shape[0], shape[1], shape[2]), "float32"),
        )
        start, full_stop, stop = self.tiling.key_range(i)
        carry = _loop(start, full_stop, self._online_softmax_step(query_block, i, False), carry)
        accumulator, row_max, row_sum = _loop(
            full_stop, stop, self._online_softmax_step(query_block, i, True), carry
        )
        has_keys = row_sum > 0.0
        safe_sum = ops.where(has_keys, row_sum, 1.0)
        output = accumulator / safe_sum[..., None]  # (B, H, q, Dv)
        log_sum_exp = ops.where(has_keys, row_max + ops.log(safe_sum), 0.0)  # (B, H, q)
        return output, log_sum_exp

    def _online_softmax_step(self, query_block, i, masked):
        """Loop body over key blocks `j`: fold tile (i, j) into (accumulator, max, sum)."""

        def body(j, carry):
            accumulator, row_max, row_sum = carry
            scores, visible = self.tile_scores(query_block, i, j, masked)
            new_max = ops.maximum(row_max, ops.max(scores, axis=-1))  # (B, H, q)
            correction = ops.exp(row_max - new_max)
            probabilities = ops.exp(scores - new_max[..., None])
            if visible is not None:
                probabilities = ops.where(visible, probabilities, 0.0)
            row_sum = row_sum * correction + ops.sum(probabilities, axis=-1)
            block_output = ops.einsum(
                "bhqk,bhkd->bhqd",
                ops.cast(probabilities, self.values.dtype),
                self.key_rows(self.values, j),
            )  # (B, H, q, Dv)
            accumulator = accumulator * correction[..., None] + ops.cast(block_output, "float32")
            return accumulator, new_max, row_sum

        return body

    # Backward pass.

    def backward(self, upstream, output, log_sum_exp):
        """Padded float32 gradients (d_query, d_keys, d_values, *d_bias), heads first.

        Args:
            upstream: (B, Tq, H, Dv) gradient of the result.
            output: (B, H, Tq_padded, Dv) float32 output of `forward`.
            log_sum_exp: (B, H, Tq_padded) of `forward`.

        `d_query` is the gradient of the scaled query; `d_bias` is there only
        with a bias, in its padded shape.
        """
        tiling = self.tiling
        # (B, Tq, H, Dv) -> (B, H, Tq_padded, Dv)
        d_output = _heads_first(ops.cast(upstream, "float32"))
        d_output = _pad_axis(d_output, 2, tiling.query_padding)
        delta = ops.sum(d_output * output, axis=-1)  # D_i = sum_d dO_id * O_id, (B, H, Tq)
        saved = {
            "d_output": d_output,
            "delta": delta,
            "log_sum_exp": log_sum_exp,
            "query32": ops.cast(self.scaled_query, "float32"),
            "keys32": ops.cast(self.keys, "float32"),
            "values32": ops.cast(self.values, "float32"),
        }

        def backward_over_key_blocks(j, carry):
            d_query, d_keys, d_values, *d_bias = carry
            d_query, d_key, d_value, *d_bias = self._key_block_gradients(saved, j, d_query, d_bias)
            start = j * tiling.key_block
            d_keys = _write_rows(d_keys, start, d_key, 2)
            d_values = _write_rows(d_values, start, d_value, 2)
            return (d_query, d_keys, d_values, *d_bias)

        d_bias = [] if self.biases is None else [ops.zeros_like(self.biases)]
        return ops.fori_loop(
            0,
            tiling.num_key_blocks,
            backward_over_key_blocks,
            (
                ops.zeros_like(saved["query32"]),
                ops.zeros_like(saved["keys32"]),
                ops.zeros_like(saved["values32"]),
                *d_bias,
            ),
        )

    def _key_block_gradients(self, saved, j, d_query, d_bias):
        """Gradients of key block `j` over the query blocks that see it.

        Returns (d_query, d_key (B, H, k, D), d_value (B, H, k, Dv), *d_bias),
        with `d_query` and `d_bias` accumulated into the ones given.
        """
        key_block = self.key_rows(saved["keys32"], j)  # (B, H, k, D)
        value_block = self.key_rows(saved["values32"], j)  # (B, H, k, Dv)
        carry = (d_query, ops.zeros_like(key_block), ops.zeros_like(value_block), *d_bias)
        start, full_start, stop = self.tiling.query_range(j)
        step = self._tile_gradient_step
        carry = _loop(start, full_start, step(saved, j, key_block, value_block, True), carry)
        return _loop(full_start, stop, step(saved, j, key_block, value_block, False), carry)

    def _tile_gradient_step(self, saved, j, key_block, value_block, masked):
        """Loop body over query blocks `i`: add tile (i, j)'s share to every gradient."""
        tiling = self.tiling
        query_rows = self.query_rows

        def body(i, carry):
            d_query, d_key, d_value, *d_bias = carry
            scores, visible = self.tile_scores(query_rows(self.scaled_query, i), i, j, masked)
            probabilities = ops.exp(scores - query_rows(saved["log_sum_exp"], i)[..., None])
            if visible is not None:
                probabilities = ops.where(visible, probabilities, 0.0)  # (B, H, q, k)
            d_output_block = query_rows(saved["d_output"], i)  # (B, H, q, Dv)
            d_value = d_value + ops.einsum("bhqk,bhqd->bhkd", probabilities, d_output_block)
            d_probabilities = ops.einsum(
                "bhqd,bhkd->bhqk", d_output_block, value_block
            )  # (B, H, q, k)
            d_scores = probabilities * (d_probabilities - query_rows(saved["delta"], i)[..., None])
            d_key = d_key + ops.einsum("bhqk,bhqd->bhkd", d_scores, query_rows(saved["query32"], i))
            d_query_block = ops.einsum("bhqk,bhkd->bhqd", d_scores, key_block)
            if d_bias:
                # The bias adds to the scores: its gradient is theirs.
                d_tile = _sum_to_shape(d_scores, self.biases.shape)
                d_bias = [tiling.add_to_tile(d_bias[0], i, j, d_tile)]
            if tiling.tiled_queries:
                start = i * tiling.query_block
                d_query = _write_rows(d_query, start, query_rows(d_query, i) + d_query_block, 2)
            else:
                d_query = d_query + d_query_block
            return (d_query, d_key, d_value, *d_bias)

        return body


def _input_gradients(tiling, scale, padded_gradients, inputs):
    """Unpad the gradients of `backward`, put sequence axes back, cast to the input dtypes.

    Args:
        tiling: the `_Tiling` of the call.
        scale: the query scale (the gradient of the scaled query is scaled too).
        padded_gradients: (d_query, d_keys, d_values, *d_bias) of `backward`.
        inputs: (query, key, value, *bias) as `attend` received them.
    """
    d_query, d_keys, d_values, *d_bias = padded_gradients
    query, key, value, *bias_input = inputs
    # (B, H, T_padded, D) -> (B, T, H, D)
    d_query = _heads_first(_unpad(d_query, tiling.query_padding, tiling.query_length))
    d_query = scale_queries(d_query, scale)
    d_key = _heads_first(_unpad(d_keys, tiling.key_padding, tiling.key_length))
    d_value = _heads_first(_unpad(d_values, tiling.key_padding, tiling.key_length))
    gradients = (
        ops.cast(d_query, query.dtype),
        ops.cast(d_key, key.dtype),
        ops.cast(d_value, value.dtype),
    )
    if not bias_input:
        return gradients
    # (mB, mH, mQ_padded, mK_padded) -> the bias' own shape
    d_bias = ops.slice(d_bias[0], (0, 0, 0, 0), ops.shape(bias_input[0]))
    return (*gradients, ops.cast(d_bias, bias_input[0].dtype))


# Eagerly the tile loops would dispatch op by op; see eager_graph.
@graph_when_eager
def chunked_attention(
    query, key, value, mask, is_causal, scale, block_size=512, bias=None, sliding_window=None
):
    """Exact attention in O(length) extra memory; see the module docstring.

    Args:
        query: (B, Tq, H, D).
        key: (B, Tk, H, D).
        value: (B, Tk, H, Dv).
        mask: None or a boolean tensor of rank 2 (Tq, Tk), 3 (B, Tq, Tk) or
            4 (B, H, Tq, Tk).
        is_causal: bool, query i sees keys 0..i.
        scale: python float multiplying the scores; None: 1 / sqrt(D).
        block_size: number of keys (and, when causal or windowed, queries)
            per block; with a sliding window w at most max(w // 2, 64).
        bias: None or a float tensor of the ranks of `mask`, added to the
            scaled scores before the mask.
        sliding_window: None or a positive int w: query p sees keys with
            |p - k| < w only.

    Returns:
        output (B, Tq, H, Dv) in the dtype of `value`; rows with every key
        masked are 0.

    Example:

    >>> import numpy as np
    >>> from keras_attention.ops.attention import dot_product_attention
    >>> q = np.random.rand(1, 9, 2, 4).astype("float32")
    >>> out = chunked_attention(q, q, q, None, True, 0.5, block_size=4)
    >>> full = dot_product_attention(q, q, q, is_causal=True, scale=0.5, implementation="xla")
    >>> bool(np.allclose(out, full, atol=1e-6))
    True
    """
    query, key, value = (ops.convert_to_tensor(tensor) for tensor in (query, key, value))
    check_attention_inputs(query, key, value)
    check_scale(scale)
    check_positive_int("block_size", block_size)
    check_positive_int("sliding_window", sliding_window, allow_none=True)
    mask = normalize_mask(mask, query, key)
    bias = normalize_bias(bias, query, key)
    if scale is None:
        scale = default_scale(query)
    if 0 in (query.shape[0], query.shape[1], key.shape[1]):
        # Nothing to tile (and block sizes of 0): the materialised kernel's
        # answer, an empty output or, with no keys, zeros.
        batch, query_length, heads = ops.shape(query)[:3]
        return ops.zeros((batch, query_length, heads, ops.shape(value)[3]), value.dtype)
    if sliding_window is not None:
        block_size = _band_block_size(block_size, sliding_window)
    tiling = _Tiling(query, key, mask, is_causal, block_size, bias, sliding_window)
    output_dtype = value.dtype
    mask = tiling.pad(mask, False)
    inputs = (query, key, value) if bias is None else (query, key, value, bias)

    @ops.custom_gradient
    def attend(query, key, value, *bias_input):
        """The tiled forward pass and its hand-written gradient."""
        kernel = _TiledAttention(
            tiling, mask, scale, query, key, value, bias_input[0] if bias_input else None
        )
        output, log_sum_exp = kernel.forward()

        def grad(*args, upstream=None):
            if upstream is None:
                upstream = args[0]
            padded_gradients = kernel.backward(upstream, output, log_sum_exp)
            return _input_gradients(
                tiling, scale, padded_gradients, (query, key, value, *bias_input)
            )

        # (B, H, Tq_padded, Dv) -> (B, Tq, H, Dv)
        result = _heads_first(_unpad(output, tiling.query_padding, tiling.query_length))
        return ops.cast(result, output_dtype), grad

    return attend(*inputs)
