"""Argument checks and mask plumbing shared by the Transformer blocks."""

import keras
from keras import ops

from keras_attention.layers.base_attention import clone_initializer
from keras_attention.ops.attention import check_implementation
from keras_attention.ops.hashed_dropout import hashed_dropout
from keras_attention.ops.masks import merge_masks
from keras_attention.validation import check_positive_int
from keras_attention.validation import check_rate






class TransformerBlock(keras.layers.Layer):
    """The arguments, checks and config that the encoder and decoder blocks share."""

    def __init__(
        self,
        num_heads,
        intermediate_dim,
        dropout=0.0,
        activation="relu",
        norm_first=False,
        layer_norm_epsilon=1e-5,
        key_dim=None,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        implementation="auto",
        rotary_max_wavelength=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_positive_int("num_heads", num_heads)
        check_positive_int("intermediate_dim", intermediate_dim)
        check_positive_int("key_dim", key_dim, allow_none=True)
        check_rate("dropout", dropout)
        check_implementation(implementation)
        self.num_heads = num_heads
        self.intermediate_dim = intermediate_dim
        self.dropout = dropout
        self.activation = keras.activations.get(activation)
        self.norm_first = norm_first
        self.layer_norm_epsilon = layer_norm_epsilon
        self.key_dim = key_dim
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.implementation = implementation
        self.rotary_max_wavelength = rotary_max_wavelength
        self.supports_masking = True

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "num_heads": self.num_heads,
                "intermediate_dim": self.intermediate_dim,
                "dropout": self.dropout,
                "activation": keras.activations.serialize(self.activation),
                "norm_first": self.norm_first,
                "layer_norm_epsilon": self.layer_norm_epsilon,
                "key_dim": self.key_dim,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
                "bias_initializer": keras.initializers.serialize(self.bias_initializer),
                "implementation": self.implementation,
                "rotary_max_wavelength": self.rotary_max_wavelength,
            }
        )
        return config

    def residual_dropout(self, x, training):
        """Dropout on a sublayer's output before the residual sum.

        The bits come from `hashed_dropout` rather than keras.random, whose
        generator is slow under XLA on CPU; the seed state is that of the
        block's `_dropout_layer`, built with the block.
        """
        if not training or self.dropout == 0:
            return x
        return hashed_dropout(x, self.dropout, self._dropout_layer.seed_generator)

    def layer_norm(self, name, shape):
        """A built LayerNormalization sublayer in the block's dtype policy."""
        norm = keras.layers.LayerNormalization(
            epsilon=self.layer_norm_epsilon, dtype=self.dtype_policy, name=name
        )
        norm.build(shape)
        return norm


def hidden_dim_of(shape, name):
    if len(shape) != 3 or shape[-1] is None:
        raise ValueError(
            f"`{name}` must be (batch, length, hidden_dim) with a known hidden_dim. "
            f"Received: {name}.shape={tuple(shape)}"
        )
    return shape[-1]


def key_dim_for(hidden_dim, num_heads, key_dim):
    """The per-head size: `key_dim` if given, else hidden_dim // num_heads."""
    if key_dim is not None:
        return key_dim
    if hidden_dim < num_heads:
        raise ValueError(
            "The hidden size must be at least `num_heads` so that each head has "
            f"hidden_dim // num_heads >= 1 features. Received: hidden_dim={hidden_dim}, "
            f"num_heads={num_heads}"
        )
    return hidden_dim // num_heads


def dense_kwargs(block):
    """Cloned initializers and the block's dtype policy for a sublayer."""
    return {
        "kernel_initializer": clone_initializer(block.kernel_initializer),
        "bias_initializer": clone_initializer(block.bias_initializer),
        "dtype": block.dtype_policy,
    }


def keras_mask_of(tensor):
    return getattr(tensor, "_keras_mask", None)


def self_attention_mask(padding_mask, attention_mask):
    """(B, T, T) or (B, 1, T) mask hiding padded keys, merged with attention_mask."""
    key_mask = None
    if padding_mask is not None:
        padding_mask = ops.convert_to_tensor(padding_mask)
        if len(padding_mask.shape) != 2:
            raise ValueError(
                "`padding_mask` must be (batch, length). "
                f"Received: padding_mask.shape={tuple(padding_mask.shape)}"
            )
        key_mask = ops.cast(padding_mask, "bool")[:, None, :]  # (B, 1, T)
    if attention_mask is not None:
        attention_mask = ops.convert_to_tensor(attention_mask)
        if len(attention_mask.shape) != 3:
            raise ValueError(
                "`attention_mask` must be (batch, query_length, key_length). "
                f"Received: attention_mask.shape={tuple(attention_mask.shape)}"
            )
    return merge_masks(key_mask, attention_mask)
