"""Cached one-token decoding through a stack of `TransformerDecoderBlock`s.

The decoding state holds each block's cross-attention keys and values of the
memory, projected once; the cache holds each block's self-attention keys and
values `(B, 2, max_length, heads, key_dim)`, written one position per step.
"""

from keras import ops

# Entries of the decoding state and cache.
MEMORY = "memory"
CROSS_CACHE_PREFIX = "cross_attention_cache_"
SELF_CACHE_PREFIX = "self_attention_cache_"


def cross_attention_caches(blocks, memory):
    """`{"cross_attention_cache_<i>": (B, 2, S, heads, key_dim)}`, one per block."""
    return {
        f"{CROSS_CACHE_PREFIX}{index}": block.compute_cross_attention_cache(memory)
        for index, block in enumerate(blocks)
    }


def empty_self_attention_caches(blocks, hidden_dim, batch_size, max_length):
    """`{"self_attention_cache_<i>": zeros (B, 2, max_length, heads, key_dim)}`, one per block.

    Example:

    >>> from keras_attention.layers.transformer_decoder_block import TransformerDecoderBlock
    >>> blocks = [TransformerDecoderBlock(num_heads=2, intermediate_dim=8)]
    >>> {name: tuple(cache.shape)
    ...  for name, cache in empty_self_attention_caches(blocks, 8, 3, 5).items()}
    {'self_attention_cache_0': (3, 2, 5, 2, 4)}
    """
    cache = {}
    for index, block in enumerate(blocks):
        key_dim = block.key_dim or hidden_dim // block.num_heads
        shape = (batch_size, 2, max_length, block.num_heads, key_dim)
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
