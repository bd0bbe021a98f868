"""Cached one-token decoding through a stack of `TransformerDecoderBlock`s.

The decoding state holds each block's cross-attention keys and values of the
memory, projected once; the cache holds each block's self-attention keys and
values `(B, 2, max_length, key_value_heads, key_dim)`, written one position per
step; grouped-query blocks cache only their `num_key_value_heads` heads.
"""

from keras import ops

# Entries of the decoding state and cache.
MEMORY = "memory"
CROSS_CACHE_PREFIX = "cross_attention_cache_"
SELF_CACHE_PREFIX = "self_attention_cache_"


def cross_attention_caches(blocks, memory):
    """`{"cross_attention_cache_<i>": (B, 2, S, key_value_heads, key_dim)}`, one per block."""
    return {
        f"{CROSS_CACHE_PREFIX}{index}": block.compute_cross_attention_cache(memory)
        for index, block in enumerate(blocks)
    }


def empty_self_attention_caches(blocks, hidden_dim, batch_size, max_length):
    """`{"self_attention_cache_<i>": zeros (B, 2, max_length, kv_heads, key_dim)}`, one per block.

    `kv_heads` is each block's key/value head count: `num_heads`, or
    `num_key_value_heads` for grouped-query attention.

    Example:

    >>> from keras_attention.layers.transformer.transformer_decoder_block import (
    ...     TransformerDecoderBlock)
    >>> blocks = [TransformerDecoderBlock(num_heads=2, intermediate_dim=8),
    ...           TransformerDecoderBlock(num_heads=2, intermediate_dim=8, num_key_value_heads=1)]
    >>> {name: tuple(cache.shape)
    ...  for name, cache in empty_self_attention_caches(blocks, 8, 3, 5).items()}
    {'self_attention_cache_0': (3, 2, 5, 2, 4), 'self_attention_cache_1': (3, 2, 5, 1, 4)}
    """
    cache = {}
    for index, block in enumerate(blocks):
        shape = block.cache_shape(batch_size, max_length, hidden_dim)
        cache[f"{SELF_CACHE_PREFIX}{index}"] = ops.zeros(shape, block.compute_dtype)
    return cache


def decode_token(blocks, y, index, cache, encoder_state, context_padding_mask=None):
    """Runs the embedded token `y` `(B, 1, D)` at position `index` through the blocks.

    Each block writes the token's self-attention keys and values into its
    cache at `index`, so a step costs one position, not the whole prefix.

    Returns:
        `(y (B, 1, D), new cache, attention (B, S) float32)`: the attention
        is the last block's cross-attention averaged over the heads.
    """
    new_cache = {}
    for number, block in enumerate(blocks):
        name = f"{SELF_CACHE_PREFIX}{number}"
        y, _, cross_scores, new_cache[name], _ = block(
            y,
            encoder_state[MEMORY],
            context_padding_mask=context_padding_mask,
            self_attention_cache=cache[name],
            self_attention_cache_update_index=index,
            cross_attention_cache=encoder_state[f"{CROSS_CACHE_PREFIX}{number}"],
            return_attention_scores=True,
            training=False,
        )
    # cross_scores (B, heads, 1, S) -> (B, S)
    attention = ops.mean(ops.cast(cross_scores[:, :, 0], "float32"), axis=1)
    return y, new_cache, attention
