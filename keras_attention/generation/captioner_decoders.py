"""One-token-at-a-time decoding of the image captioners, with their attention maps.

The adapters follow `DecoderAdapter`: `encode` runs the image encoder once,
`step` produces the next word's logits and the attention over the feature
grid, `(B, h, w)`, so that `greedy_search` and `beam_search` return the
attention maps `(B, T, h, w)` of the decoded words.
"""

from keras import ops

from keras_attention.generation import rnn_translator_decoder as rnn
from keras_attention.generation.decoder_adapter import MEMORY_MASK
from keras_attention.generation.transformer_translator_decoder import MEMORY
from keras_attention.generation.transformer_translator_decoder import TransformerTranslatorDecoder
from keras_attention.generation.transformer_translator_decoder import numbered_layers
from keras_attention.models.show_attend_tell_captioner import ATTENTION_DECODER
from keras_attention.models.show_attend_tell_captioner import FEATURE_POSITIONS
from keras_attention.models.show_attend_tell_captioner import IMAGE_ENCODER
from keras_attention.models.show_attend_tell_captioner import INITIAL_STATE
from keras_attention.models.show_attend_tell_captioner import WORD_EMBEDDING
from keras_attention.models.show_attend_tell_captioner import WORD_OUTPUT
from keras_attention.models.transformer_captioner import CAPTION_EMBEDDING
from keras_attention.models.transformer_captioner import DECODER_BLOCK_PREFIX
from keras_attention.models.transformer_captioner import LOGITS

def feature_grid_size(image_encoder):
    """`(h, w)` of the feature grid a captioner's image encoder attends over."""
    return tuple(image_encoder.get_layer(FEATURE_POSITIONS).grid_size)


def _check_layers(model, required, kind):
    present = {layer.name for layer in getattr(model, "layers", ())}
    if not set(required) <= present:
        raise ValueError(
            f"`model` must be a {kind} with layers {tuple(required)}. "
            f"Received: model with layers {sorted(present)}"
        )


class ShowAttendTellDecoder(rnn.RNNTranslatorDecoder):
    """Decodes a `show_attend_tell_captioner` one word at a time.

    `encode` runs the image encoder once and keeps the annotation vectors,
    the attention's key projection of them and the LSTM's initial state
    (from the mean annotation vector). The cache is the LSTM state `[h, c]`,
    laid out as the RNN translator's decoder lays it out (whose
    `initial_cache` this adapter shares); `step` embeds the previous word,
    advances the state with `AttentionDecoder.step` and applies the deep
    output layer.

    The layers are found by name, so a model re-loaded from a `.keras` file
    works as well as the one the builder returned.

    Args:
        model: a model built by `show_attend_tell_captioner`.

    Example:

    >>> import numpy as np
    >>> from keras_attention.models.show_attend_tell_captioner import show_attend_tell_captioner
    >>> model = show_attend_tell_captioner(
    ...     vocabulary_size=10, max_caption_length=6, image_size=16, embedding_dim=8,
    ...     units=16, attention_units=8)
    >>> decoder = ShowAttendTellDecoder(model)
    >>> state = decoder.encode(np.zeros((2, 16, 16, 3), "float32"))
    >>> cache = decoder.initial_cache(state, batch_size=2, max_length=6)
    >>> logits, cache, attention = decoder.step(np.array([2, 2]), 0, cache, state)
    >>> tuple(logits.shape), tuple(attention.shape)  # attention over the 4x4 grid
    ((2, 10), (2, 4, 4))
    """

    def __init__(self, model):
        _check_layers(
            model,
            (
                IMAGE_ENCODER,
                INITIAL_STATE,
                WORD_EMBEDDING,
                ATTENTION_DECODER,
                WORD_OUTPUT,
            ),
            "Show, Attend and Tell captioner",
        )
        self.model = model
        self.image_encoder = model.get_layer(IMAGE_ENCODER)
        self.initial_state = model.get_layer(INITIAL_STATE)
        self.word_embedding = model.get_layer(WORD_EMBEDDING)
        self.attention_decoder = model.get_layer(ATTENTION_DECODER)
        self.word_output = model.get_layer(WORD_OUTPUT)
        self.grid_size = feature_grid_size(self.image_encoder)
        self.vocabulary_size = self.word_output.outputs[0].shape[-1]
        # An LSTM has no length limit; the searches' `max_length` bounds decoding.
        self.max_length = None

    def encode(self, inputs):
        features = self.image_encoder(ops.cast(inputs, "float32"), training=False)  # (B, h, w, D)
        cell_states = self.initial_state(features, training=False)  # [h_0, c_0]
        state = {
            rnn.MEMORY: features,
            MEMORY_MASK: ops.ones(ops.shape(features)[:3], dtype="bool"),  # (B, h, w)
            rnn.PRECOMPUTED_KEYS: self.attention_decoder.precompute_memory(features),
        }
        initial = self.attention_decoder.initial_decoder_state(list(cell_states))
        for index, value in enumerate(initial):
            state[f"{rnn.INITIAL_STATE_PREFIX}{index}"] = value
        return state

    def step(self, token_ids, index, cache, encoder_state):
        embedded = self.word_embedding(ops.cast(token_ids, "int32"))  # (B, E)
        states = [cache[f"{rnn.STATE_PREFIX}{number}"] for number in range(len(cache))]
        output, states, alignment = self.attention_decoder.step(
            embedded,
            states,
            encoder_state[rnn.MEMORY],
            precomputed_keys=encoder_state[rnn.PRECOMPUTED_KEYS],
            training=False,
        )
        # The deep output layer reads sequences: a sequence of one step.
        logits = self.word_output([output[:, None], embedded[:, None]], training=False)[:, 0]
        new_cache = {f"{rnn.STATE_PREFIX}{number}": value for number, value in enumerate(states)}
        return logits, new_cache, ops.cast(alignment, "float32")


class TransformerCaptionerDecoder(TransformerTranslatorDecoder):
    """Decodes a `transformer_captioner` with fixed-size key/value caches.

    The decoder half is that of the Transformer translator
    (`TransformerTranslatorDecoder`: per-block self-attention caches, the
    image tokens projected once into every block's cross-attention keys and
    values); `encode` runs the image encoder instead of a source encoder, and
    the attention of each step, the last block's cross-attention averaged
    over the heads, comes back on the feature grid, `(B, h, w)`.

    The layers are found by name, so a model re-loaded from a `.keras` file
    works as well as the one the builder returned.

    Args:
        model: a model built by `transformer_captioner`.

    Example:

    >>> import numpy as np
    >>> from keras_attention.models.transformer_captioner import transformer_captioner
    >>> model = transformer_captioner(
    ...     vocabulary_size=10, max_caption_length=6, image_size=16, hidden_dim=16,
    ...     num_layers=1, num_heads=2, intermediate_dim=32)
    >>> decoder = TransformerCaptionerDecoder(model)
    >>> state = decoder.encode(np.zeros((2, 16, 16, 3), "float32"))
    >>> cache = decoder.initial_cache(state, batch_size=2, max_length=6)
    >>> logits, cache, attention = decoder.step(np.array([2, 2]), 0, cache, state)
    >>> tuple(logits.shape), tuple(attention.shape)  # attention over the 4x4 grid
    ((2, 10), (2, 4, 4))
    """

    def __init__(self, model):
        required = (
            IMAGE_ENCODER,
            CAPTION_EMBEDDING,
            f"{DECODER_BLOCK_PREFIX}0",
            LOGITS,
        )
        _check_layers(model, required, "Transformer captioner")
        self.model = model
        self.image_encoder = model.get_layer(IMAGE_ENCODER)
        self.grid_size = feature_grid_size(self.image_encoder)
        self.target_embedding = model.get_layer(CAPTION_EMBEDDING)
        self.decoder_blocks = numbered_layers(model, DECODER_BLOCK_PREFIX)
        self.decoder_final_norm = None  # the captioner's blocks are post-norm
        self.logits_layer = model.get_layer(LOGITS)
        self.vocabulary_size = self.logits_layer.units
        self.max_length = self.target_embedding.sequence_length

    def encode(self, inputs):
        tokens = self.image_encoder(ops.cast(inputs, "float32"), training=False)  # (B, h * w, D)
        height, width = self.grid_size
        grid_mask = ops.ones((ops.shape(tokens)[0], height, width), dtype="bool")  # (B, h, w)
        state = {MEMORY: tokens, MEMORY_MASK: grid_mask}
        for index, block in enumerate(self.decoder_blocks):
            state[f"cross_attention_cache_{index}"] = block.compute_cross_attention_cache(tokens)
        return state

    def step(self, token_ids, index, cache, encoder_state):
        # The blocks see the grid as a sequence of h * w image tokens.
        flat_state = dict(encoder_state)
        grid_mask = encoder_state[MEMORY_MASK]
        batch = ops.shape(grid_mask)[0]
        flat_state[MEMORY_MASK] = ops.reshape(grid_mask, (batch, -1))  # (B, h * w)
        logits, cache, attention = super().step(token_ids, index, cache, flat_state)
        attention = ops.reshape(attention, (-1,) + tuple(self.grid_size))  # (B, h, w)
        return logits, cache, attention


def captioner_decoder(model):
    """The decoder adapter for a captioning model, for greedy and beam search.

    Args:
        model: a model built by `show_attend_tell_captioner` or
            `transformer_captioner` (or re-loaded from a `.keras` file).

    Returns:
        A `ShowAttendTellDecoder` or a `TransformerCaptionerDecoder`.

    Example:

    >>> from keras_attention.models.transformer_captioner import transformer_captioner
    >>> model = transformer_captioner(
    ...     vocabulary_size=10, max_caption_length=6, image_size=16, hidden_dim=16,
    ...     num_layers=1, num_heads=2, intermediate_dim=32)
    >>> type(captioner_decoder(model)).__name__
    'TransformerCaptionerDecoder'
    """
    names = {layer.name for layer in getattr(model, "layers", ())}
    if IMAGE_ENCODER in names and ATTENTION_DECODER in names:
        return ShowAttendTellDecoder(model)
    if IMAGE_ENCODER in names and CAPTION_EMBEDDING in names:
        return TransformerCaptionerDecoder(model)
    raise ValueError(
        "`model` must be a captioner built by `show_attend_tell_captioner` (with "
        "'image_encoder' and 'attention_decoder' layers) or `transformer_captioner` (with "
        "'image_encoder' and 'caption_embedding' layers). "
        f"Received: model with layers {sorted(names)}"
    )
