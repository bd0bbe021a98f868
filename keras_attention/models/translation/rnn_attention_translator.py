"""The RNN encoder-decoder translator with attention (Bahdanau or Luong).

Bahdanau et al., "Neural Machine Translation by Jointly Learning to Align and
Translate" (https://arxiv.org/abs/1409.0473); Luong et al., "Effective
Approaches to Attention-based Neural Machine Translation"
(https://arxiv.org/abs/1508.04025).
"""

import keras
from keras import ops

from keras_attention.generation.decoding_protocol import MEMORY_MASK
from keras_attention.layers.attention.additive_attention import AdditiveAttention
from keras_attention.layers.attention.dot_product_attention import DotProductAttention
from keras_attention.layers.attention.score_modes import ATTENTION_SCORES
from keras_attention.layers.recurrent.attention_decoder import ATTENTION_STYLES
from keras_attention.layers.recurrent.attention_decoder import LOCATION_FEATURES
from keras_attention.layers.recurrent.attention_decoder import AttentionDecoder
from keras_attention.models import recurrent_decoding
from keras_attention.models.constructor_config import ConstructorConfig
from keras_attention.models.constructor_config import model_builder
from keras_attention.models.default_compile import DefaultCompile
from keras_attention.models.translation.text_translation_mixin import TextTranslationMixin
from keras_attention.ops.masks import PADDING_ID

CELLS = {
    "gru": (keras.layers.GRU, keras.layers.GRUCell),
    "lstm": (keras.layers.LSTM, keras.layers.LSTMCell),
}
# Bahdanau's additive score, or one of `DotProductAttention`'s (Luong's and keras' "concat").
ATTENTIONS = ATTENTION_SCORES


def _attention_layer(attention, units):
    if attention == "additive":
        return AdditiveAttention(units=units, name="attention")
    return DotProductAttention(score_mode=attention, name="attention")


@keras.saving.register_keras_serializable(package="keras_attention")
class RNNAttentionTranslator(TextTranslationMixin, DefaultCompile, ConstructorConfig, keras.Model):
    """An attentional RNN encoder-decoder for translation.

    The encoder is a bidirectional GRU or LSTM over the embedded source; its
    outputs, projected to `units` features, are the memory the decoder
    attends to, and its final forward and backward states, concatenated and
    projected (`tanh(W [h_fwd; h_bwd])`, one projection per cell state), start
    the decoder. The decoder is an `AttentionDecoder`:

    - `attention_style="bahdanau"`: the previous state attends, the context
      feeds the cell, the output is `[s_t; c_t]`;
    - `attention_style="luong"`: the new state attends and the output is
      `tanh(W_c [c_t; s_t])`, fed back to the cell with `input_feeding=True`.

    With `location_features` the scores also see where the decoder attended
    before (`"coverage"`: the sum of the past alignments; `"location"`: a
    convolution of the previous one; see `AttentionDecoder`), which keeps it
    from repeating or skipping source words in a long target.

    The score is `"additive"` (`v^T tanh(W_q s + W_k h)`), `"dot"`
    (`s . h`), `"general"` (`s^T W h`), `"scaled_dot"` or `"concat"`
    (`c * sum(tanh(s + h))`, keras' mode); the memory has the decoder
    state's size, `units`, as the last three need. A Dense layer maps
    each decoder output to float32 logits. Id 0 is padding: padded source
    tokens are skipped by the encoder and hidden from the attention.

    A functional model that decodes itself, as every translator
    (`TextTranslationMixin` says what they share).

    Args:
        source_vocabulary_size: number of source token ids.
        target_vocabulary_size: number of target token ids.
        embedding_dim: width of the token embeddings.
        units: width of each encoder direction, of the memory and of the
            decoder cell.
        cell: `"gru"` or `"lstm"`.
        attention: `"additive"`, or a `DotProductAttention` score mode:
            `"scaled_dot"`, `"dot"`, `"general"` or `"concat"`.
        attention_style: `"bahdanau"` or `"luong"`.
        input_feeding: feed the previous attentional vector to the cell
            (`"luong"` only).
        location_features: None, `"coverage"` or `"location"`.
        dropout: dropout on the embeddings and on the decoder outputs.
        **kwargs: `keras.Model` arguments (`name`, `trainable`).

    Call arguments:
        inputs: `{"source": (B, S) int, "target": (B, T) int}`.

    Returns:
        logits `(B, T, target_vocabulary_size)` in float32.

    Example:

    >>> import numpy as np
    >>> from keras_attention.models.translation.rnn_attention_translator import (
    ...     RNNAttentionTranslator)
    >>> model = RNNAttentionTranslator(
    ...     source_vocabulary_size=20, target_vocabulary_size=30, embedding_dim=8, units=16,
    ...     cell="lstm", attention="general", attention_style="luong", input_feeding=True)
    >>> logits = model({"source": np.array([[5, 6, 7, 0]]), "target": np.array([[1, 9, 4]])})
    >>> tuple(logits.shape)
    (1, 3, 30)

    One decoding step, as greedy and beam search run it:

    >>> state = model.encode(np.array([[5, 6, 7, 0]]))
    >>> cache = model.initial_cache(state, batch_size=1, max_length=5)
    >>> logits, cache, attention = model.step(np.array([1]), 0, cache, state)
    >>> tuple(logits.shape), tuple(attention.shape)
    ((1, 30), (1, 4))
    """

    # `compile()` alone: the example script's peak learning rate for this model.
    DEFAULT_LEARNING_RATE = 3e-3

    def __init__(
        self,
        source_vocabulary_size,
        target_vocabulary_size,
        embedding_dim=128,
        units=256,
        cell="gru",
        attention="additive",
        attention_style="bahdanau",
        input_feeding=False,
        dropout=0.1,
        location_features=None,
        **kwargs,
    ):
        """Checks the arguments; makes the layers, wiring each as it is made, into the graph."""
        self._check_translator_arguments(locals(), ("embedding_dim", "units"))
        if cell not in CELLS:
            raise ValueError(f"`cell` must be one of {tuple(CELLS)}. Received: cell={cell!r}")
        if attention not in ATTENTIONS:
            raise ValueError(
                f"`attention` must be one of {ATTENTIONS}. Received: attention={attention!r}"
            )
        if location_features not in LOCATION_FEATURES:
            raise ValueError(
                f"`location_features` must be one of {LOCATION_FEATURES}. "
                f"Received: location_features={location_features!r}"
            )
        if attention_style not in ATTENTION_STYLES:
            raise ValueError(
                f"`attention_style` must be one of {ATTENTION_STYLES}. "
                f"Received: attention_style={attention_style!r}"
            )
        kwargs.setdefault("name", "rnn_attention_translator")
        recurrent_layer, cell_class = CELLS[cell]

        # === Layers, wired as they are made ===
        # Each layer is made just before its first call, so that a seeded run
        # draws the same initial weights as the layer-by-layer builder did.
        source, target = self._translation_inputs()
        source_mask = ops.not_equal(source, PADDING_ID)  # (B, S)
        embedding = keras.layers.Embedding(
            source_vocabulary_size, embedding_dim, name="source_embedding"
        )
        x = self._embed_with_dropout("source", embedding, source, dropout)  # (B, S, E)
        self.source_encoder = keras.layers.Bidirectional(
            recurrent_layer(units, return_sequences=True, return_state=True),
            name="source_encoder",
        )
        self.memory_projection = keras.layers.Dense(units, name="memory_projection")
        # One bridge per cell state: [h] for a GRU, [h, c] for an LSTM.
        self.state_bridges = [
            keras.layers.Dense(units, activation="tanh", name=f"state_bridge_{index}")
            for index in range(2 if cell == "lstm" else 1)
        ]
        memory, initial_state = self._encode_source(x, source_mask)

        embedding = keras.layers.Embedding(
            target_vocabulary_size, embedding_dim, name="target_embedding"
        )
        y = self._embed_with_dropout("target", embedding, target, dropout)  # (B, T, E)
        self.attention_decoder = AttentionDecoder(
            cell_class(units),
            _attention_layer(attention, units),
            attention_style=attention_style,
            input_feeding=input_feeding,
            location_features=location_features,
            name="attention_decoder",
        )
        decoded, _ = self.attention_decoder(
            y, memory, memory_mask=source_mask, initial_state=initial_state
        )
        self.output_dropout = keras.layers.Dropout(dropout, name="decoder_output_dropout")
        decoded = self.output_dropout(decoded)
        logits = self._logits(decoded, target_vocabulary_size)  # (B, T, V)
        super().__init__(inputs={"source": source, "target": target}, outputs=logits, **kwargs)

        self.keep_config(locals())

    def _encode_source(self, embedded, source_mask, training=None):
        """The memory `(B, S, units)` and the decoder's initial cell states."""
        encoded = self.source_encoder(embedded, mask=source_mask, training=training)
        # GRU: [outputs, h_fwd, h_bwd]; LSTM: [outputs, h_fwd, c_fwd, h_bwd, c_bwd].
        outputs, final_states = encoded[0], encoded[1:]
        num_states = len(final_states) // 2
        memory = self.memory_projection(outputs)  # (B, S, units)
        cell_states = [
            bridge(ops.concatenate([final_states[index], final_states[num_states + index]], -1))
            for index, bridge in enumerate(self.state_bridges)
        ]  # each [s_fwd; s_bwd] (B, 2 * units) -> (B, units)
        return memory, cell_states

    # === Decoding protocol (keras_attention.generation) ===

    @property
    def max_length(self):
        """None: an RNN decoder has no length limit (the search's `max_length` bounds it)."""
        return None

    # No position tables: `translate` needs both lengths given.
    max_source_length = None
    max_target_length = None

    def encode(self, inputs):
        """Runs the bidirectional encoder once over source ids `(B, S)`, 0 for padding.

        Returns:
            dict of `"memory"` `(B, S, units)`, `"memory_mask"` bool
            `(B, S)`, the attention's key projection of the memory
            `"precomputed_keys"`, and the decoder's initial state (the
            bridged encoder states) as `"initial_state_<i>"` `(B, units)`.
        """
        source = ops.cast(inputs, "int32")
        source_mask = ops.not_equal(source, PADDING_ID)  # (B, S)
        memory, cell_states = self._encode_source(
            self.source_embedding(source), source_mask, training=False
        )
        return recurrent_decoding.encoder_state(
            self.attention_decoder, memory, source_mask, cell_states
        )

    def initial_cache(self, encoder_state, batch_size, max_length):
        """The decoder state before the first token: `"state_<i>"` `(B, units)`.

        The decoder starts from the encoder's bridged states, which `encode`
        computed (and beam search repeated for every beam); the state holds
        `[h]` for a GRU, `[h, c]` for an LSTM, plus the attentional vector
        with input feeding.
        """
        return recurrent_decoding.initial_cache(encoder_state)

    def step(self, token_ids, index, cache, encoder_state):
        """Decodes one position from the token `(B,)` fed there.

        Returns:
            `(logits (B, V) float32, cache, attention (B, S) float32)`, the
            attention being the decoder's alignment on the source.
        """
        embedded = self.target_embedding(ops.cast(token_ids, "int32"))  # (B, E)
        source_mask = encoder_state[MEMORY_MASK]  # (B, S)
        output, new_cache, alignment = recurrent_decoding.decoder_step(
            self.attention_decoder, embedded, cache, encoder_state, memory_mask=source_mask
        )
        return self.logits_layer(output), new_cache, alignment  # logits (B, V)


@model_builder(RNNAttentionTranslator, "rnn_attention_translator")
def rnn_attention_translator():
    """An `RNNAttentionTranslator` made from keyword arguments (see the class).

    Example:

    >>> rnn_attention_translator(source_vocabulary_size=20, target_vocabulary_size=30).cell
    'gru'
    """
