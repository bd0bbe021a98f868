"""The decoding protocol: what greedy and beam search, export and plots ask of a model.

A model decodes itself when it has `encode`, `initial_cache` and `step`
(documented by `DecoderAdapter`) and the attributes `vocabulary_size` and
`max_length`; the translators and captioners of `keras_attention.models`
do, and so can a user's model. Searches, exports and plots reach a model
only through these members, never through its layers. A captioner also
has `image_shape`, the `(height, width)` images are resized to, and
`grid_size`, the `(h, w)` of its attention maps, which serving reads; its
`step` returns the attention over the feature grid `(B, h, w)`, so that the
searches return the attention maps `(B, T, h, w)` of the decoded words.
"""

# The entry of `encode`'s dict that says which encoder positions exist.
MEMORY_MASK = "memory_mask"
# What greedy and beam search use of a model.
DECODING_METHODS = ("encode", "initial_cache", "step")
DECODING_ATTRIBUTES = ("vocabulary_size", "max_length")
# What serving adds for a captioner.
CAPTIONER_ATTRIBUTES = ("image_shape", "grid_size")


class DecoderAdapter:
    """Runs a model's decoder one token at a time for greedy and beam search.

    This is the decoding protocol. A model may implement it itself, as
    `TransformerTranslator` and `RNNAttentionTranslator` do, and is then its
    own decoder; an adapter wraps a model that does not. A search never
    looks inside a model: it asks the model (or adapter) to

    1. `encode(inputs)` once: a dict of batch-first tensors (the encoder
       output, its projections, masks) that stays fixed while decoding. Its
       `"memory_mask"` entry, bool `(B, S...)`, tells which encoder positions
       exist (True) and gives the shape of the attention weights per token:
       `(B, S)` for a source sentence, `(B, H, W)` for an image feature map.
    2. `initial_cache(encoder_state, batch_size, max_length)`: a dict of
       fixed-shape, batch-first tensors (key/value caches, RNN states).
    3. `step(token_ids, index, cache, encoder_state)` for `index = 0, 1, ...`:
       feeds the previous token `(B,)` at position `index` and returns the
       logits of the next one `(B, V)`, the updated cache (same structure,
       shapes and dtypes) and the attention weights on the encoder output
       `(B, S...)`.

    Beam search repeats every `encoder_state` and cache tensor along the
    batch axis (once per beam) and reorders the cache rows between steps, so
    every entry must have the batch first. Subclasses set `vocabulary_size`
    and `max_length` (the longest decoding the model supports, or None).

    Attributes:
        vocabulary_size: number of output token ids (the logits' last axis).
        max_length: most tokens the decoder can produce, or None for no limit.

    Example:

    A decoder whose next token depends only on the previous one (a fixed
    table of bigram logits), with nothing to encode:

    >>> import numpy as np
    >>> from keras import ops
    >>> from keras_attention.generation.decoding_protocol import DecoderAdapter
    >>> from keras_attention.generation.greedy_search import greedy_search
    >>> class BigramDecoder(DecoderAdapter):
    ...     vocabulary_size, max_length = 4, None
    ...     table = np.log(np.array([[1, 1, 1, 1], [1, 1, 1, 6], [1, 1, 1, 1],
    ...                              [1, 1, 6, 1]], "float32"))  # 1 -> 3 -> 2
    ...     def encode(self, inputs):
    ...         return {"memory_mask": ops.ones_like(inputs, dtype="bool")}
    ...     def initial_cache(self, encoder_state, batch_size, max_length):
    ...         return {}
    ...     def step(self, token_ids, index, cache, encoder_state):
    ...         logits = ops.take(self.table, token_ids, axis=0)  # (B, V)
    ...         attention = ops.cast(encoder_state["memory_mask"], "float32")
    ...         return logits, cache, attention
    >>> tokens, attention = greedy_search(
    ...     BigramDecoder(), np.zeros((1, 2), "int32"), start_id=1, end_id=2, max_length=4)
    >>> np.asarray(tokens).tolist()
    [[3, 2, 0, 0]]
    """

    vocabulary_size = None
    max_length = None

    def encode(self, inputs):
        """Runs the encoder once.

        Args:
            inputs: the model's encoder input (source ids, images, ...).

        Returns:
            dict of batch-first tensors with a bool `"memory_mask"` `(B, S...)`.
        """
        raise NotImplementedError

    def initial_cache(self, encoder_state, batch_size, max_length):
        """The decoder's state before the first token.

        Args:
            encoder_state: what `encode` returned.
            batch_size: number of sequences decoded together (an int, or
                a scalar tensor when the batch is known only at run time).
            max_length: number of positions the caches must hold.

        Returns:
            dict of batch-first tensors of fixed shape.
        """
        raise NotImplementedError

    def step(self, token_ids, index, cache, encoder_state):
        """Decodes one position.

        Args:
            token_ids: `(B,)` int32, the token at position `index`.
            index: scalar int32 tensor, the position of `token_ids`.
            cache: the cache of the previous step (or `initial_cache`).
            encoder_state: what `encode` returned.

        Returns:
            `(logits (B, V), cache, attention (B, S...))`.
        """
        raise NotImplementedError


def missing_protocol_methods(model):
    """The decoding-protocol methods `model` lacks (or has as non-callables).

    Example:

    >>> missing_protocol_methods(object())
    ['encode', 'initial_cache', 'step']
    """
    return [name for name in DECODING_METHODS if not callable(getattr(model, name, None))]


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

    >>> from keras_attention.models.translation.transformer_translator import transformer_translator
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
    missing = missing_protocol_methods(model)
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

    >>> from keras_attention.models.captioning.transformer_captioner import transformer_captioner
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
