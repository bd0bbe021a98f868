"""Checks that a captioner decodes itself, for greedy and beam search, export and plots.

A captioner implements the decoding protocol of `DecoderAdapter` as its own
methods (`ShowAttendTellCaptioner` and `TransformerCaptioner` do, and so can
a user's model): `encode` runs the image encoder once, `step` produces the
next word's logits and the attention over the feature grid, `(B, h, w)`, so
that `greedy_search` and `beam_search` return the attention maps
`(B, T, h, w)` of the decoded words. Serving also reads `image_shape`, the
`(height, width)` images are resized to, and `grid_size`, the `(h, w)` of
the attention maps.
"""

# What greedy and beam search use of a model.
DECODING_METHODS = ("encode", "initial_cache", "step")
DECODING_ATTRIBUTES = ("vocabulary_size", "max_length")
# What serving adds for a captioner.
CAPTIONER_ATTRIBUTES = ("image_shape", "grid_size")


def missing_captioner_members(model, attributes=CAPTIONER_ATTRIBUTES):
    """The names of the protocol's methods and attributes `model` lacks.

    Args:
        model: any object.
        attributes: the attributes asked for beyond the decoding protocol.

    Returns:
        A list of names, empty when `model` implements the protocol.

    Example:

    >>> import keras
    >>> missing_captioner_members(keras.Sequential([keras.layers.Dense(1)]))
    ['encode', 'initial_cache', 'step', 'vocabulary_size', 'max_length', 'image_shape', 'grid_size']
    """
    missing = [name for name in DECODING_METHODS if not callable(getattr(model, name, None))]
    # `max_length` may be None (no limit), but it must be there.
    missing += [
        name for name in DECODING_ATTRIBUTES + tuple(attributes) if not hasattr(model, name)
    ]
    return missing


def captioner_decoder(model):
    """The captioner itself, checked to implement the decoding protocol.

    Args:
        model: a `ShowAttendTellCaptioner`, a `TransformerCaptioner` (also
            re-loaded from a `.keras` file) or any model with the protocol's
            `encode`, `initial_cache`, `step`, `vocabulary_size`,
            `max_length`, `image_shape` and `grid_size`.

    Returns:
        `model`.

    Example:

    >>> from keras_attention.models.transformer_captioner import transformer_captioner
    >>> model = transformer_captioner(
    ...     vocabulary_size=10, max_caption_length=6, image_size=16, hidden_dim=16,
    ...     num_layers=1, num_heads=2, intermediate_dim=32)
    >>> captioner_decoder(model) is model
    True
    """
    missing = missing_captioner_members(model)
    if missing:
        raise ValueError(
            "`model` must be a captioner that implements the decoding protocol (such as a "
            "ShowAttendTellCaptioner or a TransformerCaptioner). "
            f"Received: model={getattr(model, 'name', model)!r} without {missing}"
        )
    return model
