"""Cached one-token-at-a-time decoding of a `transformer_translator` model."""

from keras import ops

from keras_attention.generation.decoder_adapter import DecoderAdapter
from keras_attention.generation.decoder_adapter import MEMORY_MASK
from keras_attention.models.transformer_translator import DECODER_BLOCK_PREFIX
from keras_attention.models.transformer_translator import DECODER_FINAL_NORM
from keras_attention.models.transformer_translator import ENCODER_BLOCK_PREFIX
from keras_attention.models.transformer_translator import ENCODER_FINAL_NORM
from keras_attention.models.transformer_translator import LOGITS
from keras_attention.models.transformer_translator import PADDING_ID
from keras_attention.models.transformer_translator import SOURCE_EMBEDDING
from keras_attention.models.transformer_translator import TARGET_EMBEDDING

MEMORY = "memory"


def numbered_layers(model, prefix):
    """The layers `prefix0, prefix1, ...` of `model`, in order."""
    found = {layer.name: layer for layer in model.layers if layer.name.startswith(prefix)}
    layers = []
    while f"{prefix}{len(layers)}" in found:
        layers.append(found[f"{prefix}{len(layers)}"])
    return layers


def optional_layer(model, name):
    return next((layer for layer in model.layers if layer.name == name), None)


class TransformerTranslatorDecoder(DecoderAdapter):
    """Decodes a `transformer_translator` with fixed-size key/value caches.

    `encode` runs the encoder stack once and projects its output into every
    decoder block's cross-attention keys and values. `step` embeds one
    target token at its position and runs it through the decoder blocks,
    which write its self-attention keys and values into per-block caches
    `(B, 2, max_length, heads, key_dim)`, so each step costs one position,
    not the whole prefix. The attention it returns is the last decoder
    block's cross-attention averaged over the heads.

    The layers are found by name, so a model re-loaded from a `.keras` file
    works as well as the one built by `transformer_translator`.

    Args:
        model: a model built by `transformer_translator`.

    Example:

    >>> import numpy as np
    >>> from keras_attention.models.transformer_translator import transformer_translator
    >>> model = transformer_translator(
    ...     source_vocabulary_size=12, target_vocabulary_size=10, max_source_length=6,
    ...     max_target_length=5, hidden_dim=8, num_layers=1, num_heads=2, intermediate_dim=16)
    >>> decoder = TransformerTranslatorDecoder(model)
    >>> state = decoder.encode(np.array([[4, 5, 6, 0]]))
    >>> cache = decoder.initial_cache(state, batch_size=1, max_length=5)
    >>> logits, cache, attention = decoder.step(np.array([1]), 0, cache, state)
    >>> tuple(logits.shape), tuple(attention.shape)
    ((1, 10), (1, 4))
    """

    def __init__(self, model):
        required = (SOURCE_EMBEDDING, TARGET_EMBEDDING, LOGITS)
        present = {layer.name for layer in model.layers}
        self.encoder_blocks = numbered_layers(model, ENCODER_BLOCK_PREFIX)
        self.decoder_blocks = numbered_layers(model, DECODER_BLOCK_PREFIX)
        if not set(required) <= present or not self.encoder_blocks or not self.decoder_blocks:
            raise ValueError(
                "`model` must be a Transformer translator with layers "
                f"{required + ('encoder_block_0', 'decoder_block_0')}. "
                f"Received: model with layers {sorted(present)}"
            )
        self.model = model
        self.source_embedding = model.get_layer(SOURCE_EMBEDDING)
        self.target_embedding = model.get_layer(TARGET_EMBEDDING)
        self.encoder_final_norm = optional_layer(model, ENCODER_FINAL_NORM)
        self.decoder_final_norm = optional_layer(model, DECODER_FINAL_NORM)
        self.logits_layer = model.get_layer(LOGITS)
        self.vocabulary_size = self.logits_layer.units
        self.max_length = self.target_embedding.sequence_length

    def encode(self, inputs):
        source = ops.cast(inputs, "int32")
        source_mask = ops.not_equal(source, PADDING_ID)  # (B, S)
        x = self.source_embedding(source)  # (B, S, D)
        for block in self.encoder_blocks:
            x = block(x, padding_mask=source_mask, training=False)
        if self.encoder_final_norm is not None:
            x = self.encoder_final_norm(x)
        state = {MEMORY: x, MEMORY_MASK: source_mask}
        for index, block in enumerate(self.decoder_blocks):
            state[f"cross_attention_cache_{index}"] = block.compute_cross_attention_cache(x)
        return state

    def initial_cache(self, encoder_state, batch_size, max_length):
        cache = {}
        for index, block in enumerate(self.decoder_blocks):
            key_dim = block.key_dim or self.target_embedding.embedding_dim // block.num_heads
            shape = (batch_size, 2, max_length, block.num_heads, key_dim)
            cache[f"self_attention_cache_{index}"] = ops.zeros(shape, block.compute_dtype)
        return cache

    def step(self, token_ids, index, cache, encoder_state):
        tokens = ops.cast(token_ids, "int32")[:, None]  # (B, 1)
        y = self.target_embedding(tokens, start_index=index)  # (B, 1, D)
        new_cache = {}
        for number, block in enumerate(self.decoder_blocks):
            name = f"self_attention_cache_{number}"
            y, _, cross_scores, new_cache[name], _ = block(
                y,
                encoder_state[MEMORY],
                context_padding_mask=encoder_state[MEMORY_MASK],
                self_attention_cache=cache[name],
                self_attention_cache_update_index=index,
                cross_attention_cache=encoder_state[f"cross_attention_cache_{number}"],
                return_attention_scores=True,
                training=False,
            )
        if self.decoder_final_norm is not None:
            y = self.decoder_final_norm(y)
        logits = self.logits_layer(y)[:, 0]  # (B, V)
        attention = ops.mean(ops.cast(cross_scores[:, :, 0], "float32"), axis=1)  # (B, S)
        return logits, new_cache, attention
