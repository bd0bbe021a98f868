"""One-token-at-a-time decoding of an `rnn_attention_translator` model."""

from keras import ops

from keras_attention.generation.decoder_adapter import DecoderAdapter
from keras_attention.generation.decoder_adapter import MEMORY_MASK
from keras_attention.generation.transformer_translator_decoder import numbered_layers
from keras_attention.models.rnn_attention_translator import ATTENTION_DECODER
from keras_attention.models.rnn_attention_translator import LOGITS
from keras_attention.models.rnn_attention_translator import MEMORY_PROJECTION
from keras_attention.models.rnn_attention_translator import PADDING_ID
from keras_attention.models.rnn_attention_translator import SOURCE_EMBEDDING
from keras_attention.models.rnn_attention_translator import SOURCE_ENCODER
from keras_attention.models.rnn_attention_translator import STATE_BRIDGE_PREFIX
from keras_attention.models.rnn_attention_translator import TARGET_EMBEDDING

MEMORY = "memory"
PRECOMPUTED_KEYS = "precomputed_keys"
INITIAL_STATE_PREFIX = "initial_state_"
STATE_PREFIX = "state_"


class RNNTranslatorDecoder(DecoderAdapter):
    """Decodes an `rnn_attention_translator` one token at a time.

    `encode` runs the bidirectional encoder once and keeps the memory, its
    mask, the attention's key projection of the memory and the decoder's
    initial state (the bridged encoder states). The cache is the decoder
    state (`[h]` for a GRU, `[h, c]` for an LSTM, plus the attentional
    vector with input feeding); `step` embeds one token and advances it with
    `AttentionDecoder.step`, returning its alignment on the source.

    The layers are found by name, so a model re-loaded from a `.keras` file
    works as well as the one built by `rnn_attention_translator`.

    Args:
        model: a model built by `rnn_attention_translator`.

    Example:

    >>> import numpy as np
    >>> from keras_attention.models.rnn_attention_translator import rnn_attention_translator
    >>> model = rnn_attention_translator(
    ...     source_vocabulary_size=12, target_vocabulary_size=10, embedding_dim=4, units=8)
    >>> decoder = RNNTranslatorDecoder(model)
    >>> state = decoder.encode(np.array([[4, 5, 6, 0]]))
    >>> cache = decoder.initial_cache(state, batch_size=1, max_length=5)
    >>> logits, cache, attention = decoder.step(np.array([1]), 0, cache, state)
    >>> tuple(logits.shape), tuple(attention.shape)
    ((1, 10), (1, 4))
    """

    def __init__(self, model):
        required = (
            SOURCE_EMBEDDING,
            SOURCE_ENCODER,
            MEMORY_PROJECTION,
            TARGET_EMBEDDING,
            ATTENTION_DECODER,
            LOGITS,
        )
        present = {layer.name for layer in model.layers}
        self.state_bridges = numbered_layers(model, STATE_BRIDGE_PREFIX)
        if not set(required) <= present or not self.state_bridges:
            raise ValueError(
                "`model` must be an RNN attention translator with layers "
                f"{required + ('state_bridge_0',)}. Received: model with layers {sorted(present)}"
            )
        self.model = model
        self.source_embedding = model.get_layer(SOURCE_EMBEDDING)
        self.source_encoder = model.get_layer(SOURCE_ENCODER)
        self.memory_projection = model.get_layer(MEMORY_PROJECTION)
        self.target_embedding = model.get_layer(TARGET_EMBEDDING)
        self.attention_decoder = model.get_layer(ATTENTION_DECODER)
        self.logits_layer = model.get_layer(LOGITS)
        self.vocabulary_size = self.logits_layer.units
        self.max_length = None

    def encode(self, inputs):
        source = ops.cast(inputs, "int32")
        source_mask = ops.not_equal(source, PADDING_ID)  # (B, S)
        encoded = self.source_encoder(
            self.source_embedding(source), mask=source_mask, training=False
        )
        outputs, final_states = encoded[0], encoded[1:]
        num_states = len(final_states) // 2
        memory = self.memory_projection(outputs)  # (B, S, units)
        cell_states = [
            bridge(ops.concatenate([forward, final_states[num_states + index]], axis=-1))
            for index, (forward, bridge) in enumerate(zip(final_states, self.state_bridges))
        ]  # each [h_fwd; h_bwd] (B, 2 * units) -> (B, units)
        state = {
            MEMORY: memory,
            MEMORY_MASK: source_mask,
            PRECOMPUTED_KEYS: self.attention_decoder.precompute_memory(memory),
        }
        initial = self.attention_decoder.initial_decoder_state(cell_states)
        for index, value in enumerate(initial):
            state[f"{INITIAL_STATE_PREFIX}{index}"] = value
        return state

    def initial_cache(self, encoder_state, batch_size, max_length):
        # The decoder starts from the encoder's bridged states, which `encode`
        # computed (and beam search repeated for every beam).
        cache, index = {}, 0
        while f"{INITIAL_STATE_PREFIX}{index}" in encoder_state:
            cache[f"{STATE_PREFIX}{index}"] = encoder_state[f"{INITIAL_STATE_PREFIX}{index}"]
            index += 1
        return cache

    def step(self, token_ids, index, cache, encoder_state):
        embedded = self.target_embedding(ops.cast(token_ids, "int32"))  # (B, E)
        states = [cache[f"{STATE_PREFIX}{number}"] for number in range(len(cache))]
        output, states, alignment = self.attention_decoder.step(
            embedded,
            states,
            encoder_state[MEMORY],
            memory_mask=encoder_state[MEMORY_MASK],
            precomputed_keys=encoder_state[PRECOMPUTED_KEYS],
            training=False,
        )
        logits = self.logits_layer(output)  # (B, V)
        new_cache = {f"{STATE_PREFIX}{number}": value for number, value in enumerate(states)}
        return logits, new_cache, ops.cast(alignment, "float32")
