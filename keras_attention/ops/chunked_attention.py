"""Exact memory-efficient attention over blocks of keys.

Rabe and Staats, "Self-attention does not need O(n^2) memory"
(https://arxiv.org/abs/2112.05682): walk over blocks of keys keeping, for every
query, a running maximum `m`, a running sum of exponentials `l` and a running
weighted sum of values. The result equals the materialised softmax up to
float32 rounding while only one `(query_length, block_size)` slab of scores
exists at a time. The gradient is written by hand and recomputes the scores of
each block from the saved log-sum-exp (as FlashAttention does), so the backward
pass needs no `O(n^2)` storage either.
"""

from keras import ops

from keras_attention.ops.softmax import _MASKED_LOGIT


def _split_key_blocks(tensor, num_blocks, block_size):
    """(B, Tk_padded, ...) -> (num_blocks, B, block_size, ...)."""
    shape = ops.shape(tensor)
    blocks = ops.reshape(tensor, (shape[0], num_blocks, block_size) + tuple(shape[2:]))
    # (B, nb, blk, ...) -> (nb, B, blk, ...)
    return ops.moveaxis(blocks, 1, 0)


def _merge_key_blocks(blocks, key_length):
    """(num_blocks, B, block_size, ...) -> (B, key_length, ...)."""
    blocks = ops.moveaxis(blocks, 0, 1)  # (B, nb, blk, ...)
    shape = ops.shape(blocks)
    merged = ops.reshape(blocks, (shape[0], shape[1] * shape[2]) + tuple(shape[3:]))
    return merged[:, :key_length]


def _pad_keys(tensor, padding):
    pad_width = [(0, 0)] * len(tensor.shape)
    pad_width[1] = (0, padding)
    return ops.pad(tensor, pad_width)


class _BlockMasks:
    """Yields the boolean mask of one key block, (mB, mH, Tq | 1, block_size)."""

    def __init__(self, mask, is_causal, query_length, key_length, num_blocks, block_size):
        self.is_causal = is_causal
        self.query_length = query_length
        self.key_length = key_length
        self.block_size = block_size
        self.mask_blocks = None
        self.mask = None
        if mask is not None:
            if mask.shape[-1] == 1:
                self.mask = mask  # broadcasts over keys, no need to split
            else:
                padding = num_blocks * block_size - key_length
                pad_width = [(0, 0)] * 3 + [(0, padding)]
                padded = ops.pad(mask, pad_width, constant_values=False)
                mask_shape = ops.shape(padded)
                # (mB, mH, mQ, nb * blk) -> (nb, mB, mH, mQ, blk)
                blocks = ops.reshape(
                    padded, tuple(mask_shape[:3]) + (num_blocks, block_size)
                )
                self.mask_blocks = ops.moveaxis(blocks, 3, 0)

    def __call__(self, block_index, mask_block=None):
        key_positions = block_index * self.block_size + ops.arange(self.block_size, dtype="int32")
        # Keys past the true length are padding added to fill the last block.
        visible = ops.less(key_positions, self.key_length)[None, None, None, :]
        if self.is_causal:
            query_positions = ops.arange(self.query_length, dtype="int32")
            causal = ops.greater_equal(query_positions[:, None], key_positions[None, :])
            visible = ops.logical_and(visible, causal[None, None])
        if mask_block is not None:
            visible = ops.logical_and(visible, mask_block)
        elif self.mask is not None:
            visible = ops.logical_and(visible, self.mask)
        return visible


def chunked_attention(query, key, value, mask, is_causal, scale, block_size=512):
    """Exact attention in O(length) extra memory; see the module docstring.

    Args:
        query: (B, Tq, H, D).
        key: (B, Tk, H, D).
        value: (B, Tk, H, Dv).
        mask: None or a rank-4 boolean tensor broadcastable to (B, H, Tq, Tk).
        is_causal: bool, query i sees keys 0..i.
        scale: python float multiplying the scores.
        block_size: number of keys per block.

    Returns:
        output (B, Tq, H, Dv) in the dtype of `value`; rows with every key
        masked are 0.
    """
    key_length = ops.shape(key)[1]
    query_length = ops.shape(query)[1]
    static_key_length = key.shape[1]
    if static_key_length is not None:
        block_size = min(block_size, static_key_length)
        num_blocks = -(-static_key_length // block_size)
        padding = num_blocks * block_size - static_key_length
    else:
        num_blocks = (key_length + block_size - 1) // block_size
        padding = num_blocks * block_size - key_length
    output_dtype = value.dtype
    masks = _BlockMasks(mask, is_causal, query_length, key_length, num_blocks, block_size)

    @ops.custom_gradient
    def attend(query, key, value):
        scaled_query = query * ops.cast(scale, query.dtype)
        key_blocks = _split_key_blocks(_pad_keys(key, padding), num_blocks, block_size)
        value_blocks = _split_key_blocks(_pad_keys(value, padding), num_blocks, block_size)
        mask_blocks = masks.mask_blocks

        def block_inputs(block_index):
            key_block = ops.take(key_blocks, block_index, axis=0)  # (B, blk, H, D)
            value_block = ops.take(value_blocks, block_index, axis=0)  # (B, blk, H, Dv)
            mask_block = None
            if mask_blocks is not None:
                mask_block = ops.take(mask_blocks, block_index, axis=0)  # (mB, mH, mQ, blk)
            return key_block, value_block, mask_block

        def block_scores(key_block, block_index, mask_block):
            visible = masks(block_index, mask_block)
            scores = ops.einsum("bqhd,bkhd->bhqk", scaled_query, key_block)  # (B, H, Tq, blk)
            scores = ops.where(visible, ops.cast(scores, "float32"), _MASKED_LOGIT)
            return scores, visible

        def forward_step(block_index, carry):
            accumulator, row_max, row_sum = carry
            key_block, value_block, mask_block = block_inputs(block_index)
            scores, visible = block_scores(key_block, block_index, mask_block)
            new_max = ops.maximum(row_max, ops.max(scores, axis=-1))  # (B, H, Tq)
            correction = ops.exp(row_max - new_max)
            probabilities = ops.where(visible, ops.exp(scores - new_max[..., None]), 0.0)
            row_sum = row_sum * correction + ops.sum(probabilities, axis=-1)
            block_output = ops.einsum(
                "bhqk,bkhd->bqhd", ops.cast(probabilities, value_block.dtype), value_block
            )  # (B, Tq, H, Dv)
            # (B, H, Tq) -> (B, Tq, H, 1) to rescale the accumulator
            correction = ops.transpose(correction, (0, 2, 1))[..., None]
            accumulator = accumulator * correction + ops.cast(block_output, "float32")
            return accumulator, new_max, row_sum

        batch, heads = ops.shape(query)[0], ops.shape(query)[2]
        init = (
            ops.zeros((batch, query_length, heads, ops.shape(value)[-1]), "float32"),
            ops.full((batch, heads, query_length), _MASKED_LOGIT, "float32"),
            ops.zeros((batch, heads, query_length), "float32"),
        )
        accumulator, row_max, row_sum = ops.fori_loop(0, num_blocks, forward_step, init)
        has_keys = row_sum > 0.0
        safe_sum = ops.where(has_keys, row_sum, 1.0)
        # (B, H, Tq) -> (B, Tq, H, 1)
        output = accumulator / ops.transpose(safe_sum, (0, 2, 1))[..., None]
        log_sum_exp = ops.where(has_keys, row_max + ops.log(safe_sum), 0.0)

        def grad(*args, upstream=None):
            if upstream is None:
                upstream = args[0]
            d_output = ops.cast(upstream, "float32")
            # D_i = sum_d dO_id * O_id, (B, Tq, H) -> (B, H, Tq)
            delta = ops.transpose(ops.sum(d_output * output, axis=-1), (0, 2, 1))
            query32 = ops.cast(scaled_query, "float32")

            def backward_step(block_index, carry):
                d_query, d_key_blocks, d_value_blocks = carry
                key_block, value_block, mask_block = block_inputs(block_index)
                scores, visible = block_scores(key_block, block_index, mask_block)
                probabilities = ops.where(
                    visible, ops.exp(scores - log_sum_exp[..., None]), 0.0
                )  # (B, H, Tq, blk)
                value32 = ops.cast(value_block, "float32")
                key32 = ops.cast(key_block, "float32")
                d_value = ops.einsum("bhqk,bqhd->bkhd", probabilities, d_output)
                d_probabilities = ops.einsum("bqhd,bkhd->bhqk", d_output, value32)
                d_scores = probabilities * (d_probabilities - delta[..., None])
                d_query = d_query + ops.einsum("bhqk,bkhd->bqhd", d_scores, key32)
                d_key = ops.einsum("bhqk,bqhd->bkhd", d_scores, query32)
                start = [block_index, 0, 0, 0, 0]
                d_key_blocks = ops.slice_update(d_key_blocks, start, d_key[None])
                d_value_blocks = ops.slice_update(d_value_blocks, start, d_value[None])
                return d_query, d_key_blocks, d_value_blocks

            init = (
                ops.zeros(ops.shape(query), "float32"),
                ops.zeros(ops.shape(key_blocks), "float32"),
                ops.zeros(ops.shape(value_blocks), "float32"),
            )
            d_query, d_key_blocks, d_value_blocks = ops.fori_loop(
                0, num_blocks, backward_step, init
            )
            d_query = d_query * scale
            d_key = _merge_key_blocks(d_key_blocks, key_length)
            d_value = _merge_key_blocks(d_value_blocks, key_length)
            return (
                ops.cast(d_query, query.dtype),
                ops.cast(d_key, key.dtype),
                ops.cast(d_value, value.dtype),
            )

        return ops.cast(output, output_dtype), grad

    return attend(query, key, value)
