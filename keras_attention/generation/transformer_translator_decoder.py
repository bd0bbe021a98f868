"""The cached Transformer decoding step, as a base for the captioner's adapter.

A `TransformerTranslator` decodes itself (it implements the decoding
protocol); this base class lends its `initial_cache` and `step` to adapters
of models that do not, which set the attributes those methods read.
"""

from keras_attention.generation.decoder_adapter import DecoderAdapter
from keras_attention.models.transformer_translator import MEMORY
from keras_attention.models.transformer_translator import TransformerTranslator

__all__ = ["MEMORY", "TransformerTranslatorDecoder", "numbered_layers"]


def numbered_layers(model, prefix):
    """The layers `prefix0, prefix1, ...` of `model`, in order."""
    found = {layer.name: layer for layer in model.layers if layer.name.startswith(prefix)}
    layers = []
    while f"{prefix}{len(layers)}" in found:
        layers.append(found[f"{prefix}{len(layers)}"])
    return layers


class TransformerTranslatorDecoder(DecoderAdapter):
    """Base of adapters that decode a Transformer decoder stack with key/value caches.

    A subclass sets `target_embedding` (a `TokenAndPositionEmbedding`),
    `decoder_blocks` (`TransformerDecoderBlock`s), `decoder_final_norm`
    (a LayerNormalization or None), `logits_layer`, `vocabulary_size` and
    `max_length`, and writes an `encode` that returns `"memory"`,
    `"memory_mask"` and `"cross_attention_cache_<i>"`; the cache and the
    step are `TransformerTranslator`'s own.

    Example:

    >>> from keras_attention.generation.transformer_translator_decoder import (
    ...     TransformerTranslatorDecoder)
    >>> from keras_attention.models.transformer_translator import TransformerTranslator
    >>> TransformerTranslatorDecoder.step is TransformerTranslator.step
    True
    """

    # The translator's methods read only the attributes listed above.
    initial_cache = TransformerTranslator.initial_cache
    step = TransformerTranslator.step
