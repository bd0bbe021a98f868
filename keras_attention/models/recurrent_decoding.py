"""The decoding state of a model whose decoder is an `AttentionDecoder` (an RNN cell).

`encode` keeps the attended memory, its key projection and the decoder's
initial state; the decoding cache is the cell state, one tensor per entry.
"""

from keras import ops

from keras_attention.generation.decoding_protocol import MEMORY_MASK

# Entries of the dict `encode` returns.
MEMORY = "memory"
PRECOMPUTED_KEYS = "precomputed_keys"
INITIAL_STATE_PREFIX = "initial_state_"
# Entries of the decoding cache: the decoder state, one tensor per entry.
STATE_PREFIX = "state_"


def encoder_state(attention_decoder, memory, memory_mask, cell_states):
    """The `encode` dict: memory, mask, precomputed keys and initial decoder state.

    Args:
        attention_decoder: the model's `AttentionDecoder`.
        memory: `(B, ..., D)` the attended positions.
        memory_mask: bool `(B, ...)`, True where a position exists.
        cell_states: the cell's initial states, as `initial_decoder_state` takes them.

    Example:

    >>> import keras
    >>> import numpy as np
    >>> from keras_attention.layers.attention.additive_attention import AdditiveAttention
    >>> from keras_attention.layers.recurrent.attention_decoder import AttentionDecoder
    >>> decoder = AttentionDecoder(keras.layers.GRUCell(4), AdditiveAttention(units=3))
    >>> memory = np.zeros((2, 5, 4), "float32")
    >>> _ = decoder(np.zeros((2, 1, 4), "float32"), memory)
    >>> state = encoder_state(decoder, memory, np.ones((2, 5), bool), [np.zeros((2, 4))])
    >>> sorted(state)
    ['initial_state_0', 'memory', 'memory_mask', 'precomputed_keys']
    >>> list(initial_cache(state))
    ['state_0']
    """
    state = {
        MEMORY: memory,
        MEMORY_MASK: memory_mask,
        PRECOMPUTED_KEYS: attention_decoder.precompute_memory(memory),
    }
    initial = attention_decoder.initial_decoder_state(cell_states, memory)
    for index, value in enumerate(initial):
        state[f"{INITIAL_STATE_PREFIX}{index}"] = value
    return state


def initial_cache(encoder_state):
    """The decoder state before the first token, which `encode` computed (and
    beam search repeated for every beam): `"state_<i>"` entries."""
    cache, index = {}, 0
    while f"{INITIAL_STATE_PREFIX}{index}" in encoder_state:
        cache[f"{STATE_PREFIX}{index}"] = encoder_state[f"{INITIAL_STATE_PREFIX}{index}"]
        index += 1
    return cache


def decoder_step(attention_decoder, embedded, cache, encoder_state, memory_mask=None):
    """One `AttentionDecoder.step` from the cache.

    Returns:
        `(output (B, D), new cache, alignment float32 (B, ...))`.
    """
    states = [cache[f"{STATE_PREFIX}{number}"] for number in range(len(cache))]
    output, states, alignment = attention_decoder.step(
        embedded,
        states,
        encoder_state[MEMORY],
        memory_mask=memory_mask,
        precomputed_keys=encoder_state[PRECOMPUTED_KEYS],
        training=False,
    )
    new_cache = {f"{STATE_PREFIX}{number}": value for number, value in enumerate(states)}
    return output, new_cache, ops.cast(alignment, "float32")
