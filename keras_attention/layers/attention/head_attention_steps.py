"""The steps of a call that `MultiHeadAttention` and `GroupQueryAttention` share.

Both layers project queries, keys and values into heads, keep a key/value
cache of fixed size, collect every mask of a call into one boolean mask,
attend, and hand back `output[, scores][, cache]`. `HeadAttentionSteps` holds
that call once; each layer supplies how its positions fold into one sequence
(`_fold`, `_unfold`), how its key/value heads serve the query heads
(`_shared_heads`), how a mask reaches the layout of its scores
(`_to_scores_layout`) and of its positions (`_padding_mask_layout`), and how
an overridden `_compute_attention` is called (`_call_override`).
"""

import math
from typing import NamedTuple

import keras
from keras import ops

from keras_attention.layers.attention.attention_results import attention_output_spec
from keras_attention.layers.attention.attention_results import attention_results
from keras_attention.layers.attention.call_arguments import call_arguments
from keras_attention.layers.attention.head_attention_checks import check_attention_bias
from keras_attention.layers.attention.head_attention_checks import check_cache_update_index
from keras_attention.layers.attention.head_attention_checks import check_flash_attention
from keras_attention.layers.attention.head_attention_checks import check_key_value_shapes
from keras_attention.layers.attention.head_attention_checks import check_padding_mask
from keras_attention.layers.attention.head_attention_checks import sizes_match
from keras_attention.layers.attention.head_attention_checks import without_keras_mask
from keras_attention.layers.attention.projection_settings import projection_settings_config
from keras_attention.layers.attention.projection_settings import set_projection_settings
from keras_attention.layers.position.rotary_embedding import check_rotary
from keras_attention.ops.attention import check_implementation
from keras_attention.ops.attention import dot_product_attention
from keras_attention.ops.attention import kernel_for_call
from keras_attention.ops.masks import boolean_mask
from keras_attention.ops.masks import causal_mask
from keras_attention.ops.masks import merge_masks
from keras_attention.ops.masks import sliding_window_mask
from keras_attention.ops.rotary import apply_rotary
from keras_attention.validation import check_bool
from keras_attention.validation import check_positive_int
from keras_attention.validation import check_rate
from keras_attention.validation import check_seed

# The constructor arguments both layers take besides their head sizes, kept as
# attributes of the same names and written into their configs.
SHARED_SETTINGS = (
    "dropout",
    "use_bias",
    "sliding_window",
    "flash_attention",
    "use_gate",
    "seed",
    "implementation",
    "rotary_max_wavelength",
)


class CacheState(NamedTuple):
    """How a call uses its cache: `offset` of the first query, `decoding`, `in_use`."""

    offset: object
    decoding: bool
    in_use: bool


class CallMasks(NamedTuple):
    """The mask arguments of a call, as the caller gave them (None where not given)."""

    attention_mask: object
    query_mask: object
    value_mask: object
    key_mask: object
    use_causal_mask: bool


def cache_state(cache, cache_update_index):
    """The `CacheState` of a call; decoding writes the new keys at `cache_update_index`."""
    decoding = cache is not None and cache_update_index is not None
    return CacheState(cache_update_index if decoding else 0, decoding, cache is not None)


class HeadAttentionSteps:
    """The call of a layer with `_query_dense` / `_key_dense` / `_value_dense` heads.

    A mixin for `keras.layers.Layer` subclasses that hand their settings to
    this class's `__init__` and build `_query_dense`, `_key_dense`,
    `_value_dense`, `_output_dense` (and `_gate_dense` with `use_gate`).
    They define `_compute_attention` (keras' extension point) and name it
    `_DEFAULT_COMPUTE_ATTENTION`, `_call_override(heads, projected_value,
    mask, training, return_scores)` for a subclass that overrides it,
    `_head_config()`, `_cache_head_sizes()`, `_scores_shape(query_shape, value_shape,
    cache)`, `_to_scores_layout(tensor, name, projected_query,
    projected_key)` and `_padding_mask_layout(mask, name, reference)`; they
    may redefine `_fold`, `_unfold`, `_unfold_scores` and `_shared_heads`.
    """

    def __init__(
        self,
        *,
        head_size,
        dropout=0.0,
        use_bias=True,
        sliding_window=None,
        flash_attention=None,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        use_gate=False,
        seed=None,
        implementation="auto",
        rotary_max_wavelength=None,
        **kwargs,
    ):
        """Checks and keeps the settings both layers take besides their head sizes.

        They are keyword-only here and in the layers (after the arguments
        keras takes by position), so a positional call written for a keras
        signature with other arguments in between fails instead of handing a
        value to the wrong setting. Their meaning is documented in
        `MultiHeadAttention`.

        Args:
            head_size: the size of a query head, for the scale and the
                rotary embedding's check (checked by the layer).
            **kwargs: base `keras.layers.Layer` arguments (`name`, `dtype`,
                `activity_regularizer`, ...).
        """
        super().__init__(**kwargs)
        check_rate("dropout", dropout)
        check_bool("use_bias", use_bias)
        check_bool("use_gate", use_gate)
        check_positive_int("sliding_window", sliding_window, allow_none=True)
        check_implementation(implementation)
        check_rotary(rotary_max_wavelength, head_size)
        check_seed(seed)
        check_flash_attention(flash_attention, implementation)
        arguments = locals()
        for name in SHARED_SETTINGS:
            setattr(self, name, arguments[name])
        set_projection_settings(
            self,
            (kernel_initializer, bias_initializer),
            (kernel_regularizer, bias_regularizer),
            (kernel_constraint, bias_constraint),
        )
        self.supports_masking = True
        self._scale = 1.0 / math.sqrt(float(head_size))
        self._seed_generator = keras.random.SeedGenerator(seed) if dropout > 0 else None

    def get_config(self):
        """The layer's head sizes (`_head_config`), shared settings and base arguments."""
        return {
            **super().get_config(),
            **self._head_config(),
            **{name: getattr(self, name) for name in SHARED_SETTINGS},
            **projection_settings_config(self, constraints=True),
        }

    # The projections, under the names keras' attention layers use.
    @property
    def query_dense(self):
        """The query projection, an `EinsumDense` (features -> query heads x head size)."""
        return self._query_dense

    @property
    def key_dense(self):
        """The key projection, an `EinsumDense` (features -> key heads x head size)."""
        return self._key_dense

    @property
    def value_dense(self):
        """The value projection, an `EinsumDense` (features -> value heads x head size)."""
        return self._value_dense

    @property
    def output_dense(self):
        """The output projection, an `EinsumDense` (query heads x head size -> features)."""
        return self._output_dense

    def call(
        self,
        query,
        value,
        key=None,
        query_mask=None,
        value_mask=None,
        key_mask=None,
        attention_mask=None,
        return_attention_scores=False,
        training=None,
        use_causal_mask=False,
        cache=None,
        cache_update_index=None,
        attention_bias=None,
    ):
        """Attend from `query` to `key` / `value`; the arguments are in the class docstring.

        Checks the cache arguments, drops the Keras masks of the inputs (the
        padding masks arrive as `query_mask` / `value_mask` / `key_mask`),
        and hands the rest to the layer's `_call_heads`.
        """
        if cache is None and cache_update_index is not None:
            raise ValueError(
                "`cache_update_index` needs a `cache`. "
                f"Received: cache=None, cache_update_index={cache_update_index}"
            )
        if cache is not None and cache_update_index is not None:
            check_cache_update_index(cache_update_index, tuple(query.shape), tuple(cache.shape))
        key = value if key is None else key
        if self.built:
            self._check_inputs_fit_projections(query=query, value=value, key=key)
        query, value, key = (without_keras_mask(x) for x in (query, value, key))
        masks = CallMasks(attention_mask, query_mask, value_mask, key_mask, bool(use_causal_mask))
        state = cache_state(cache, cache_update_index)
        return self._call_heads(
            query,
            value,
            key,
            masks,
            state,
            cache,
            attention_bias,
            training,
            return_attention_scores,
        )

    def _check_inputs_fit_projections(self, **inputs):
        """A built layer's inputs have the rank and features its projections were made for.

        Otherwise the projection fails deep in an einsum or a reshape, with
        no word of which input does not fit.
        """
        projections = {
            "query": self._query_dense,
            "value": self._value_dense,
            "key": self._key_dense,
        }
        for name, tensor in inputs.items():
            dense = projections[name]
            rank, width = len(dense.equation.split(",")[0]), dense.kernel.shape[0]
            shape = tuple(tensor.shape)
            if len(shape) != rank or shape[-1] not in (None, width):
                raise ValueError(
                    f"`{name}` must be of rank {rank} with {width} features (the last axis), "
                    f"as when this layer was built: its projections have those sizes. "
                    f"Received: {name}.shape={shape}"
                )

    def _call_heads(self, query, value, key, masks, state, cache, bias, training, return_scores):
        """Project, fold, mask and attend: `call` once its arguments are checked.

        Attention runs on folded heads (B', T, N, D): the layer's `_fold`
        brings its positions into one sequence, `_shared_heads` gives every
        query head its key/value head, `_unfold` / `_unfold_scores` bring the
        results back to the layout of the inputs. A subclass that overrides
        `_compute_attention` (keras' documented extension point) gets the
        attention step with keras' arguments, through the layer's
        `_call_override`.

        Args:
            query, value, key: the inputs, without Keras masks.
            masks: the call's `CallMasks`.
            state: the call's `CacheState`.
            cache: the `cache` argument.
            bias: the `attention_bias` argument.
            training: whether dropout is active.
            return_scores: whether to return the attention scores.
        """
        cls = type(self)
        overridden = cls._compute_attention is not cls._DEFAULT_COMPUTE_ATTENTION
        if bias is not None:
            bias = check_attention_bias(bias, overridden)
        gate = self._gate_dense(query) if self.use_gate else None  # (B, *Q, N, Dv)
        if overridden:
            projected_query, scale = self._query_dense(query), None  # (B, *Q, N, Dk)
        else:
            projected_query, scale = self._project_query(query)  # (B, *Q, N, Dk)
        cache, projected_key, projected_value = self._keys_and_values(
            query, key, value, cache, state, projected_query.dtype
        )  # (B, *S, Nkv, Dk), (B, *S, Nkv, Dv)
        folded_key = self._fold(projected_key)  # (B', Tk, Nkv, Dk)
        if cache is None:
            folded_key = self._rotate(folded_key, 0)
        folded_query = self._rotate(self._fold(projected_query), state.offset)  # (B', Tq, N, Dk)
        heads = (projected_query, projected_key, folded_query, folded_key)
        all_masks = self._call_masks(masks, (query, value), heads, state, overridden)
        if overridden:
            heads_output, scores = self._call_override(
                heads, projected_value, merge_masks(*all_masks), training, return_scores
            )
            return self._finish(heads_output, gate, scores, cache, return_scores)
        if bias is not None:
            bias = self._to_scores_layout(
                bias, "attention_bias", projected_query, projected_key
            )  # (B' | 1, N | 1, Tq | 1, Tk | 1)
        folded_heads = (
            folded_query,
            self._shared_heads(folded_key),
            self._shared_heads(self._fold(projected_value)),
        )  # (B', Tq, N, Dk), (B', Tk, N, Dk), (B', Tk, N, Dv)
        causal = masks.use_causal_mask and not state.decoding
        heads_output, scores = self._attend(
            folded_heads,
            (projected_query, projected_key),
            (merge_masks(*all_masks), causal, bias),
            scale,
            training,
            return_scores,
        )  # (B, *Q, N, Dv), scores in the layer's layout or None
        return self._finish(heads_output, gate, scores, cache, return_scores)

    def _project_query(self, query):
        """(W_q x + b) / sqrt(head size), and the scale still to apply in the kernel (1 or not).

        The scale multiplies the small (dim, N, Dk) kernel and the bias
        instead of every query or every (B, N, Tq, Tk) score: under XLA on
        CPU a separate multiply on either costs a pass over it. The
        variables stay unscaled, so weights remain those of keras' layers.
        Quantized or LoRA projections keep their own call.
        """
        dense = self._query_dense
        if getattr(dense, "quantization_mode", None) or getattr(dense, "lora_enabled", False):
            return dense(query), self._scale
        dtype = self.compute_dtype
        query = ops.cast(query, dtype)
        kernel = ops.cast(dense.kernel, dtype) * ops.cast(self._scale, dtype)
        projected = ops.einsum(dense.equation, query, kernel)
        if dense.bias is not None:
            projected = projected + ops.cast(dense.bias, dtype) * ops.cast(self._scale, dtype)
        return projected, 1.0

    # Folding and head sharing: a sequence layer without grouped heads needs
    # none of it; `MultiHeadAttention` folds its attention axes and
    # `GroupQueryAttention` repeats its key/value heads.

    def _fold(self, projected):
        """(B, *positions, N, D) -> (B', T, N, D): the heads as one sequence per row."""
        return projected

    def _unfold(self, folded, projected_query):
        """(B', Tq, N, Dv) -> (B, *query positions, N, Dv), the inverse of `_fold`."""
        return folded

    def _unfold_scores(self, scores, projected_query, projected_key):
        """(B', N, Tq, Tk) scores in the layout the layer returns."""
        return scores

    def _shared_heads(self, folded):
        """(B', T, Nkv, D) key or value heads -> (B', T, N, D), one per query head."""
        return folded

    def _keys_and_values(self, query, key, value, cache, state, dtype):
        """`(cache, keys, values)`: the projected heads, or those of the (updated) cache.

        Without a cache the keys are returned unrotated, in the layout of
        `key`: (B, *S, N, D). With one they are the cache's, (B, S, N, D),
        rotated when written.
        """
        if cache is None:
            return None, self._key_dense(key), self._value_dense(value)
        self._check_cache(cache, query)
        cache = ops.cast(cache, dtype)
        if state.decoding:
            cache = self._write_to_cache(cache, key, value, state.offset)
        return cache, cache[:, 0], cache[:, 1]  # (B, S, N, D) each

    def _write_to_cache(self, cache, key, value, index):
        """Project the new keys and values and write them at `index` of the cache."""
        new_key = self._rotate(self._key_dense(key), index)  # (B, t, N, D)
        new_value = self._value_dense(value)  # (B, t, N, D)
        new_entries = ops.stack([new_key, new_value], axis=1)  # (B, 2, t, N, D)
        return ops.slice_update(cache, [0, 0, index, 0, 0], new_entries)

    def _rotate(self, heads, start_index):
        """Rotary embedding of (B, T, N, D) heads from position `start_index`, if set."""
        if self.rotary_max_wavelength is None:
            return heads
        return apply_rotary(
            heads, start_index=start_index, max_wavelength=self.rotary_max_wavelength
        )

    def _call_masks(self, masks, inputs, heads, state, causal_in_mask):
        """Every mask of a call, each broadcastable to the scores (B', h, Tq, Tk).

        Args:
            masks: the call's `CallMasks`; the padding masks of keys are
                ignored with a cache.
            inputs: `(query, value)`, the inputs the padding masks describe.
            heads: `(projected_query, projected_key, folded_query,
                folded_key)`: the heads in the layout of the inputs, and as
                attention sees them (B', T, N, D).
            state: the call's `CacheState`.
            causal_in_mask: put the causal mask into the list (for a
                `_compute_attention` override) instead of leaving it to the kernel.

        Returns:
            A list of boolean masks, True = may attend.
        """
        projected_query, projected_key, folded_query, folded_key = heads
        query_length, key_length = ops.shape(folded_query)[1], ops.shape(folded_key)[1]
        use_causal_mask = masks.use_causal_mask
        result = []
        if masks.attention_mask is not None:
            mask = boolean_mask(masks.attention_mask, "attention_mask")
            result.append(
                self._to_scores_layout(mask, "attention_mask", projected_query, projected_key)
            )
        if masks.query_mask is not None:
            check_padding_mask(masks.query_mask, "query_mask", "query", inputs[0].shape)
            positions = self._padding_mask_layout(masks.query_mask, "query_mask", inputs[0])
            result.append(positions[:, None, :, None])  # (B', 1, Tq, 1)
        for name, mask in (("value_mask", masks.value_mask), ("key_mask", masks.key_mask)):
            if mask is not None and not state.in_use:
                check_padding_mask(mask, name, name.split("_")[0], inputs[1].shape)
                positions = self._padding_mask_layout(mask, name, inputs[1])
                result.append(positions[:, None, None, :])  # (B', 1, 1, Tk)
        if state.decoding:
            result.append(
                self._filled_slots_mask(query_length, key_length, state.offset, use_causal_mask)
            )
        if self.sliding_window is not None:
            window = sliding_window_mask(
                query_length, key_length, self.sliding_window, state.offset, causal=False
            )
            result.append(window[None, None])  # (1, 1, Tq, Tk)
        if causal_in_mask and use_causal_mask and not state.decoding:
            # keras hands an override the causal mask inside `attention_mask`.
            result.append(causal_mask(query_length, key_length)[None, None])  # (1, 1, Tq, Tk)
        return result

    def _filled_slots_mask(self, query_length, key_length, offset, use_causal_mask):
        """(1, 1, Tq | 1, S): which cache slots hold a key each new query may see."""
        if use_causal_mask:
            return causal_mask(query_length, key_length, offset=offset)[None, None]
        # Without a causal mask every query sees the slots filled so far.
        filled = ops.cast(offset, "int32") + ops.cast(query_length, "int32")
        return ops.less(ops.arange(key_length, dtype="int32"), filled)[None, None, None, :]

    def _implementation_for(self, return_scores, use_dropout):
        """The attention kernel of this call: `flash_attention` read, then what it allows."""
        implementation = self.implementation
        if implementation == "auto" and self.flash_attention:
            implementation = "fused"
        return kernel_for_call(implementation, return_scores, use_dropout)

    def _attend(self, folded_heads, layouts, masking, scale, training, return_scores):
        """`dot_product_attention` on folded heads, with the layer's dropout, seed and kernel.

        Args:
            folded_heads: `(query, key, value)`, (B', T, N, D) each, every
                query head with its own key/value head.
            layouts: `(query, key)` heads in the layout of the inputs, which
                `_unfold` and `_unfold_scores` restore.
            masking: `(mask, causal, bias)`: a boolean mask broadcastable to
                the scores (B', N, Tq, Tk) or None, whether to hide the keys
                after each query, a float bias of that layout or None.
            scale: the factor of the scores (1.0 when the query holds it).
            training: whether dropout is active.
            return_scores: whether to compute the scores.

        Returns:
            `(output, scores)`: output in the layout of the query heads,
            scores in the layer's layout or None when not asked for.
        """
        mask, causal, bias = masking
        use_dropout = self.dropout > 0 and bool(training)
        attention = dot_product_attention(
            *folded_heads,
            mask=mask,
            is_causal=bool(causal),
            scale=scale,
            bias=bias,
            dropout_rate=self.dropout,
            training=use_dropout,
            return_weights=bool(return_scores),
            implementation=self._implementation_for(return_scores, use_dropout),
            seed=self._seed_generator,
        )
        folded_output, scores = attention if return_scores else (attention, None)
        output = self._unfold(folded_output, layouts[0])  # (B, *Q, N, Dv)
        if return_scores:
            scores = self._unfold_scores(scores, *layouts)
        return output, scores

    def _finish(self, heads_output, gate, scores, cache, return_attention_scores):
        """Gate, output projection, and the results in the documented order."""
        if gate is not None:
            heads_output = heads_output * gate
        output = self._output_dense(heads_output)  # (B, *Q, E)
        return attention_results(output, scores, cache, return_attention_scores)

    def compute_output_shape(self, query_shape, value_shape, key_shape=None):
        """(B, *query positions, output features); checks that key and value match."""
        value_shape = tuple(value_shape)
        key_shape = value_shape if key_shape is None else tuple(key_shape)
        check_key_value_shapes(key_shape, value_shape)
        return tuple(query_shape)[:-1] + self._output_features(tuple(query_shape))

    def _output_features(self, query_shape):
        """The feature axes of the output: those of the query."""
        return query_shape[-1:]

    def compute_output_spec(self, *args, **kwargs):
        """The output (and scores, cache) specs of `call(*args, **kwargs)`."""
        arguments = call_arguments(self.call, args, kwargs)
        query, value, key = arguments["query"], arguments["value"], arguments["key"]
        cache = arguments["cache"]
        key_shape = None if key is None else key.shape
        output_shape = self.compute_output_shape(query.shape, value.shape, key_shape)
        scores_shape = None
        if arguments["return_attention_scores"]:
            scores_shape = self._scores_shape(query.shape, value.shape, cache)
        cache_shape = None if cache is None else cache.shape
        return attention_output_spec(self.compute_dtype, output_shape, scores_shape, cache_shape)

    def compute_cache(self, value, key=None):
        """Project a whole key/value sequence into a cache, for cross-attention.

        The keys are rotated when `rotary_max_wavelength` is set, exactly as
        attention would use them, so `layer(query, value, cache=cache)` equals
        `layer(query, value, key)`. The layer must be built.

        Args:
            value: `(B, S, dim)`.
            key: optional `(B, S, dim)`; defaults to `value`.

        Returns:
            `(B, 2, S, key/value heads, head size)`: the projected keys, then
            the projected values.

        Example:

        >>> import numpy as np
        >>> from keras_attention.layers import GroupQueryAttention, MultiHeadAttention
        >>> memory = np.random.rand(1, 6, 8).astype("float32")
        >>> query = np.random.rand(1, 3, 8).astype("float32")
        >>> layer = MultiHeadAttention(num_heads=2, key_dim=4)
        >>> full = layer(query, memory)
        >>> cached, _ = layer(query, memory, cache=layer.compute_cache(memory))
        >>> bool(np.allclose(full, cached, atol=1e-6))
        True
        >>> layer = GroupQueryAttention(head_dim=4, num_query_heads=4, num_key_value_heads=1)
        >>> full = layer(query, memory)
        >>> cache = layer.compute_cache(memory)
        >>> tuple(cache.shape)  # one key/value head: multi-query attention
        (1, 2, 6, 1, 4)
        >>> cached, _ = layer(query, memory, cache=cache)
        >>> bool(np.allclose(full, cached, atol=1e-6))
        True
        """
        if not self.built:
            raise ValueError(
                "`compute_cache` needs a built layer: call it or `build` it first. "
                f"Received: value.shape={tuple(value.shape)} for an unbuilt layer"
            )
        self._check_cache_support(f"value.shape={tuple(value.shape)}")
        return self._project_cache(value, value if key is None else key)  # (B, 2, S, Nkv, D)

    def _check_cache_support(self, received):
        """Raise a ValueError ending in `received` if this layer cannot keep a cache."""

    def _check_cache(self, cache, query):
        """Raise a ValueError unless `cache` is (B, 2, S, key/value heads, head size)."""
        self._check_cache_support(f"query.shape={tuple(query.shape)}")
        (heads_name, heads), (size_name, size) = self._cache_head_sizes()
        expected = (None, 2, None, heads, size)
        shape = tuple(cache.shape)
        if len(shape) != 5 or not all(sizes_match(a, b) for a, b in zip(shape, expected)):
            raise ValueError(
                f"`cache` must have shape (batch, 2, max_length, {heads_name}, {size_name}) "
                f"= (B, 2, S, {heads}, {size}). Received: cache.shape={shape}"
            )

    def _project_cache(self, value, key):
        """(B, 2, S, N, D): the rotated projected keys, then the projected values."""
        projected_key = self._rotate(self._key_dense(without_keras_mask(key)), 0)  # (B, S, N, D)
        projected_value = self._value_dense(without_keras_mask(value))  # (B, S, N, D)
        return ops.stack([projected_key, projected_value], axis=1)  # (B, 2, S, N, D)
