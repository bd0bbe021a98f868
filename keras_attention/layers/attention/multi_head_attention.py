"""Multi-head attention: a superset of `keras.layers.MultiHeadAttention`."""

import numbers
import string

import keras
from keras import ops

from keras_attention.layers.attention.head_attention_checks import check_key_value_shapes
from keras_attention.layers.attention.head_attention_checks import sizes_match
from keras_attention.layers.attention.head_attention_steps import HeadAttentionSteps
from keras_attention.layers.attention.projection_settings import projection_sublayer_kwargs
from keras_attention.ops.masks import boolean_mask


@keras.saving.register_keras_serializable(package="keras_attention")
class MultiHeadAttention(HeadAttentionSteps, keras.layers.Layer):
    """Multi-head scaled dot-product attention (Vaswani et al., 2017).

    Paper: https://arxiv.org/abs/1706.03762

    Queries, keys and values are projected per head, each head computes
    `softmax(q k^T / sqrt(key_dim)) v`, and the heads are concatenated and
    projected back. The layer takes the constructor arguments, the call
    arguments and the weights of `keras.layers.MultiHeadAttention` (sublayers
    "query", "key", ["gate",] "value", "attention_output", created in that
    order with the same shapes), so `layer.set_weights(keras_mha.get_weights())`
    reproduces the keras layer. On top of that it offers:

    - `implementation`: the attention kernel of
      `keras_attention.ops.dot_product_attention`.
    - `rotary_max_wavelength`: rotary position embedding of the projected
      queries and keys (Su et al., https://arxiv.org/abs/2104.09864).
    - `cache` / `cache_update_index`: incremental decoding with a key/value
      cache of fixed size, as keras-hub's `CachedMultiHeadAttention`.
    - `attention_mask` with a head axis, `(B, num_heads, T, S)`.
    - `attention_bias`: a float tensor added to the scaled scores, for
      relative position biases such as `AlibiBias` or `RelativePositionBias`.

    A subclass may override `_compute_attention` as keras documents; it is
    then called with keras' arguments (see that method).

    Differences from keras: a query that may attend to no key gets an attention
    output of 0 (weights 0) instead of a uniform average over all keys; float
    attention masks are refused (keras reads them as `mask != 0`, which
    inverts an additive 0 / -1e9 mask); an
    explicit `query_mask` is honoured (keras reads only the Keras mask);
    `value_dim` stays None when not given (as in `get_config`); the scores
    of `compute_output_spec` use the key length; and `activity_regularizer`
    (a base `Layer` argument here) regularizes the layer outputs rather than
    each projection. `output_shape` is kept as `_output_shape`, as in keras,
    because `Model.summary()` reads a public `output_shape` attribute.

    `attention_axes` other than the default are computed by moving the
    non-attention axes into the batch and flattening the attention axes into
    one sequence (row-major); the causal mask, the sliding window and rotary
    positions then follow that flattened order. The cache needs rank-3 inputs.

    Args:
        num_heads: number of attention heads, a positive int.
        key_dim: size of each head for queries and keys, a positive int.
        value_dim: size of each head for values; None means `key_dim`.
        dropout: dropout rate on the attention weights, in [0, 1).
        use_bias: whether the projections have biases.
        output_shape: feature shape of the output (int or tuple); None projects
            back to the last axis of the query.
        attention_axes: int or tuple of the axes attention runs over; None
            means every axis but batch and features.

        The arguments below are keyword-only (keras also takes them by
        position, in an order that differs between its versions and layers):

        sliding_window: optional positive int; a query sees only keys less
            than `sliding_window` positions away (a symmetric band; combine
            with `use_causal_mask=True` for causal local attention).
        flash_attention: None or bool. True selects `implementation="fused"`
            (when `implementation` is "auto"); False forbids "fused".
        kernel_initializer: initializer of the projection kernels.
        bias_initializer: initializer of the projection biases.
        kernel_regularizer: regularizer of the projection kernels.
        bias_regularizer: regularizer of the projection biases.
        kernel_constraint: constraint of the projection kernels.
        bias_constraint: constraint of the projection biases.
        use_gate: multiply the attention output by `sigmoid(W_g query)` per
            head before the output projection (gated attention).
        seed: optional int seed of the attention dropout.
        implementation: "auto", "xla", "chunked" or "fused", see
            `keras_attention.ops.dot_product_attention`. When attention scores
            are requested, "fused" computes with "xla"; when dropout is active,
            "chunked" and "fused" compute with "xla".
        rotary_max_wavelength: None, or the base wavelength of a rotary
            position embedding applied to the projected queries and keys
            (`key_dim` must then be even).
        **kwargs: base `keras.layers.Layer` arguments (`name`, `dtype`, ...).

    Call arguments:
        query: `(B, T, dim)`; more generally `(B, *positions, dim)`.
        value: `(B, S, dim)`; more generally `(B, *positions, dim)`. With a
            cache and `cache_update_index=None` it is not used.
        key: optional `(B, S, dim)`; defaults to `value`.
        query_mask, value_mask, key_mask: optional `(B, T)` / `(B, S)` padding
            masks; filled in from the Keras masks of the inputs. With a cache,
            `value_mask` and `key_mask` are ignored (use `attention_mask`).
        attention_mask: optional boolean mask, True = may attend, `(B, T, S)`
            or `(B, num_heads, T, S)` (any axis may be 1 to broadcast; `(T, S)`
            works too). With a cache, S is the cache length.
        return_attention_scores: also return the attention weights.
        training: whether dropout is active.
        use_causal_mask: query i sees keys 0..i only (with a cache, query i
            is at position `cache_update_index + i`).
        attention_bias: optional float tensor added to the scaled scores
            `q k^T / sqrt(key_dim)` before masking and softmax, with the
            shapes of `attention_mask`: `(B, num_heads, T, S)`, `(B, T, S)`
            or `(T, S)`, any axis 1 to broadcast (with `attention_axes`, the
            layout of the scores). A masked key stays masked whatever its
            bias; gradients reach the bias. Every implementation takes it,
            and the returned scores include it. With a cache, S is the cache
            length. Not handed to an overridden `_compute_attention`.
        cache: optional `(B, 2, max_length, num_heads, key_dim)` tensor of the
            projected keys (index 0) and values (index 1); needs
            `value_dim == key_dim`.
        cache_update_index: with a cache, the position of the first query
            (int or scalar tensor): the projected keys and values of `key` and
            `value` are written there and positions after the new ones are
            hidden. None uses the cache as it is (cross-attention; build such a
            cache with `compute_cache(value, key)`).

    Returns:
        `output` of shape `(B, T, E)` (E = last axis of `query` or
        `output_shape`); with `return_attention_scores=True`
        `(output, scores)` with scores `(B, num_heads, T, S)`; with a cache
        `(output, cache)`; with both `(output, scores, cache)`.

    Example:

    >>> import numpy as np
    >>> from keras_attention.layers.attention.multi_head_attention import MultiHeadAttention
    >>> layer = MultiHeadAttention(num_heads=2, key_dim=4)
    >>> query = np.random.rand(3, 5, 8).astype("float32")
    >>> value = np.random.rand(3, 7, 8).astype("float32")
    >>> output, scores = layer(query, value, return_attention_scores=True)
    >>> tuple(output.shape), tuple(scores.shape)
    ((3, 5, 8), (3, 2, 5, 7))
    >>> cache = np.zeros((3, 2, 10, 2, 4), "float32")
    >>> step, cache = layer(query[:, :1], query[:, :1], cache=cache, cache_update_index=0)
    >>> tuple(step.shape), tuple(cache.shape)
    ((3, 1, 8), (3, 2, 10, 2, 4))
    """

    def __init__(
        self,
        num_heads,
        key_dim,
        value_dim=None,
        dropout=0.0,
        use_bias=True,
        output_shape=None,
        attention_axes=None,
        **kwargs,
    ):
        """Check the head sizes (keras' checks and messages); the base keeps the rest."""
        _check_head_size("num_heads", num_heads)
        _check_head_size("key_dim", key_dim)
        _check_head_size("value_dim", value_dim, allow_none=True)
        super().__init__(head_size=key_dim, dropout=dropout, use_bias=use_bias, **kwargs)
        # Kept private as in keras: a public `output_shape` attribute is read
        # by `Model.summary()` as the layer's output shape.
        self._output_shape = _normalize_output_shape(output_shape)
        self.attention_axes = _normalize_attention_axes(attention_axes)
        self.num_heads = num_heads
        self.key_dim = key_dim
        self.value_dim = value_dim
        self._head_value_dim = value_dim if value_dim is not None else key_dim

    # The private attributes of keras.layers.MultiHeadAttention that its
    # subclasses read (in `_compute_attention` overrides, say), read-only.
    @property
    def _num_heads(self):
        return self.num_heads

    @property
    def _key_dim(self):
        return self.key_dim

    @property
    def _value_dim(self):
        return self._head_value_dim

    @property
    def _dropout(self):
        return self.dropout

    @property
    def _use_bias(self):
        return self.use_bias

    @property
    def _use_gate(self):
        return self.use_gate

    @property
    def _attention_axes(self):
        return self.attention_axes

    @property
    def _sliding_window(self):
        return self.sliding_window

    @property
    def _flash_attention(self):
        return bool(self.flash_attention)

    @property
    def _inverse_sqrt_key_dim(self):
        return self._scale

    def build(self, query_shape, value_shape, key_shape=None):
        """Check the input shapes, resolve the attention axes, make the projections.

        The projections are created in keras' order and with keras' shapes, so
        `set_weights` takes the weights of `keras.layers.MultiHeadAttention`.
        """
        query_shape = tuple(query_shape)
        value_shape = tuple(value_shape)
        key_shape = value_shape if key_shape is None else tuple(key_shape)
        check_key_value_shapes(key_shape, value_shape)
        rank = len(query_shape)
        if rank < 3:
            raise ValueError(
                "`query` must have rank 3 or more (batch, positions..., features). "
                f"Received: query_shape={query_shape}"
            )
        if len(value_shape) != rank:
            raise ValueError(
                "`query` and `value` must have the same rank. "
                f"Received: query_shape={query_shape}, value_shape={value_shape}"
            )
        for name, shape in (("query", query_shape), ("value", value_shape), ("key", key_shape)):
            if shape[-1] is None:
                raise ValueError(
                    f"The last axis (features) of `{name}` must be known. "
                    f"Received: {name}_shape={shape}"
                )
        self._free_axes, self._resolved_axes = self._resolve_axes(rank)
        for axis in self._free_axes:
            if not sizes_match(query_shape[axis], value_shape[axis]):
                raise ValueError(
                    f"`query` and `value` must have the same size on axis {axis}, which is "
                    f"not an attention axis. Received: query_shape={query_shape}, "
                    f"value_shape={value_shape}"
                )
        self._is_sequence = rank == 3

        heads = [self.num_heads, self.key_dim]
        self._query_dense = self._projection(rank, heads, "query", query_shape)
        self._key_dense = self._projection(rank, heads, "key", key_shape)
        if self.use_gate:
            gate_heads = [self.num_heads, self._head_value_dim]
            self._gate_dense = self._projection(rank, gate_heads, "gate", query_shape, "sigmoid")
        value_heads = [self.num_heads, self._head_value_dim]
        self._value_dense = self._projection(rank, value_heads, "value", value_shape)

        output_shape = self._output_shape or (query_shape[-1],)
        equation, bias_axes, output_rank = _projection_equation(rank - 1, 2, len(output_shape))
        self._output_dense = keras.layers.EinsumDense(
            equation,
            output_shape=_einsum_output_shape(output_rank - 1, output_shape),
            bias_axes=bias_axes if self.use_bias else None,
            name="attention_output",
            **self._sublayer_kwargs(),
        )
        heads_shape = query_shape[:-1] + (self.num_heads, self._head_value_dim)
        self._output_dense.build(heads_shape)

    def _projection(self, rank, heads, name, input_shape, activation=None):
        # Input (B, *positions, dim) -> (B, *positions, heads, head_dim).
        equation, bias_axes, output_rank = _projection_equation(rank - 1, 1, 2)
        layer = keras.layers.EinsumDense(
            equation,
            output_shape=_einsum_output_shape(output_rank - 1, heads),
            bias_axes=bias_axes if self.use_bias else None,
            activation=activation,
            name=name,
            **self._sublayer_kwargs(),
        )
        layer.build(input_shape)
        return layer

    def _sublayer_kwargs(self):
        return projection_sublayer_kwargs(self, constraints=True)

    def _resolve_axes(self, rank):
        """(non-attention axes, attention axes) of inputs of rank `rank`."""
        if self.attention_axes is None:
            return (), tuple(range(1, rank - 1))
        resolved = []
        for axis in self.attention_axes:
            # Negative axes count from the end of the input, as in keras.
            positive = axis + rank if axis < 0 else axis
            if not 1 <= positive <= rank - 2 or positive in resolved:
                raise ValueError(
                    "`attention_axes` must be distinct axes of the inputs other than "
                    f"batch (0) and features (-1), i.e. in [1, {rank - 2}] for inputs of "
                    f"rank {rank}. Received: attention_axes={self.attention_axes}"
                )
            resolved.append(positive)
        free = tuple(axis for axis in range(1, rank - 1) if axis not in resolved)
        return free, tuple(resolved)

    def _compute_attention(
        self,
        query,
        key,
        value,
        attention_mask=None,
        training=None,
        return_attention_scores=False,
        use_causal_mask=False,
    ):
        """The attention step on projected heads, as keras' method of this name.

        `keras.layers.MultiHeadAttention` documents this method as the one a
        subclass overrides for a custom attention; `call` then hands it the
        projected (and, with `rotary_max_wavelength`, rotated) heads and every
        mask merged into `attention_mask`, the causal one included. The layer
        must be built.

        Args:
            query: `(B, T, N, key_dim)`; more generally `(B, *positions, N, key_dim)`.
            key: `(B, S, N, key_dim)`.
            value: `(B, S, N, value_dim)`.
            attention_mask: optional bool, True = may attend: `(B, T, S)`,
                `(B, N, T, S)` or anything that broadcasts to the scores.
            training: whether dropout is active.
            return_attention_scores: compute the attention weights too.
            use_causal_mask: also hide the keys after each query.

        Returns:
            `(output, scores)`: output `(B, T, N, value_dim)`, scores
            `(B, N, T, S)` or None when not asked for.

        Example:

        >>> import numpy as np
        >>> from keras_attention.layers.attention.multi_head_attention import MultiHeadAttention
        >>> class Temperature(MultiHeadAttention):
        ...     def _compute_attention(self, query, key, value, attention_mask=None,
        ...                            training=None, return_attention_scores=False):
        ...         return super()._compute_attention(
        ...             query / 2.0, key, value, attention_mask, training,
        ...             return_attention_scores)
        >>> layer = Temperature(num_heads=2, key_dim=4)
        >>> x = np.random.rand(1, 3, 8).astype("float32")
        >>> output, scores = layer(x, x, use_causal_mask=True, return_attention_scores=True)
        >>> float(np.asarray(scores)[0, 0, 0, 1:].max())  # the causal mask reached the override
        0.0
        """
        mask = None
        if attention_mask is not None:
            mask = boolean_mask(attention_mask, "attention_mask")
            mask = self._to_scores_layout(mask, "attention_mask", query, key)  # (B', h, Tq, Tk)
        folded_heads = (self._fold(query), self._fold(key), self._fold(value))  # (B', T, N, D)
        return self._attend(
            folded_heads,
            (query, key),
            (mask, use_causal_mask, None),
            self._scale,
            training,
            return_attention_scores,
        )  # (B, *Q, N, Dv), (B, *F, N, *Aq, *Ak) or None

    _DEFAULT_COMPUTE_ATTENTION = _compute_attention

    def _call_override(self, heads, projected_value, mask, training, return_scores):
        """An overridden `_compute_attention`, called with keras' arguments and layouts."""
        projected_query, projected_key, folded_query, folded_key = heads
        return self._compute_attention(
            self._heads_for_override(folded_query, projected_query),
            self._heads_for_override(folded_key, projected_key),
            projected_value,
            self._unfold_mask(mask, projected_query, projected_key),
            training,
            return_scores,
        )  # (B, *Q, N, Dv), (B, *F, N, *Aq, *Ak)

    def _heads_for_override(self, folded, projected):
        """Rotated heads back in the layout of `projected`, for `_compute_attention`."""
        if self.rotary_max_wavelength is None:
            return projected
        return self._unfold(folded, projected)  # (B, *positions, N, D)

    def _unfold_mask(self, mask, projected_query, projected_key):
        """A folded (B' | 1, h | 1, Tq | 1, Tk | 1) mask in keras' layout.

        The head axis is left out when it is 1: (B, T, S) for sequences, else
        (B, *F, [h,] *Aq, *Ak).
        """
        if mask is None:
            return None
        query_shape, key_shape = ops.shape(projected_query), ops.shape(projected_key)
        free_axes, attention_axes = self._free_axes, self._resolved_axes
        heads = 1 if mask.shape[1] == 1 else self.num_heads
        query_sizes = [query_shape[axis] for axis in attention_axes]
        key_sizes = [key_shape[axis] for axis in attention_axes]
        folded_batch = _product([query_shape[0]] + [query_shape[axis] for axis in free_axes])
        mask = ops.broadcast_to(
            mask, (folded_batch, heads, _product(query_sizes), _product(key_sizes))
        )  # (B', h, Tq, Tk)
        if not self._is_sequence:
            mask = ops.reshape(
                mask,
                [query_shape[0]]
                + [query_shape[axis] for axis in free_axes]
                + [heads]
                + query_sizes
                + key_sizes,
            )  # (B, *F, h, *Aq, *Ak)
        return ops.squeeze(mask, 1 + len(free_axes)) if heads == 1 else mask

    def _check_cache_support(self, received):
        """A cache needs sequences, and value heads of the key heads' size."""
        if not self._is_sequence:
            raise ValueError(
                f"A cache needs rank-3 inputs (batch, length, features). Received: {received}"
            )
        if self._head_value_dim != self.key_dim:
            raise ValueError(
                "A cache stacks keys and values, so it needs value_dim == key_dim. "
                f"Received: key_dim={self.key_dim}, value_dim={self.value_dim}"
            )

    def _cache_head_sizes(self):
        """The (name, size) of the cache's head axis and of its head-size axis."""
        return ("num_heads", self.num_heads), ("key_dim", self.key_dim)

    # Folding: attention over any axes becomes attention over one sequence by
    # moving the other axes into the batch. Rank-3 inputs need none of it.

    def _fold(self, projected):
        """(B, *positions, N, D) -> (B * prod(free sizes), prod(attention sizes), N, D)."""
        if self._is_sequence:
            return projected
        return _fold_positions(projected, self._free_axes, self._resolved_axes, trailing=2)

    def _unfold(self, folded, projected_query):
        """(B', Tq, N, Dv) -> (B, *query positions, N, Dv), the inverse of `_fold`."""
        if self._is_sequence:
            return folded
        free_axes, attention_axes = self._free_axes, self._resolved_axes
        shape = ops.shape(projected_query)
        order = (0,) + free_axes + attention_axes
        heads_shape = tuple(_static_or_dynamic(folded, axis) for axis in (2, 3))
        unflattened = ops.reshape(
            folded, tuple(shape[axis] for axis in order) + heads_shape
        )  # (B, *F, *Aq, N, Dv)
        inverse = [order.index(axis) for axis in range(len(order))]
        rank = len(order)
        return ops.transpose(unflattened, inverse + [rank, rank + 1])  # (B, *Q, N, Dv)

    def _unfold_scores(self, scores, projected_query, projected_key):
        """(B', N, Tq, Tk) -> (B, *F, N, *Aq, *Ak), the layout keras uses."""
        if self._is_sequence:
            return scores
        query_shape, key_shape = ops.shape(projected_query), ops.shape(projected_key)
        target = (
            (query_shape[0],)
            + tuple(query_shape[axis] for axis in self._free_axes)
            + (self.num_heads,)
            + tuple(query_shape[axis] for axis in self._resolved_axes)
            + tuple(key_shape[axis] for axis in self._resolved_axes)
        )
        return ops.reshape(scores, target)  # (B, *F, N, *Aq, *Ak)

    def _padding_mask_layout(self, mask, name, reference):
        """A (B, *positions) padding mask -> (B', T) in the folded order.

        Its shape was checked against `reference` (`check_padding_mask`).
        """
        mask = boolean_mask(mask, name)
        if self._is_sequence:
            return mask
        return _fold_positions(mask, self._free_axes, self._resolved_axes, trailing=0)

    def _to_scores_layout(self, tensor, name, projected_query, projected_key):
        """Check a mask or bias `name` against the scores and bring it to (B', h, Tq, Tk)."""
        free_axes, attention_axes = self._free_axes, self._resolved_axes
        query_static, key_static = tuple(projected_query.shape), tuple(projected_key.shape)
        target = (
            (query_static[0],)
            + tuple(query_static[axis] for axis in free_axes)
            + (self.num_heads,)
            + tuple(query_static[axis] for axis in attention_axes)
            + tuple(key_static[axis] for axis in attention_axes)
        )
        expanded = _expand_to_scores_rank(tensor, name, target, len(attention_axes))
        if self._is_sequence:
            return expanded  # (B | 1, N | 1, Tq | 1, Tk | 1)
        # Merging axes needs their full sizes: broadcast all but heads (and
        # batch when no other axis joins it), then reshape.
        query_shape, key_shape = ops.shape(projected_query), ops.shape(projected_key)
        head_axis = 1 + len(free_axes)
        heads = self.num_heads if expanded.shape[head_axis] != 1 else 1
        full = (
            [query_shape[0] if free_axes or expanded.shape[0] != 1 else 1]
            + [query_shape[axis] for axis in free_axes]
            + [heads]
            + [query_shape[axis] for axis in attention_axes]
            + [key_shape[axis] for axis in attention_axes]
        )
        expanded = ops.broadcast_to(expanded, full)  # (B | 1, *F, h, *Aq, *Ak)
        query_length = _product([query_shape[axis] for axis in attention_axes])
        key_length = _product([key_shape[axis] for axis in attention_axes])
        return ops.reshape(expanded, (-1, heads, query_length, key_length))  # (B', h, Tq, Tk)

    def _output_features(self, query_shape):
        """The feature axes of the output: `output_shape`, else those of the query."""
        return tuple(self._output_shape or query_shape[-1:])

    def _scores_shape(self, query_shape, value_shape, cache=None):
        """(B, *free, num_heads, *query attention sizes, *key attention sizes)."""
        free_axes, attention_axes = self._resolve_axes(len(query_shape))
        if cache is not None:
            key_positions = (cache.shape[2],)
        else:
            key_positions = tuple(value_shape[axis] for axis in attention_axes)
        return (
            (query_shape[0],)
            + tuple(query_shape[axis] for axis in free_axes)
            + (self.num_heads,)
            + tuple(query_shape[axis] for axis in attention_axes)
            + key_positions
        )

    def _head_config(self):
        """The config entries of the head sizes and layout."""
        return {
            "num_heads": self.num_heads,
            "key_dim": self.key_dim,
            "value_dim": self.value_dim,
            "output_shape": self._output_shape,
            "attention_axes": self.attention_axes,
        }


def _check_head_size(name, value, allow_none=False):
    """Raise keras' ValueError unless `value` is a positive int (or None if allowed)."""
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        expected = "a positive integer or None" if allow_none else "a positive integer"
        raise ValueError(
            f"Received an invalid value for argument `{name}`, expected {expected}. "
            f"Received: {name}={value!r}"
        )


def _normalize_output_shape(output_shape):
    if output_shape is None:
        return None
    shape = (output_shape,) if isinstance(output_shape, numbers.Integral) else output_shape
    if not isinstance(shape, (list, tuple)) or not all(
        isinstance(size, numbers.Integral) and not isinstance(size, bool) and size > 0
        for size in shape
    ):
        raise ValueError(
            "Invalid `output_shape`: it must be None, a positive int or a tuple of "
            "positive ints. "
            f"Received: output_shape={output_shape!r}"
        )
    return tuple(int(size) for size in shape) or None


def _normalize_attention_axes(attention_axes):
    if attention_axes is None:
        return None
    axes = (attention_axes,) if isinstance(attention_axes, numbers.Integral) else attention_axes
    if (
        isinstance(attention_axes, bool)
        or not isinstance(axes, (list, tuple))
        or not axes
        or not all(
            isinstance(axis, numbers.Integral) and not isinstance(axis, bool) for axis in axes
        )
    ):
        raise ValueError(
            "`attention_axes` must be None, an int or a non-empty tuple of ints. "
            f"Received: attention_axes={attention_axes!r}"
        )
    return tuple(int(axis) for axis in axes)


def _expand_to_scores_rank(mask, name, target, num_attention_axes):
    """Insert head/free axes into a mask or bias as keras does, then check it broadcasts."""
    received = tuple(mask.shape)
    rank, full_rank = len(received), len(target)
    if not 2 * num_attention_axes <= rank <= full_rank:
        raise ValueError(
            f"`{name}` must have rank {2 * num_attention_axes} to {full_rank} and "
            f"broadcast to the attention scores {target} (batch, ..., num_heads, query "
            "positions, key positions); the head axis may be left out. "
            f"Received: {name}.shape={received}"
        )
    # keras inserts the missing axes just before the query positions.
    for _ in range(full_rank - rank):
        mask = ops.expand_dims(mask, -2 * num_attention_axes - 1)
    for size, expected in zip(mask.shape, target):
        if size is not None and expected is not None and size not in (1, expected):
            raise ValueError(
                f"`{name}` must broadcast to the attention scores {target} (batch, "
                "..., num_heads, query positions, key positions). "
                f"Received: {name}.shape={received}"
            )
    return mask


def _fold_positions(tensor, free_axes, attention_axes, trailing):
    """(B, *positions, *trailing) -> (B * prod(free), prod(attention), *trailing)."""
    rank = len(tensor.shape)
    trailing_axes = list(range(rank - trailing, rank))
    order = [0, *free_axes, *attention_axes, *trailing_axes]
    tensor = ops.transpose(tensor, order)  # (B, *F, *A, *trailing)
    shape = ops.shape(tensor)
    first_attention = 1 + len(free_axes)
    length = _product(shape[first_attention : first_attention + len(attention_axes)])
    trailing_shape = tuple(_static_or_dynamic(tensor, axis) for axis in trailing_axes)
    return ops.reshape(tensor, (-1, length) + trailing_shape)  # (B', T, *trailing)


def _static_or_dynamic(tensor, axis):
    size = tensor.shape[axis]
    return size if size is not None else ops.shape(tensor)[axis]


def _product(sizes):
    result = 1
    for size in sizes:
        result = result * size
    return result


def _projection_equation(free_dims, bound_dims, output_dims):
    """The einsum equation keras.layers.MultiHeadAttention uses for projections.

    Returns (equation, bias_axes, output_rank), e.g. (2, 1, 2) ->
    ("abc,cde->abde", "de", 4).
    """
    letters = string.ascii_lowercase
    free = letters[:free_dims]
    bound = letters[free_dims : free_dims + bound_dims]
    output = letters[free_dims + bound_dims : free_dims + bound_dims + output_dims]
    equation = f"{free}{bound},{bound}{output}->{free}{output}"
    return equation, output, len(free) + len(output)


def _einsum_output_shape(output_rank, known_last_dims):
    return [None] * (output_rank - len(known_last_dims)) + list(known_last_dims)
