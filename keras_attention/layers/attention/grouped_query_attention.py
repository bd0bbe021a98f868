"""Grouped-query attention: groups of query heads share one key/value head."""

import keras
from keras import ops

from keras_attention.layers.attention.head_attention_checks import check_key_value_shapes
from keras_attention.layers.attention.head_attention_steps import HeadAttentionSteps
from keras_attention.layers.attention.projection_settings import projection_sublayer_kwargs
from keras_attention.ops.masks import boolean_mask
from keras_attention.validation import check_positive_int


@keras.saving.register_keras_serializable(package="keras_attention")
class GroupQueryAttention(HeadAttentionSteps, keras.layers.Layer):
    """Grouped-query attention (Ainslie et al., 2023).

    Paper: https://arxiv.org/abs/2305.13245

    The query is projected to `num_query_heads` heads, the key and the value
    to `num_key_value_heads` heads only. Query head `u` attends with key/value
    head `u // G`, where `G = num_query_heads // num_key_value_heads`: each
    group of `G` consecutive query heads shares one key/value head. Each head
    computes `softmax(q k^T / sqrt(head_dim)) v`, and the query heads are
    concatenated and projected back to the features of the query.

    `num_key_value_heads=1` is multi-query attention (Shazeer, 2019,
    https://arxiv.org/abs/1911.02150): every query head shares one key/value
    head. `num_key_value_heads=num_query_heads` is multi-head attention.

    The layer takes the constructor arguments, the call arguments and the
    weights of `keras.layers.GroupQueryAttention` (sublayers "query", "key",
    ["gate",] "value", "attention_output", created in that order with the same
    shapes), so `layer.set_weights(keras_gqa.get_weights())` reproduces the
    keras layer. On top of that it offers what
    `keras_attention.layers.MultiHeadAttention` offers:

    - `implementation`: the attention kernel of
      `keras_attention.ops.dot_product_attention` ("chunked" included).
    - `rotary_max_wavelength`: rotary position embedding of the projected
      queries and keys (Su et al., https://arxiv.org/abs/2104.09864).
    - `cache` / `cache_update_index`: incremental decoding with a key/value
      cache of fixed size that holds `num_key_value_heads` heads.
    - `attention_mask` with a head axis, `(B, num_query_heads, T, S)`.
    - `attention_bias`: a float tensor added to the scaled scores of each
      query head, for relative position biases such as `AlibiBias` or
      `RelativePositionBias`.

    The cache is where grouping pays: it holds
    `B * 2 * max_length * num_key_value_heads * head_dim` numbers instead of
    the `B * 2 * max_length * num_query_heads * head_dim` of multi-head
    attention with the same query heads, `num_query_heads /
    num_key_value_heads` times fewer. With 64 query heads, 8 key/value heads,
    `head_dim=128`, `max_length=4096`, `B=1` and float16, one layer's cache
    takes 2 * 4096 * 8 * 128 * 2 bytes = 16 MiB instead of 128 MiB. (Each
    call repeats the key/value heads `G` times for the attention step; that
    copy is transient and is not kept in the cache.)

    Differences from keras: a query that may attend to no key gets an attention
    output of 0 (weights 0) instead of a uniform average over all keys; float
    attention masks are refused (an additive 0 / -1e9 mask read as `mask != 0`
    would be inverted); `activity_regularizer` regularizes the layer's output
    (a base `Layer` argument) rather than each projection; `flash_attention`
    follows `MultiHeadAttention` (True selects the "fused" kernel, and
    dropout or attention scores then compute with "xla" instead of raising;
    `keras.config.enable_flash_attention()` is not read);
    `value` may have a feature size other than the query's.

    Args:
        head_dim: size of each attention head (queries, keys and values), a
            positive int.
        num_query_heads: number of query heads, a positive int divisible by
            `num_key_value_heads`.
        num_key_value_heads: number of key and value heads (groups), a
            positive int; 1 is multi-query attention.
        dropout, use_bias: as in `MultiHeadAttention`.

        The arguments below are keyword-only:

        activity_regularizer: regularizer of the layer's output.
        sliding_window, flash_attention,
        kernel_initializer, bias_initializer, kernel_regularizer,
        bias_regularizer, kernel_constraint, bias_constraint, use_gate, seed,
        implementation, rotary_max_wavelength: as in `MultiHeadAttention`,
            with `head_dim` as the head size; the gate has one head per query head.
        **kwargs: base `keras.layers.Layer` arguments (`name`, `dtype`, ...).

    Call arguments:
        The call takes the arguments of `MultiHeadAttention` on sequences
        (`query` `(B, T, dim)`, `value` and `key` `(B, S, any features)`), in
        the layout of this layer's heads:

        - `attention_mask`: boolean, True = may attend, `(T, S)`, `(B, T, S)`
          or `(B, num_query_heads, T, S)`, any axis 1 to broadcast.
        - `attention_bias`: float, added to the scaled scores
          `q k^T / sqrt(head_dim)`, one per query head (query heads of a group
          share keys, not biases), in the shapes of `attention_mask`.
        - `cache`: `(B, 2, max_length, num_key_value_heads, head_dim)`, the
          projected keys (index 0) and values (index 1); `cache_update_index`
          as in `MultiHeadAttention`.

    Returns:
        `output` of shape `(B, T, dim)`; with `return_attention_scores=True`
        `(output, scores)` with scores `(B, num_query_heads, T, S)`; with a
        cache `(output, cache)`; with both `(output, scores, cache)`.

    Example:

    >>> import numpy as np
    >>> from keras_attention.layers.attention.grouped_query_attention import GroupQueryAttention
    >>> layer = GroupQueryAttention(head_dim=4, num_query_heads=4, num_key_value_heads=2)
    >>> tokens = np.random.rand(3, 5, 8).astype("float32")
    >>> output, scores = layer(tokens, tokens, use_causal_mask=True, return_attention_scores=True)
    >>> tuple(output.shape), tuple(scores.shape)  # scores: one map per query head
    ((3, 5, 8), (3, 4, 5, 5))
    >>> tuple(layer.key_dense.kernel.shape)  # 2 key heads serve 4 query heads
    (8, 2, 4)

    Decoding one token at a time, the cache holds the 2 key/value heads only:

    >>> cache = np.zeros((3, 2, 10, 2, 4), "float32")  # (B, 2, max_length, Nkv, head_dim)
    >>> for index in range(2):
    ...     step, cache = layer(
    ...         tokens[:, index : index + 1], tokens[:, index : index + 1],
    ...         use_causal_mask=True, cache=cache, cache_update_index=index)
    >>> tuple(step.shape), bool(np.allclose(step[:, 0], output[:, 1], atol=1e-5))
    ((3, 1, 8), True)
    """

    def __init__(
        self,
        head_dim,
        num_query_heads,
        num_key_value_heads,
        dropout=0.0,
        use_bias=True,
        **kwargs,
    ):
        """Check the head sizes (keras' checks and messages); the base keeps the rest."""
        check_positive_int("head_dim", head_dim)
        check_positive_int("num_query_heads", num_query_heads)
        check_positive_int("num_key_value_heads", num_key_value_heads)
        if num_query_heads % num_key_value_heads:
            raise ValueError(
                "`num_query_heads` must be divisible by `num_key_value_heads`: each "
                "key/value head serves a group of query heads. Received: "
                f"num_query_heads={num_query_heads}, num_key_value_heads={num_key_value_heads}"
            )
        if kwargs.get("rotary_max_wavelength") is not None and head_dim % 2:
            raise ValueError(
                "Rotary embeddings rotate pairs of features, so `head_dim` must be even. "
                f"Received: head_dim={head_dim}"
            )
        super().__init__(head_size=head_dim, dropout=dropout, use_bias=use_bias, **kwargs)
        self.head_dim = head_dim
        self.num_query_heads = num_query_heads
        self.num_key_value_heads = num_key_value_heads
        self.num_repeats = num_query_heads // num_key_value_heads
        # keras' `_compute_attention` reads this flag instead of an argument.
        self._return_attention_scores = False

    def build(self, query_shape, value_shape, key_shape=None):
        query_shape, value_shape = tuple(query_shape), tuple(value_shape)
        key_shape = value_shape if key_shape is None else tuple(key_shape)
        check_key_value_shapes(key_shape, value_shape)
        for name, shape in (("query", query_shape), ("value", value_shape), ("key", key_shape)):
            if len(shape) != 3 or shape[-1] is None:
                raise ValueError(
                    f"`{name}` must be a sequence (batch, length, features) with known "
                    f"features. Received: {name}_shape={shape}"
                )
        query_heads = (self.num_query_heads, self.head_dim)
        shared_heads = (self.num_key_value_heads, self.head_dim)
        # Einsum letters: b batch, q/k query/key positions, m features,
        # u query heads, v key/value heads, h head_dim. Created in keras' order.
        self._query_dense = self._projection("query", "bqm,muh->bquh", query_heads, query_shape)
        self._key_dense = self._projection("key", "bkm,mvh->bkvh", shared_heads, key_shape)
        if self.use_gate:
            self._gate_dense = self._projection(
                "gate", "bqm,muh->bquh", query_heads, query_shape, activation="sigmoid"
            )
        self._value_dense = self._projection("value", "bkm,mvh->bkvh", shared_heads, value_shape)
        self._output_dense = self._projection(
            "attention_output",
            "bquh,uhm->bqm",
            (query_shape[-1],),
            (None, None) + query_heads,
        )

    def _projection(self, name, equation, output_shape, input_shape, activation=None):
        layer = keras.layers.EinsumDense(
            equation,
            output_shape=(None,) + tuple(output_shape),
            # The bias spans the output axes after the position axis.
            bias_axes=equation[-len(output_shape) :] if self.use_bias else None,
            activation=activation,
            name=name,
            **projection_sublayer_kwargs(self, constraints=True),
        )
        layer.build(input_shape)
        return layer

    def _compute_attention(
        self,
        query,
        key,
        value,
        attention_mask=None,
        training=None,
        use_causal_mask=False,
        attention_bias=None,
    ):
        """The attention step on projected heads, as keras' method of this name.

        `keras.layers.GroupQueryAttention` documents this method as the one a
        subclass overrides for a custom attention. `call` hands it the query
        heads and the key/value heads already repeated to `num_query_heads`,
        and every mask merged into `attention_mask`; an override that does not
        take `use_causal_mask` gets the causal mask inside `attention_mask`
        (and no `attention_bias`: the layer refuses one).
        Whether to compute the scores is read from
        `self._return_attention_scores`, as in keras.

        Args:
            query: `(B, T, num_query_heads, head_dim)`.
            key: `(B, S, num_query_heads, head_dim)`.
            value: `(B, S, num_query_heads, head_dim)`.
            attention_mask: optional bool, True = may attend, broadcastable to
                the scores: `(T, S)`, `(B, T, S)` or `(B, num_query_heads, T, S)`.
            training: whether dropout is active.
            use_causal_mask: also hide the keys after each query.
            attention_bias: optional float tensor added to the scaled scores,
                broadcastable to `(B, num_query_heads, T, S)`.

        Returns:
            `(output, scores)`: output `(B, T, num_query_heads, head_dim)`,
            scores `(B, num_query_heads, T, S)` or None when not asked for.
        """
        return self._attend(
            (query, key, value),
            (query, key),
            (attention_mask, use_causal_mask, attention_bias),
            self._scale,
            training,
            bool(self._return_attention_scores),
        )  # (B, T, Nq, H), (B, Nq, T, S) or None

    _DEFAULT_COMPUTE_ATTENTION = _compute_attention

    def _call_override(self, heads, projected_value, mask, training, return_scores):
        """An overridden `_compute_attention`, called as keras calls it: keys repeated."""
        # keras' `_compute_attention` reads this flag instead of an argument.
        self._return_attention_scores = bool(return_scores)
        _, _, folded_query, folded_key = heads
        return self._compute_attention(
            folded_query,
            self._shared_heads(folded_key),
            self._shared_heads(projected_value),
            attention_mask=mask,
            training=training,
        )  # (B, T, Nq, H), (B, Nq, T, S) or None

    def _shared_heads(self, folded):
        """(B, S, Nkv, H) -> (B, S, Nq, H): each key/value head serves a group of query heads."""
        return ops.repeat(folded, self.num_repeats, axis=2)

    def _to_scores_layout(self, tensor, name, projected_query, projected_key):
        """A mask or bias `name` as (B | 1, Nq | 1, T | 1, S | 1), checked against the scores."""
        shape = tuple(tensor.shape)
        lengths = (projected_query.shape[1], projected_key.shape[1])
        # (T, S), (B, T, S) or (B, Nq, T, S): the head axis is left out below rank 4.
        expected = {2: lengths, 3: (None,) + lengths, 4: (None, self.num_query_heads) + lengths}
        if len(shape) not in expected or not all(
            size in (None, 1) or wanted in (None, size)
            for size, wanted in zip(shape, expected[len(shape)])
        ):
            raise ValueError(
                f"`{name}` must broadcast to the attention scores (batch, "
                f"num_query_heads={self.num_query_heads}, query length, key length): rank 2 "
                "(T, S), 3 (B, T, S) or 4 (B, num_query_heads, T, S), any axis 1. With a "
                f"cache, the key length is the cache length. Received: {name}.shape={shape}"
            )
        while len(tensor.shape) < 4:
            tensor = ops.expand_dims(tensor, -3)  # the missing axes come before T
        return tensor

    def _padding_mask_layout(self, mask, name, reference):
        """A (B, T) padding mask as a boolean mask; `reference` is the input it describes."""
        return boolean_mask(mask, name)

    def _cache_head_sizes(self):
        """The (name, size) of the cache's head axis and of its head-size axis."""
        return ("num_key_value_heads", self.num_key_value_heads), ("head_dim", self.head_dim)

    def _scores_shape(self, query_shape, value_shape, cache=None):
        """(B, num_query_heads, T, S), S the cache length with a cache."""
        key_length = value_shape[1] if cache is None else cache.shape[2]
        return (query_shape[0], self.num_query_heads, query_shape[1], key_length)

    def _head_config(self):
        """The config entries of the head sizes (and keras' `activity_regularizer`)."""
        return {
            "head_dim": self.head_dim,
            "num_query_heads": self.num_query_heads,
            "num_key_value_heads": self.num_key_value_heads,
            "activity_regularizer": keras.regularizers.serialize(self.activity_regularizer),
        }


# keras exports the class as `GroupQueryAttention` and defines it as
# `GroupedQueryAttention`; both names work here too.
GroupedQueryAttention = GroupQueryAttention
