"""Grouped-query attention: groups of query heads share one key/value head."""

import keras
from keras import ops

from keras_attention.layers.attention.head_attention_checks import check_attention_bias
from keras_attention.layers.attention.head_attention_checks import check_key_value_shapes
from keras_attention.layers.attention.head_attention_checks import sizes_match
from keras_attention.layers.attention.head_attention_steps import HeadAttentionSteps
from keras_attention.layers.attention.projection_settings import projection_sublayer_kwargs
from keras_attention.ops.masks import boolean_mask
from keras_attention.ops.masks import merge_masks
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
        dropout: dropout rate on the attention weights, in [0, 1).
        use_bias: whether the projections have biases.
        sliding_window: optional positive int; a query sees only keys less
            than `sliding_window` positions away (a symmetric band; combine
            with `use_causal_mask=True` for causal local attention).
        flash_attention: None or bool. True selects `implementation="fused"`
            (when `implementation` is "auto"); False forbids "fused".
        kernel_initializer: initializer of the projection kernels.
        bias_initializer: initializer of the projection biases.
        kernel_regularizer: regularizer of the projection kernels.
        bias_regularizer: regularizer of the projection biases.
        activity_regularizer: regularizer of the layer's output.
        kernel_constraint: constraint of the projection kernels.
        bias_constraint: constraint of the projection biases.
        use_gate: multiply the attention output by `sigmoid(W_g query)` per
            query head before the output projection (gated attention).
        seed: optional int seed of the attention dropout.
        implementation: "auto", "xla", "chunked" or "fused", see
            `keras_attention.ops.dot_product_attention`. When attention scores
            are requested, "fused" computes with "xla"; when dropout is active,
            "chunked" and "fused" compute with "xla".
        rotary_max_wavelength: None, or the base wavelength of a rotary
            position embedding applied to the projected queries and keys
            (`head_dim` must then be even).
        **kwargs: base `keras.layers.Layer` arguments (`name`, `dtype`, ...).

    Call arguments:
        query: `(B, T, dim)`.
        value: `(B, S, value_dim)`. With a cache and `cache_update_index=None`
            it is not used.
        key: optional `(B, S, key_dim)`; defaults to `value`.
        query_mask, value_mask, key_mask: optional `(B, T)` / `(B, S)` padding
            masks; filled in from the Keras masks of the inputs. With a cache,
            `value_mask` and `key_mask` are ignored (use `attention_mask`).
        attention_mask: optional boolean mask, True = may attend, `(T, S)`,
            `(B, T, S)` or `(B, num_query_heads, T, S)` (any axis may be 1 to
            broadcast). With a cache, S is the cache length.
        return_attention_scores: also return the attention weights.
        training: whether dropout is active.
        use_causal_mask: query i sees keys 0..i only (with a cache, query i
            is at position `cache_update_index + i`).
        attention_bias: optional float tensor added to the scaled scores
            `q k^T / sqrt(head_dim)` before masking and softmax, one per
            query head (query heads of a group share keys, not biases):
            `(B, num_query_heads, T, S)`, `(B, T, S)` or `(T, S)`, any axis 1
            to broadcast. A masked key stays masked whatever its bias;
            gradients reach the bias. Every implementation takes it, and the
            returned scores include it. With a cache, S is the cache length.
            Not handed to an overridden `_compute_attention`.
        cache: optional `(B, 2, max_length, num_key_value_heads, head_dim)`
            tensor of the projected keys (index 0) and values (index 1).
        cache_update_index: with a cache, the position of the first query
            (int or scalar tensor): the projected keys and values of `key` and
            `value` are written there and positions after the new ones are
            hidden. None uses the cache as it is (cross-attention; build such a
            cache with `compute_cache(value, key)`).

    Returns:
        `output` of shape `(B, T, dim)`; with `return_attention_scores=True`
        `(output, scores)` with scores `(B, num_query_heads, T, S)`; with a
        cache `(output, cache)`; with both `(output, scores, cache)`.

    Example:

    >>> import numpy as np
    >>> from keras_attention.layers.attention.grouped_query_attention import GroupQueryAttention
    >>> layer = GroupQueryAttention(head_dim=4, num_query_heads=4, num_key_value_heads=2)
    >>> query = np.random.rand(3, 5, 8).astype("float32")
    >>> value = np.random.rand(3, 7, 8).astype("float32")
    >>> output, scores = layer(query, value, return_attention_scores=True)
    >>> tuple(output.shape), tuple(scores.shape)
    ((3, 5, 8), (3, 4, 5, 7))
    >>> tuple(layer.key_dense.kernel.shape)  # 2 key heads serve 4 query heads
    (8, 2, 4)
    >>> cache = np.zeros((3, 2, 10, 2, 4), "float32")  # (B, 2, max_length, 2 heads, 4)
    >>> step, cache = layer(query[:, :1], query[:, :1], cache=cache, cache_update_index=0)
    >>> tuple(step.shape), tuple(cache.shape)
    ((3, 1, 8), (3, 2, 10, 2, 4))
    """

    def __init__(
        self,
        head_dim,
        num_query_heads,
        num_key_value_heads,
        dropout=0.0,
        use_bias=True,
        sliding_window=None,
        flash_attention=None,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        use_gate=False,
        seed=None,
        implementation="auto",
        rotary_max_wavelength=None,
        **kwargs,
    ):
        """Check the arguments (keras' checks and messages) and keep them."""
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        check_positive_int("head_dim", head_dim)
        check_positive_int("num_query_heads", num_query_heads)
        check_positive_int("num_key_value_heads", num_key_value_heads)
        if num_query_heads % num_key_value_heads:
            raise ValueError(
                "`num_query_heads` must be divisible by `num_key_value_heads`: each "
                "key/value head serves a group of query heads. Received: "
                f"num_query_heads={num_query_heads}, num_key_value_heads={num_key_value_heads}"
            )
        if rotary_max_wavelength is not None and head_dim % 2:
            raise ValueError(
                "Rotary embeddings rotate pairs of features, so `head_dim` must be even. "
                f"Received: head_dim={head_dim}"
            )
        self._keep_shared_settings(locals(), head_size=head_dim)
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

    def _call_heads(self, query, value, key, masks, state, cache, bias, training, return_scores):
        """Project, repeat the key/value heads per group, mask and attend."""
        self._return_attention_scores = bool(return_scores)
        overridden = type(self)._compute_attention is not GroupQueryAttention._compute_attention
        gate = self._gate_dense(query) if self.use_gate else None  # (B, T, Nq, H)
        projected_query = self._query_dense(query)  # (B, T, Nq, H)
        cache, projected_key, projected_value = self._keys_and_values(
            query, key, value, cache, state, projected_query.dtype
        )  # (B, S, Nkv, H) each
        if cache is None:
            projected_key = self._rotate(projected_key, 0)
        projected_query = self._rotate(projected_query, state.offset)
        heads = (projected_query, projected_key, projected_query, projected_key)
        all_masks = self._call_masks(masks, (query, value), heads, state, overridden)
        # An override written for keras may not take `use_causal_mask`:
        # keras hands it the causal mask inside `attention_mask`.
        causal = masks.use_causal_mask and not state.decoding
        extra = {} if overridden else {"use_causal_mask": causal}
        if bias is not None:
            bias = check_attention_bias(bias, overridden)
            extra["attention_bias"] = self._to_scores_layout(
                bias, "attention_bias", projected_query, projected_key
            )  # (B | 1, Nq | 1, T | 1, S | 1)
        # Each key/value head serves `num_repeats` consecutive query heads.
        repeated_key = ops.repeat(projected_key, self.num_repeats, axis=2)  # (B, S, Nq, H)
        repeated_value = ops.repeat(projected_value, self.num_repeats, axis=2)  # (B, S, Nq, H)
        heads_output, scores = self._compute_attention(
            projected_query,
            repeated_key,
            repeated_value,
            attention_mask=merge_masks(*all_masks),
            training=training,
            **extra,
        )  # (B, T, Nq, H), (B, Nq, T, S) or None
        return self._finish(heads_output, gate, scores, cache, return_scores)

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
        return_scores = bool(self._return_attention_scores)
        return self._attend(
            query,
            key,
            value,
            attention_mask,
            use_causal_mask,
            self._scale,
            attention_bias,
            training,
            return_scores,
        )  # (B, T, Nq, H), (B, Nq, T, S) or None

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

    def _check_cache(self, cache, query=None):
        expected = (None, 2, None, self.num_key_value_heads, self.head_dim)
        shape = tuple(cache.shape)
        if len(shape) != 5 or not all(sizes_match(a, b) for a, b in zip(shape, expected)):
            raise ValueError(
                "`cache` must have shape (batch, 2, max_length, num_key_value_heads, "
                f"head_dim) = (B, 2, S, {self.num_key_value_heads}, {self.head_dim}). "
                f"Received: cache.shape={shape}"
            )

    def compute_cache(self, value, key=None):
        """Project a whole key/value sequence into a cache, for cross-attention.

        The keys are rotated when `rotary_max_wavelength` is set, exactly as
        attention would use them, so `layer(query, value, cache=cache)` equals
        `layer(query, value, key)`.

        Args:
            value: `(B, S, dim)`.
            key: optional `(B, S, dim)`; defaults to `value`.

        Returns:
            `(B, 2, S, num_key_value_heads, head_dim)`: keys, then values.

        Example:

        >>> import numpy as np
        >>> from keras_attention.layers.attention.grouped_query_attention import GroupQueryAttention
        >>> layer = GroupQueryAttention(head_dim=4, num_query_heads=4, num_key_value_heads=1)
        >>> memory = np.random.rand(1, 6, 8).astype("float32")
        >>> query = np.random.rand(1, 3, 8).astype("float32")
        >>> full = layer(query, memory)
        >>> cache = layer.compute_cache(memory)
        >>> tuple(cache.shape)  # one key/value head: multi-query attention
        (1, 2, 6, 1, 4)
        >>> cached, _ = layer(query, memory, cache=cache)
        >>> bool(np.allclose(full, cached, atol=1e-6))
        True
        """
        self._check_built_for_cache(value)
        return self._project_cache(value, value if key is None else key)  # (B, 2, S, Nkv, H)

    def compute_output_shape(self, query_shape, value_shape, key_shape=None):
        value_shape = tuple(value_shape)
        key_shape = value_shape if key_shape is None else tuple(key_shape)
        check_key_value_shapes(key_shape, value_shape)
        return tuple(query_shape)

    def _scores_shape(self, query_shape, value_shape, cache=None):
        """(B, num_query_heads, T, S), S the cache length with a cache."""
        key_length = value_shape[1] if cache is None else cache.shape[2]
        return (query_shape[0], self.num_query_heads, query_shape[1], key_length)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "head_dim": self.head_dim,
                "num_query_heads": self.num_query_heads,
                "num_key_value_heads": self.num_key_value_heads,
                "activity_regularizer": keras.regularizers.serialize(self.activity_regularizer),
                **self._shared_settings_config(),
            }
        )
        return config


# keras exports the class as `GroupQueryAttention` and defines it as
# `GroupedQueryAttention`; both names work here too.
GroupedQueryAttention = GroupQueryAttention
