"""What greedy and beam search decode: a model that implements the decoding protocol."""

PROTOCOL_METHODS = ("encode", "initial_cache", "step")


def missing_protocol_methods(model):
    """The decoding-protocol methods `model` lacks (or has as non-callables)."""
    return [name for name in PROTOCOL_METHODS if not callable(getattr(model, name, None))]


def decoder_for_model(model):
    """The decoder for greedy and beam search: the model, when it decodes itself.

    A model that implements the decoding protocol documented by
    `DecoderAdapter` (callable `encode`, `initial_cache` and `step`, plus
    `vocabulary_size` and `max_length`), as `TransformerTranslator`,
    `RNNAttentionTranslator`, `ShowAttendTellCaptioner`,
    `TransformerCaptioner` or a user's own model do, is returned as it is.

    Args:
        model: a model that implements the decoding protocol.

    Returns:
        `model`.

    Example:

    >>> from keras_attention.models.transformer_translator import transformer_translator
    >>> model = transformer_translator(
    ...     source_vocabulary_size=12, target_vocabulary_size=10, max_source_length=6,
    ...     max_target_length=5, hidden_dim=8, num_layers=1, num_heads=2, intermediate_dim=16)
    >>> decoder_for_model(model) is model
    True
    """
    missing = missing_protocol_methods(model)
    if not missing:
        return model
    raise ValueError(
        "`model` must implement the decoding protocol (callable `encode`, "
        "`initial_cache` and `step`, as the translator and captioner models do). "
        f"Received: model={getattr(model, 'name', model)!r}, which lacks "
        f"{', '.join(missing)}"
    )
