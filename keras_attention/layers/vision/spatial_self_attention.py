"""Self-attention over the positions of a CNN feature map (SAGAN)."""

import functools

import keras
from keras import ops

from keras_attention.layers.attention.attention_results import attention_output_spec
from keras_attention.layers.attention.head_attention_checks import HEAD_ARGUMENTS
from keras_attention.layers.attention.projection_settings import projection_sublayer_kwargs
from keras_attention.layers.attention.self_attention_common import checked_input_shape
from keras_attention.layers.attention.self_attention_common import keep_self_attention_arguments
from keras_attention.layers.attention.self_attention_common import self_attention_arguments_config
from keras_attention.ops.attention import dot_product_attention
from keras_attention.ops.attention import kernel_for_call
from keras_attention.validation import check_positive_int

# The constructor arguments kept as they are, with their checks.
_CHECKED_ARGUMENTS = {
    **HEAD_ARGUMENTS,
    "key_dim": functools.partial(check_positive_int, allow_none=True),
}


@keras.saving.register_keras_serializable(package="keras_attention")
class SpatialSelfAttention(keras.layers.Layer):
    """The self-attention module for CNN feature maps of SAGAN.

    Paper: https://arxiv.org/abs/1805.08318 (Zhang et al., "Self-Attention
    Generative Adversarial Networks", 2019)

    On a `(B, H, W, C)` feature map every one of the `H * W` positions attends
    to every other: 1x1 convolutions (per-position linear maps) give queries
    and keys of `key_dim` channels per head and values of `value_dim`
    channels per head, scaled dot-product attention runs over the `H * W`
    positions, a 1x1 output convolution brings the heads back to `C` channels
    when `num_heads * value_dim != C`, and the result is added to the input
    through a learned scalar gate:

        y = x + gamma * attention(x)

    `gamma` starts at 0, so a new layer is the identity and the network
    learns how much non-local evidence to mix in. Unlike the paper, the scores
    are scaled by `1 / sqrt(key_dim)` as in the Transformer.

    Args:
        key_dim: channels of queries and keys per head; None means
            `max(1, C // (8 * num_heads))` (C / 8 in all, as in the paper).
        num_heads: number of attention heads, a positive int.
        value_dim: channels of values per head; None means
            `max(1, C // num_heads)`.
        dropout: dropout rate on the attention weights, in [0, 1).
        use_bias: whether the 1x1 projections have biases.
        implementation: "auto", "xla", "chunked" or "fused", the kernel of
            `keras_attention.ops.dot_product_attention`.
        gamma_initializer: initializer of the residual gate; "zeros" makes a
            new layer the identity.
        kernel_initializer: initializer of the projection kernels.
        bias_initializer: initializer of the projection biases.
        kernel_regularizer: regularizer of the projection kernels.
        bias_regularizer: regularizer of the projection biases.
        seed: optional int seed of the attention dropout.
        **kwargs: base `keras.layers.Layer` arguments (`name`, `dtype`, ...).

    Call arguments:
        inputs: `(B, H, W, C)` feature map, channels last.
        return_attention_scores: also return the attention weights.
        training: whether dropout is active.

    Returns:
        `(B, H, W, C)`; with `return_attention_scores=True` also the weights
        `(B, num_heads, H * W, H * W)` (row-major positions: `i * W + j`).

    Example:

    >>> import numpy as np
    >>> from keras_attention.layers.vision.spatial_self_attention import SpatialSelfAttention
    >>> layer = SpatialSelfAttention()
    >>> features = np.random.rand(2, 4, 5, 16).astype("float32")
    >>> output, scores = layer(features, return_attention_scores=True)
    >>> tuple(output.shape), tuple(scores.shape)
    ((2, 4, 5, 16), (2, 1, 20, 20))
    >>> bool(np.allclose(output, features))  # gamma starts at 0
    True
    """

    def __init__(
        self,
        key_dim=None,
        num_heads=1,
        value_dim=None,
        dropout=0.0,
        use_bias=True,
        implementation="auto",
        gamma_initializer="zeros",
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        seed=None,
        **kwargs,
    ):
        """Check the arguments and keep them; the projections are made in `build`."""
        super().__init__(**kwargs)
        keep_self_attention_arguments(self, locals(), _CHECKED_ARGUMENTS)
        self.gamma_initializer = keras.initializers.get(gamma_initializer)
        self._seed_generator = keras.random.SeedGenerator(seed) if dropout > 0 else None

    def build(self, input_shape):
        input_shape = checked_input_shape(
            input_shape, 4, "a (batch, height, width, channels) feature map with known channels"
        )
        channels = input_shape[-1]
        self._head_key_dim = self.key_dim or max(1, channels // (8 * self.num_heads))
        self._head_value_dim = self.value_dim or max(1, channels // self.num_heads)
        self._query_conv = self._projection("query", self._head_key_dim, input_shape)
        self._key_conv = self._projection("key", self._head_key_dim, input_shape)
        self._value_conv = self._projection("value", self._head_value_dim, input_shape)
        self._output_conv = None
        if self.num_heads * self._head_value_dim != channels:
            self._output_conv = keras.layers.EinsumDense(
                "bhwnv,nvc->bhwc",
                output_shape=(None, None, channels),
                bias_axes="c" if self.use_bias else None,
                name="attention_output",
                **projection_sublayer_kwargs(self),
            )
            self._output_conv.build(input_shape[:3] + (self.num_heads, self._head_value_dim))
        self.gamma = self.add_weight(
            name="gamma", shape=(), initializer=self.gamma_initializer, trainable=True
        )

    def _projection(self, name, head_dim, input_shape):
        # A 1x1 convolution into heads: (B, H, W, C) -> (B, H, W, N, head_dim).
        layer = keras.layers.EinsumDense(
            "bhwc,cnd->bhwnd",
            output_shape=(None, None, self.num_heads, head_dim),
            bias_axes="nd" if self.use_bias else None,
            name=name,
            **projection_sublayer_kwargs(self),
        )
        layer.build(input_shape)
        return layer

    def call(self, inputs, return_attention_scores=False, training=None):
        shape = ops.shape(inputs)
        batch, height, width = shape[0], shape[1], shape[2]
        positions = (batch, -1, self.num_heads)
        query = ops.reshape(self._query_conv(inputs), positions + (self._head_key_dim,))
        key = ops.reshape(self._key_conv(inputs), positions + (self._head_key_dim,))
        value = ops.reshape(self._value_conv(inputs), positions + (self._head_value_dim,))
        # query, key: (B, H*W, N, Dk); value: (B, H*W, N, Dv)
        use_dropout = self.dropout > 0 and bool(training)
        implementation = kernel_for_call(self.implementation, return_attention_scores, use_dropout)
        attention = dot_product_attention(
            query,
            key,
            value,
            dropout_rate=self.dropout,
            training=use_dropout,
            return_weights=return_attention_scores,
            implementation=implementation,
            seed=self._seed_generator,
        )
        attended, scores = attention if return_attention_scores else (attention, None)
        heads_shape = (batch, height, width, self.num_heads, self._head_value_dim)
        attended = ops.reshape(attended, heads_shape)  # (B, H, W, N, Dv)
        if self._output_conv is not None:
            attended = self._output_conv(attended)  # (B, H, W, C)
        else:
            attended = ops.reshape(attended, ops.shape(inputs))  # (B, H, W, N * Dv = C)
        output = inputs + ops.cast(self.gamma, attended.dtype) * attended
        return (output, scores) if return_attention_scores else output

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def compute_output_spec(self, inputs, return_attention_scores=False, training=None):
        batch, height, width = inputs.shape[:3]
        positions = None if height is None or width is None else height * width
        scores_shape = (batch, self.num_heads, positions, positions)
        if not return_attention_scores:
            scores_shape = None
        return attention_output_spec(self.compute_dtype, inputs.shape, scores_shape)

    def get_config(self):
        return {
            **super().get_config(),
            **self_attention_arguments_config(self, _CHECKED_ARGUMENTS),
            "gamma_initializer": keras.initializers.serialize(self.gamma_initializer),
        }
