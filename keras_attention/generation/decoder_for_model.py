"""Picks the decoder adapter that fits a model, from its layer names."""

from keras_attention.generation.captioner_decoders import captioner_decoder
from keras_attention.generation.rnn_translator_decoder import RNNTranslatorDecoder
from keras_attention.generation.transformer_translator_decoder import TransformerTranslatorDecoder
from keras_attention.models.rnn_attention_translator import ATTENTION_DECODER
from keras_attention.models.show_attend_tell_captioner import IMAGE_ENCODER
from keras_attention.models.transformer_translator import DECODER_BLOCK_PREFIX

# The layer that tells each model family apart, and the adapter that decodes it.
_ADAPTERS = (
    (f"{DECODER_BLOCK_PREFIX}0", TransformerTranslatorDecoder),
    (ATTENTION_DECODER, RNNTranslatorDecoder),
)


def decoder_for_model(model):
    """The decoder adapter for a translator or a captioner, for greedy and beam search.

    Recognises the model family by its layer names, so it works on the model
    a builder returned as well as on one re-loaded from a `.keras` file.

    Args:
        model: a model built by `transformer_translator`,
            `rnn_attention_translator`, `show_attend_tell_captioner` or
            `transformer_captioner`.

    Returns:
        A `TransformerTranslatorDecoder`, an `RNNTranslatorDecoder`, a
        `ShowAttendTellDecoder` or a `TransformerCaptionerDecoder`.

    Example:

    >>> from keras_attention.models.transformer_translator import transformer_translator
    >>> model = transformer_translator(
    ...     source_vocabulary_size=12, target_vocabulary_size=10, max_source_length=6,
    ...     max_target_length=5, hidden_dim=8, num_layers=1, num_heads=2, intermediate_dim=16)
    >>> type(decoder_for_model(model)).__name__
    'TransformerTranslatorDecoder'
    """
    layer_names = {layer.name for layer in getattr(model, "layers", ())}
    # Captioners reuse the translators' layer names for their decoders, so
    # their image encoder is checked first.
    if IMAGE_ENCODER in layer_names:
        return captioner_decoder(model)
    for marker, adapter in _ADAPTERS:
        if marker in layer_names:
            return adapter(model)
    raise ValueError(
        "`model` must be a translator built by `transformer_translator` (with a "
        "'decoder_block_0' layer) or `rnn_attention_translator` (with an "
        "'attention_decoder' layer), or a captioner (with an 'image_encoder' layer). "
        f"Received: model with layers {sorted(layer_names)}"
    )
