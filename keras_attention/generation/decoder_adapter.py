"""The interface between a trained model and the search algorithms."""

MEMORY_MASK = "memory_mask"


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
    >>> from keras_attention.generation.decoder_adapter import DecoderAdapter
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
