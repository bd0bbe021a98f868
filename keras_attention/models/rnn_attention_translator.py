"""The RNN encoder-decoder translator with attention (Bahdanau or Luong).

Bahdanau et al., "Neural Machine Translation by Jointly Learning to Align and
Translate" (https://arxiv.org/abs/1409.0473); Luong et al., "Effective
Approaches to Attention-based Neural Machine Translation"
(https://arxiv.org/abs/1508.04025).
"""

import keras
from keras import ops

from keras_attention.layers.additive_attention import AdditiveAttention
from keras_attention.layers.attention_decoder import ATTENTION_STYLES
from keras_attention.layers.attention_decoder import AttentionDecoder
from keras_attention.layers.dot_product_attention import DotProductAttention

# Stable layer names: decoding (keras_attention.generation) finds layers by them,
# also in a model re-loaded from a `.keras` file.
SOURCE_EMBEDDING = "source_embedding"
SOURCE_ENCODER = "source_encoder"
MEMORY_PROJECTION = "memory_projection"
STATE_BRIDGE_PREFIX = "state_bridge_"
TARGET_EMBEDDING = "target_embedding"
ATTENTION_DECODER = "attention_decoder"
LOGITS = "logits"
PADDING_ID = 0

CELLS = {
    "gru": (keras.layers.GRU, keras.layers.GRUCell),
    "lstm": (keras.layers.LSTM, keras.layers.LSTMCell),
}
ATTENTIONS = ("additive", "dot", "general", "scaled_dot")


def _check_positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"`{name}` must be a positive integer. Received: {name}={value!r}")


def _attention_layer(attention, units):
    if attention == "additive":
        return AdditiveAttention(units=units, name="attention")
    return DotProductAttention(score_mode=attention, name="attention")


def rnn_attention_translator(
    *,
    source_vocabulary_size,
    target_vocabulary_size,
    embedding_dim=128,
    units=256,
    cell="gru",
    attention="additive",
    attention_style="bahdanau",
    input_feeding=False,
    dropout=0.1,
    name="rnn_attention_translator",
):
    """Builds an attentional RNN encoder-decoder for translation.

    The encoder is a bidirectional GRU or LSTM over the embedded source; its
    outputs, projected to `units` features, are the memory the decoder
    attends to, and its final forward and backward states, concatenated and
    projected (`tanh(W [h_fwd; h_bwd])`, one projection per cell state), start
    the decoder. The decoder is an `AttentionDecoder`:

    - `attention_style="bahdanau"`: the previous state attends, the context
      feeds the cell, the output is `[s_t; c_t]`;
    - `attention_style="luong"`: the new state attends and the output is
      `tanh(W_c [c_t; s_t])`, fed back to the cell with `input_feeding=True`.

    The score is `"additive"` (`v^T tanh(W_q s + W_k h)`), `"dot"`
    (`s . h`), `"general"` (`s^T W h`) or `"scaled_dot"`. A Dense layer maps
    each decoder output to float32 logits. Id 0 is padding: padded source
    tokens are skipped by the encoder and hidden from the attention.

    The layers have stable names (`"source_embedding"`, `"source_encoder"`,
    `"memory_projection"`, `"state_bridge_0"`, `"target_embedding"`,
    `"attention_decoder"`, `"logits"`) that
    `keras_attention.generation.decoder_for_model` uses to decode one token
    at a time.

    Args:
        source_vocabulary_size: number of source token ids.
        target_vocabulary_size: number of target token ids.
        embedding_dim: width of the token embeddings.
        units: width of each encoder direction, of the memory and of the
            decoder cell.
        cell: `"gru"` or `"lstm"`.
        attention: `"additive"`, `"dot"`, `"general"` or `"scaled_dot"`.
        attention_style: `"bahdanau"` or `"luong"`.
        input_feeding: feed the previous attentional vector to the cell
            (`"luong"` only).
        dropout: dropout on the embeddings and on the decoder outputs.
        name: name of the model.

    Returns:
        A `keras.Model` taking `{"source": (B, S) int, "target": (B, T) int}`
        and returning logits `(B, T, target_vocabulary_size)` in float32.

    Example:

    >>> import numpy as np
    >>> from keras_attention.models.rnn_attention_translator import rnn_attention_translator
    >>> model = rnn_attention_translator(
    ...     source_vocabulary_size=20, target_vocabulary_size=30, embedding_dim=8, units=16,
    ...     cell="lstm", attention="general", attention_style="luong", input_feeding=True)
    >>> logits = model({"source": np.array([[5, 6, 7, 0]]), "target": np.array([[1, 9, 4]])})
    >>> tuple(logits.shape)
    (1, 3, 30)
    """
    for argument, value in (
        ("source_vocabulary_size", source_vocabulary_size),
        ("target_vocabulary_size", target_vocabulary_size),
        ("embedding_dim", embedding_dim),
        ("units", units),
    ):
        _check_positive_int(argument, value)
    if cell not in CELLS:
        raise ValueError(f"`cell` must be one of {tuple(CELLS)}. Received: cell={cell!r}")
    if attention not in ATTENTIONS:
        raise ValueError(
            f"`attention` must be one of {ATTENTIONS}. Received: attention={attention!r}"
        )
    if attention_style not in ATTENTION_STYLES:
        raise ValueError(
            f"`attention_style` must be one of {ATTENTION_STYLES}. "
            f"Received: attention_style={attention_style!r}"
        )
    if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0 <= dropout < 1:
        raise ValueError(f"`dropout` must be a float in [0, 1). Received: dropout={dropout!r}")
    recurrent_layer, cell_class = CELLS[cell]

    source = keras.Input((None,), dtype="int32", name="source")
    target = keras.Input((None,), dtype="int32", name="target")
    source_mask = ops.not_equal(source, PADDING_ID)  # (B, S)

    x = keras.layers.Embedding(source_vocabulary_size, embedding_dim, name=SOURCE_EMBEDDING)(source)
    x = keras.layers.Dropout(dropout, name=f"{SOURCE_EMBEDDING}_dropout")(x)
    encoded = keras.layers.Bidirectional(
        recurrent_layer(units, return_sequences=True, return_state=True), name=SOURCE_ENCODER
    )(x, mask=source_mask)
    # GRU: [outputs, h_fwd, h_bwd]; LSTM: [outputs, h_fwd, c_fwd, h_bwd, c_bwd].
    outputs, final_states = encoded[0], encoded[1:]
    num_states = len(final_states) // 2
    memory = keras.layers.Dense(units, name=MEMORY_PROJECTION)(outputs)  # (B, S, units)
    initial_state = [
        keras.layers.Dense(units, activation="tanh", name=f"{STATE_BRIDGE_PREFIX}{index}")(
            ops.concatenate([final_states[index], final_states[num_states + index]], axis=-1)
        )  # (B, 2 * units) -> (B, units)
        for index in range(num_states)
    ]

    y = keras.layers.Embedding(target_vocabulary_size, embedding_dim, name=TARGET_EMBEDDING)(target)
    y = keras.layers.Dropout(dropout, name=f"{TARGET_EMBEDDING}_dropout")(y)
    decoded, _ = AttentionDecoder(
        cell_class(units),
        _attention_layer(attention, units),
        attention_style=attention_style,
        input_feeding=input_feeding,
        name=ATTENTION_DECODER,
    )(y, memory, memory_mask=source_mask, initial_state=initial_state)
    decoded = keras.layers.Dropout(dropout, name="decoder_output_dropout")(decoded)
    # float32 logits even under mixed precision: a stable softmax and loss.
    logits = keras.layers.Dense(target_vocabulary_size, dtype="float32", name=LOGITS)(decoded)
    return keras.Model({"source": source, "target": target}, logits, name=name)
