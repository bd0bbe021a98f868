"""Multi-head self-attention over one sequence, for `keras.Sequential` models."""

import keras

from keras_attention.layers.attention.attention_results import attention_output_spec
from keras_attention.layers.attention.head_attention_checks import HEAD_ARGUMENTS
from keras_attention.layers.attention.multi_head_attention import MultiHeadAttention
from keras_attention.layers.attention.projection_settings import projection_settings
from keras_attention.layers.attention.self_attention_common import checked_input_shape
from keras_attention.layers.attention.self_attention_common import keep_self_attention_arguments
from keras_attention.layers.attention.self_attention_common import self_attention_arguments_config
from keras_attention.layers.position.rotary_embedding import check_rotary
from keras_attention.validation import check_bool
from keras_attention.validation import check_positive_int

# The constructor arguments kept as they are, with their checks.
_CHECKED_ARGUMENTS = {
    **HEAD_ARGUMENTS,
    "key_dim": check_positive_int,
    "causal": check_bool,
}


@keras.saving.register_keras_serializable(package="keras_attention")
class SelfAttention(keras.layers.Layer):
    """Multi-head self-attention: a sequence attends to itself.

    Paper: https://arxiv.org/abs/1706.03762 (Vaswani et al., 2017)

    Queries, keys and values all come from the one input, so the layer fits
    in `keras.Sequential`. The Keras mask of the input (for example from
    `Embedding(mask_zero=True)`) hides padded keys and is passed on to the
    next layer. With `causal=True` position i sees positions 0..i only
    (masked self-attention, as in a Transformer decoder). The output has the
    input's feature size, so blocks can be stacked and added residually.

    Args:
        num_heads: number of attention heads, a positive int.
        key_dim: size of each head for queries and keys, a positive int.
        causal: whether each position only sees itself and earlier positions.
        value_dim: size of each head for values; None means `key_dim`.
        dropout: dropout rate on the attention weights, in [0, 1).
        use_bias: whether the projections have biases.
        implementation: "auto", "xla", "chunked" or "fused", the kernel of
            `keras_attention.ops.dot_product_attention`.
        rotary_max_wavelength: None, or the base wavelength of rotary position
            embeddings of queries and keys (`key_dim` must be even).
        kernel_initializer: initializer of the projection kernels.
        bias_initializer: initializer of the projection biases.
        kernel_regularizer: regularizer of the projection kernels.
        bias_regularizer: regularizer of the projection biases.
        seed: optional int seed of the attention dropout.
        **kwargs: base `keras.layers.Layer` arguments (`name`, `dtype`, ...).

    Call arguments:
        inputs: `(B, T, D)`.
        mask: optional `(B, T)` boolean padding mask, True = real token;
            filled in from the Keras mask of `inputs`.
        return_attention_scores: also return the attention weights.
        training: whether dropout is active.

    Returns:
        `(B, T, D)`; with `return_attention_scores=True` also the weights
        `(B, num_heads, T, T)`. A padded position attends to nothing and its
        output is the output projection's bias.

    Example:

    >>> import numpy as np
    >>> import keras
    >>> from keras_attention.layers.attention.self_attention import SelfAttention
    >>> model = keras.Sequential([
    ...     keras.layers.Embedding(50, 8, mask_zero=True),
    ...     SelfAttention(num_heads=2, key_dim=4, causal=True),
    ...     keras.layers.GlobalAveragePooling1D(),
    ... ])
    >>> tuple(model(np.array([[5, 7, 9, 0, 0]])).shape)
    (1, 8)
    """

    def __init__(
        self,
        num_heads,
        key_dim,
        causal=False,
        value_dim=None,
        dropout=0.0,
        use_bias=True,
        implementation="auto",
        rotary_max_wavelength=None,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        seed=None,
        **kwargs,
    ):
        """Check and keep the arguments; the attention is made in `build`."""
        super().__init__(**kwargs)
        keep_self_attention_arguments(self, locals(), _CHECKED_ARGUMENTS)
        check_rotary(rotary_max_wavelength, key_dim)
        self.rotary_max_wavelength = rotary_max_wavelength
        self.supports_masking = True

    def build(self, input_shape):
        input_shape = checked_input_shape(
            input_shape, 3, "(batch, length, features) with known features"
        )
        self.attention = MultiHeadAttention(
            num_heads=self.num_heads,
            key_dim=self.key_dim,
            value_dim=self.value_dim,
            dropout=self.dropout,
            use_bias=self.use_bias,
            seed=self.seed,
            implementation=self.implementation,
            rotary_max_wavelength=self.rotary_max_wavelength,
            # The settings as they are: the attention clones them per projection.
            **projection_settings(self),
            dtype=self.dtype_policy,
            name="attention",
        )
        self.attention.build(input_shape, input_shape)

    def call(self, inputs, mask=None, return_attention_scores=False, training=None):
        return self.attention(
            inputs,
            inputs,
            query_mask=mask,
            value_mask=mask,
            return_attention_scores=return_attention_scores,
            training=training,
            use_causal_mask=self.causal,
        )

    def compute_mask(self, inputs, mask=None):
        return mask

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def compute_output_spec(self, inputs, mask=None, return_attention_scores=False, training=None):
        batch, length = inputs.shape[0], inputs.shape[1]
        scores_shape = (batch, self.num_heads, length, length) if return_attention_scores else None
        return attention_output_spec(self.compute_dtype, inputs.shape, scores_shape)

    def get_config(self):
        return {
            **super().get_config(),
            **self_attention_arguments_config(self, _CHECKED_ARGUMENTS),
            "rotary_max_wavelength": self.rotary_max_wavelength,
        }
