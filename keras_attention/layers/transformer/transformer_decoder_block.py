"""The Transformer decoder block: masked self-attention, cross-attention, MLP."""

import keras
from keras import ops

from keras_attention.layers.transformer import transformer_block_common as common


@keras.saving.register_keras_serializable(package="keras_attention")
class TransformerDecoderBlock(common.TransformerBlock):
    """Masked self-attention, optional cross-attention on a context, and an MLP.

    Vaswani et al., "Attention Is All You Need" (https://arxiv.org/abs/1706.03762).
    Each sub-block is residual with LayerNorm after (`norm_first=False`) or
    before (`norm_first=True`) it. Without a context the block is a
    decoder-only (GPT-style) block. The weights are created in the order of
    `keras_hub.layers.TransformerDecoder`.

    For incremental decoding the block takes fixed-size key/value caches
    `(batch, 2, max_length, key_value_heads, key_dim)` updated in place at
    `self_attention_cache_update_index`, so that feeding one token at a time
    gives the same outputs as the full causal pass. The cross-attention cache
    holds the projected context and is computed once
    (`compute_cross_attention_cache`, or on the first cached call).
    `key_value_heads` is `num_heads`, or `num_key_value_heads` when set:
    grouped-query attention makes the caches `num_heads /
    num_key_value_heads` times smaller (`cache_shape` gives their shape).

    Args:
        num_heads: number of attention heads (self and cross).
        intermediate_dim: width of the MLP's hidden layer.
        dropout: dropout after each sub-block and on attention weights.
        activation: activation of the MLP's hidden layer.
        norm_first: pre-norm when True, post-norm when False.
        layer_norm_epsilon: epsilon of the LayerNorms.
        key_dim: size of each head; defaults to `hidden_dim // num_heads`.
        kernel_initializer: initializer of the dense kernels.
        bias_initializer: initializer of the biases.
        implementation: attention kernel, see `ka.ops.dot_product_attention`.
        rotary_max_wavelength: if set, rotary positions in self-attention.
        normalize_first: keras-hub's name for `norm_first`; when given, it
            sets `norm_first` (both names are in `get_config`).
        num_key_value_heads: None for multi-head attention
            (`MultiHeadAttention` sublayers), or the number of key/value heads
            of grouped-query self- and cross-attention (`GroupQueryAttention`
            sublayers with `num_heads` query heads); 1 is multi-query
            attention. It must divide `num_heads`.

    Call arguments:
        inputs: (batch, length, hidden_dim) decoder sequence.
        context: optional (batch, context_length, context_dim) encoder output
            to cross-attend to. Whether the block has cross-attention is fixed
            by the first call (build).
        padding_mask: optional (batch, key_length) bool over the self-attention
            keys: the decoder tokens, or with a cache the cache positions.
            Defaults to the keras mask of `inputs`.
        context_padding_mask: optional (batch, context_length) bool; defaults
            to the keras mask of `context`.
        attention_mask: optional (batch, length, key_length) bool for
            self-attention.
        self_attention_cache: optional (batch, 2, max_length,
            key_value_heads, key_dim).
        self_attention_cache_update_index: where `inputs` go in the cache.
        cross_attention_cache: optional (batch, 2, context_length,
            key_value_heads, key_dim) projected context.
        cross_attention_cache_update_index: optional; when given, the
            projected `context` is written into `cross_attention_cache` at
            this position first (keras-hub fills the cache this way on the
            first decoding step).
        context_attention_mask: optional (batch, length, context_length)
            bool for cross-attention, merged with `context_padding_mask`.
        decoder_sequence, encoder_sequence, decoder_padding_mask,
        decoder_attention_mask, encoder_padding_mask, encoder_attention_mask:
            keras-hub's names for `inputs`, `context`, `padding_mask`,
            `attention_mask`, `context_padding_mask` and
            `context_attention_mask`, so that calls written for
            `keras_hub.layers.TransformerDecoder` run unchanged. Pass each
            argument under one name only.
        use_causal_mask: mask future tokens in self-attention.
        return_attention_scores: also return the attention weights.
        training: whether dropout is active.

    Returns:
        `output` (batch, length, hidden_dim), followed, in this order and only
        when present, by: the self-attention weights (batch, heads, length,
        key_length) and cross-attention weights (batch, heads, length,
        context_length) when `return_attention_scores=True`; the updated
        self-attention cache and the cross-attention cache when
        `self_attention_cache` is given.

    Example:

    >>> import numpy as np
    >>> import keras_attention as ka
    >>> block = ka.layers.TransformerDecoderBlock(num_heads=2, intermediate_dim=32)
    >>> x = np.random.rand(2, 4, 16).astype("float32")
    >>> context = np.random.rand(2, 6, 16).astype("float32")
    >>> y, self_scores, cross_scores = block(x, context, return_attention_scores=True)
    >>> tuple(y.shape), tuple(self_scores.shape), tuple(cross_scores.shape)
    ((2, 4, 16), (2, 2, 4, 4), (2, 2, 4, 6))
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Set by `build` when the first call has a context. An instance
        # attribute: on PyTorch a class attribute would hide the sublayer,
        # which torch keeps outside the instance's __dict__.
        self._cross_attention_layer = None

    @property
    def has_cross_attention(self):
        """Whether the block was built with a context to cross-attend to."""
        return self._cross_attention_layer is not None

    def build(
        self,
        inputs_shape=None,
        context_shape=None,
        decoder_sequence_shape=None,
        encoder_sequence_shape=None,
    ):
        """Build self-attention, cross-attention (when given a context), norms, MLP, dropouts."""
        # keras names the shapes after the call arguments used, ours or keras-hub's.
        inputs_shape = common.pick_alias(
            "inputs_shape", inputs_shape, "decoder_sequence_shape", decoder_sequence_shape
        )
        context_shape = common.pick_alias(
            "context_shape", context_shape, "encoder_sequence_shape", encoder_sequence_shape
        )
        if inputs_shape is None:
            raise ValueError(
                "`build` needs the shape of the decoder sequence. "
                f"Received: inputs_shape={inputs_shape}"
            )
        hidden_dim = common.hidden_dim_of(inputs_shape, "inputs")
        self._key_dim = common.key_dim_for(hidden_dim, self.num_heads, self.key_dim)
        self._self_attention_layer = self.attention_sublayer(
            "self_attention", inputs_shape, inputs_shape, self._key_dim, rotary=True
        )
        self._self_attention_layer_norm = self.layer_norm("self_attention_layer_norm", inputs_shape)
        if context_shape is not None:
            common.hidden_dim_of(context_shape, "context")
            self._cross_attention_layer = self.attention_sublayer(
                "cross_attention", inputs_shape, context_shape, self._key_dim
            )
            self._cross_attention_layer_norm = self.layer_norm(
                "cross_attention_layer_norm", inputs_shape
            )
        self.build_feedforward(inputs_shape, hidden_dim)
        self._feedforward_layer_norm = self.layer_norm("feedforward_layer_norm", inputs_shape)
        self._self_attention_dropout = self.dropout_layer("self_attention_dropout")
        if context_shape is not None:
            self._cross_attention_dropout = self.dropout_layer("cross_attention_dropout")
        self._feedforward_dropout = self.dropout_layer("feedforward_dropout")
        self.built = True

    def cache_shape(self, batch_size, length, hidden_dim=None):
        """The shape of a key/value cache of `length` positions, self- or cross-attention.

        Args:
            batch_size: rows of the cache (None when unknown).
            length: positions it holds (`max_length`, or the context length).
            hidden_dim: width of the decoder sequence; needed only before the
                block is built and without `key_dim`.

        Returns:
            `(batch_size, 2, length, key_value_heads, key_dim)`.

        Example:

        >>> block = TransformerDecoderBlock(num_heads=4, intermediate_dim=8, num_key_value_heads=1)
        >>> block.cache_shape(3, 10, hidden_dim=16)  # one key/value head: multi-query attention
        (3, 2, 10, 1, 4)
        """
        if self.built:
            key_dim = self._key_dim
        elif self.key_dim is not None:
            key_dim = self.key_dim
        elif hidden_dim is not None:
            key_dim = common.key_dim_for(hidden_dim, self.num_heads, None)
        else:
            key_dim = None
        return (batch_size, 2, length, self.key_value_heads, key_dim)

    def compute_cross_attention_cache(self, context):
        """Project `context` once into its cache, shaped as `cache_shape` says."""
        if not self.has_cross_attention:
            raise ValueError(
                "This block has no cross-attention: it was built without a `context`. "
                "Received: a request for a cross-attention cache"
            )
        return self._cross_attention_layer.compute_cache(context)

    def call(
        self,
        inputs=None,
        context=None,
        padding_mask=None,
        context_padding_mask=None,
        attention_mask=None,
        self_attention_cache=None,
        self_attention_cache_update_index=None,
        cross_attention_cache=None,
        use_causal_mask=True,
        return_attention_scores=False,
        training=None,
        cross_attention_cache_update_index=None,
        context_attention_mask=None,
        decoder_sequence=None,
        encoder_sequence=None,
        decoder_padding_mask=None,
        decoder_attention_mask=None,
        encoder_padding_mask=None,
        encoder_attention_mask=None,
    ):
        """Self-attention, cross-attention (with a context), then the MLP sub-block.

        The arguments are in the class docstring; keras-hub's names
        (`decoder_sequence`, ...) alias `inputs`, `context` and their masks.
        """
        names = (
            ("inputs", inputs, "decoder_sequence", decoder_sequence),
            ("context", context, "encoder_sequence", encoder_sequence),
            ("padding_mask", padding_mask, "decoder_padding_mask", decoder_padding_mask),
            ("attention_mask", attention_mask, "decoder_attention_mask", decoder_attention_mask),
            (
                "context_padding_mask",
                context_padding_mask,
                "encoder_padding_mask",
                encoder_padding_mask,
            ),
            (
                "context_attention_mask",
                context_attention_mask,
                "encoder_attention_mask",
                encoder_attention_mask,
            ),
        )
        inputs, context, padding_mask, attention_mask, context_padding_mask, context_mask = (
            common.pick_alias(*entry) for entry in names
        )
        self_cache = (self_attention_cache, self_attention_cache_update_index)
        cross_cache = (cross_attention_cache, cross_attention_cache_update_index)
        self._check_call(inputs, context, self_cache, cross_cache)
        if padding_mask is None and self_attention_cache is None:
            # With a cache the keys are the cache positions, which the keras
            # mask of the new tokens does not describe.
            padding_mask = common.keras_mask_of(inputs)
        self_mask = common.self_attention_mask(padding_mask, attention_mask)
        x, self_scores, self_attention_cache = self._self_attention_step(
            inputs, self_mask, use_causal_mask, self_cache, training
        )
        scores = [self_scores]
        if self.has_cross_attention:
            if self_attention_cache is not None and cross_attention_cache is None:
                cross_cache = (self.compute_cross_attention_cache(context), None)
            cross_mask = self._cross_attention_mask(context, context_padding_mask, context_mask)
            x, cross_scores, cross_attention_cache = self._cross_attention_step(
                x, context, cross_mask, cross_cache, training
            )
            scores.append(cross_scores)
        x, _ = self.residual_sub_block(
            x, self._feedforward_layer_norm, self.feedforward, self._feedforward_dropout, training
        )
        outputs = [x]
        if return_attention_scores:
            outputs.extend(scores)
        if self_attention_cache is not None:
            outputs.append(self_attention_cache)
            if self.has_cross_attention:
                outputs.append(cross_attention_cache)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def _self_attention_step(self, inputs, mask, use_causal_mask, cache, training):
        """The self-attention sub-block: `(x, scores, updated cache or None)`.

        `cache` is `(self_attention_cache, its update index)`, both None
        without a cache.
        """
        cache, cache_update_index = cache
        attention_kwargs = {}
        if cache is not None:
            attention_kwargs = {"cache": cache, "cache_update_index": cache_update_index}
        # extra: (weights[, updated cache]), the weights asked for even when not returned.
        x, extra = self.self_attention_sub_block(
            inputs,
            training,
            return_attention_scores=True,
            attention_mask=mask,
            use_causal_mask=use_causal_mask,
            **attention_kwargs,
        )
        return x, extra[0], (extra[1] if cache is not None else None)

    def _cross_attention_mask(self, context, context_padding_mask, context_attention_mask):
        """(B | 1, 1, T | 1, S): the context's padding and attention masks merged, or None."""
        if context_padding_mask is None:
            context_padding_mask = common.keras_mask_of(context)
        cross_mask = None
        if context_padding_mask is not None:
            cross_mask = common.padding_to_key_mask(
                context_padding_mask, "context_padding_mask"
            )  # (B, 1, 1, S)
        if context_attention_mask is not None:
            cross_mask = common.merge_masks(
                cross_mask,
                common.attention_mask_4d(context_attention_mask, "context_attention_mask"),
            )  # (B | 1, 1, T | 1, S)
        return cross_mask

    def _cross_attention_step(self, x, context, mask, cache, training):
        """The cross-attention sub-block: `(x, scores, cache or None)`.

        `cache` is `(cross_attention_cache, its update index)`; with an
        index, the projected context is written there first (keras-hub fills
        the cross-attention cache on the first step), then read as is.
        """
        cache, cache_update_index = cache
        if cache_update_index is not None:
            cache = ops.slice_update(
                cache,
                [0, 0, cache_update_index, 0, 0],
                ops.cast(self.compute_cross_attention_cache(context), cache.dtype),
            )  # (B, 2, S, key_value_heads, key_dim)
        cross_kwargs = {} if cache is None else {"cache": cache}

        def cross_attend(x):
            attended = self._cross_attention_layer(
                x,
                context,
                attention_mask=mask,
                return_attention_scores=True,
                training=training,
                **cross_kwargs,
            )
            return attended[0], attended[1]

        x, cross_scores = self.residual_sub_block(
            x,
            self._cross_attention_layer_norm,
            cross_attend,
            self._cross_attention_dropout,
            training,
        )
        return x, cross_scores, cache

    def _check_call(self, inputs, context, self_cache, cross_cache):
        """Refuse a call whose sequences or caches do not fit this block.

        `self_cache` and `cross_cache` are `(cache, cache update index)`.
        """
        self_attention_cache, cache_update_index = self_cache
        if inputs is None:
            raise ValueError(
                "The block needs a decoder sequence, `inputs` (or keras-hub's "
                f"`decoder_sequence`). Received: inputs={inputs}"
            )
        if context is not None and not self.has_cross_attention:
            raise ValueError(
                "This block was built without cross-attention (its first call had no "
                "`context`), so it cannot take one now. Received: context with shape "
                f"{tuple(context.shape)}"
            )
        if context is None and self.has_cross_attention:
            raise ValueError(
                "This block has cross-attention and needs a `context`. Received: context=None"
            )
        if context is not None and context.shape[-1] is not None:
            expected = self._cross_attention_layer.key_dense.kernel.shape[0]
            if context.shape[-1] != expected:
                raise ValueError(
                    f"`context` must have {expected} features (the width it was built "
                    f"with). Received: context.shape={tuple(context.shape)}"
                )
        if (self_attention_cache is None) != (cache_update_index is None):
            raise ValueError(
                "`self_attention_cache` and `self_attention_cache_update_index` go "
                f"together. Received: self_attention_cache is "
                f"{'None' if self_attention_cache is None else 'set'}, "
                f"self_attention_cache_update_index={cache_update_index!r}"
            )
        if cross_cache[1] is not None and cross_cache[0] is None:
            raise ValueError(
                "`cross_attention_cache_update_index` needs a `cross_attention_cache`. "
                "Received: cross_attention_cache=None, "
                f"cross_attention_cache_update_index={cross_cache[1]!r}"
            )

    def compute_mask(self, inputs, mask=None, **kwargs):
        # keras passes the decoder sequence and its mask positionally: padded
        # tokens stay padded.
        return mask

    def compute_output_shape(
        self,
        inputs_shape=None,
        context_shape=None,
        decoder_sequence_shape=None,
        encoder_sequence_shape=None,
    ):
        return common.pick_alias(
            "inputs_shape", inputs_shape, "decoder_sequence_shape", decoder_sequence_shape
        )

    def compute_output_spec(
        self,
        inputs=None,
        context=None,
        self_attention_cache=None,
        cross_attention_cache=None,
        return_attention_scores=False,
        decoder_sequence=None,
        encoder_sequence=None,
        **kwargs,
    ):
        """The specs of the output, the scores and the caches, in the order `call` returns them."""
        inputs = inputs if inputs is not None else decoder_sequence
        context = context if context is not None else encoder_sequence

        def spec(shape, dtype=self.compute_dtype):
            return keras.KerasTensor(tuple(shape), dtype=dtype)

        batch, length = inputs.shape[0], inputs.shape[1]
        outputs = [spec(inputs.shape)]
        if return_attention_scores:
            key_length = length if self_attention_cache is None else self_attention_cache.shape[2]
            outputs.append(self.scores_spec(inputs, key_length))
            if context is not None:
                outputs.append(self.scores_spec(inputs, context.shape[1]))
        if self_attention_cache is not None:
            outputs.append(spec(self_attention_cache.shape, self_attention_cache.dtype))
            if context is not None:
                cross_shape = self.cache_shape(batch, context.shape[1], inputs.shape[-1])
                if cross_attention_cache is not None:
                    cross_shape = cross_attention_cache.shape
                outputs.append(spec(cross_shape, self_attention_cache.dtype))
        return outputs[0] if len(outputs) == 1 else tuple(outputs)
