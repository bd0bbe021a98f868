"""Arguments, sublayers, residual wiring and masks shared by the Transformer blocks."""

import functools

import keras

from keras_attention.layers.attention.base_attention import clone_initializer
from keras_attention.layers.attention.grouped_query_attention import GroupQueryAttention
from keras_attention.layers.attention.multi_head_attention import MultiHeadAttention
from keras_attention.ops.attention import check_implementation
from keras_attention.ops.hashed_dropout import hashed_dropout
from keras_attention.ops.masks import boolean_mask
from keras_attention.ops.masks import merge_masks
from keras_attention.validation import check_bool
from keras_attention.validation import check_finite_number
from keras_attention.validation import check_optional_finite_number
from keras_attention.validation import check_positive_int
from keras_attention.validation import check_rate
from keras_attention.validation import keep_checked_arguments
from keras_attention.validation import kept_arguments

# The constructor arguments both blocks keep as they are, with their checks.
_CHECKED_ARGUMENTS = {
    "num_heads": check_positive_int,
    "intermediate_dim": check_positive_int,
    "key_dim": functools.partial(check_positive_int, allow_none=True),
    "dropout": check_rate,
    "layer_norm_epsilon": functools.partial(check_finite_number, positive=True),
    "rotary_max_wavelength": functools.partial(check_optional_finite_number, positive=True),
}


class TransformerBlock(keras.layers.Layer):
    """The arguments, checks, config and sub-blocks that the encoder and decoder share.

    Each sub-block (attention or MLP) is residual, with LayerNorm after it
    (`norm_first=False`) or before it (`norm_first=True`); see
    `residual_sub_block`. The attention sublayers are `MultiHeadAttention`,
    or `GroupQueryAttention` when `num_key_value_heads` is set.
    """

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
        normalize_first=None,
        num_key_value_heads=None,
        **kwargs,
    ):
        """Check the arguments the encoder and decoder blocks share, and keep them."""
        check_bool("norm_first", norm_first)
        norm_first = resolve_norm_first(norm_first, normalize_first)
        check_implementation(implementation)
        super().__init__(**kwargs)
        keep_checked_arguments(self, locals(), _CHECKED_ARGUMENTS)
        check_key_value_heads(num_heads, num_key_value_heads)
        self.num_key_value_heads = num_key_value_heads
        self.norm_first = norm_first
        self.implementation = implementation
        self.activation = keras.activations.get(activation)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.supports_masking = True

    def get_config(self):
        return {
            **super().get_config(),
            **kept_arguments(self, _CHECKED_ARGUMENTS),
            "activation": keras.activations.serialize(self.activation),
            "norm_first": self.norm_first,
            "normalize_first": self.norm_first,
            "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
            "bias_initializer": keras.initializers.serialize(self.bias_initializer),
            "implementation": self.implementation,
            "num_key_value_heads": self.num_key_value_heads,
        }

    @property
    def key_value_heads(self):
        """The key/value heads of the attention, which a cache holds: `num_key_value_heads`
        when set, else `num_heads`."""
        return self.num_heads if self.num_key_value_heads is None else self.num_key_value_heads

    def residual_dropout(self, x, training, dropout_layer):
        """Dropout on a sublayer's output before the residual sum.

        The bits come from `hashed_dropout` rather than keras.random, whose
        generator is slow under XLA on CPU; the seed state is that of
        `dropout_layer`, one `Dropout` per sub-block (as keras-hub's blocks
        have, so their seed states line up), built with the block.
        """
        if not training or self.dropout == 0:
            return x
        return hashed_dropout(x, self.dropout, dropout_layer.seed_generator)

    def residual_sub_block(self, x, norm, sublayer, dropout_layer, training):
        """One residual sub-block: `sublayer` with `norm` before or after it.

        `norm(x + drop(f(x)))` when post-norm, `x + drop(f(norm(x)))` when
        pre-norm, where `sublayer(x)` returns `(f(x), extra)` and `extra`
        (attention scores, a cache, or None) is handed back with the output.
        """
        residual = x
        if self.norm_first:
            x = norm(x)
        x, extra = sublayer(x)
        x = self.residual_dropout(x, training, dropout_layer)
        x = residual + self.drop_residual_branch(x, training)
        if not self.norm_first:
            x = norm(x)
        return x, extra

    def self_attention_sub_block(self, inputs, training, *, return_attention_scores, **attention):
        """The residual self-attention sub-block: `(x, what the attention returns after x)`.

        `_self_attention_layer` attends from `inputs` (normed first with
        `norm_first`) to themselves, with the `attention` call arguments
        (`attention_mask`, a cache, ...); the rest of its results comes back
        as a tuple: the weights when `return_attention_scores` asks for them,
        then the updated cache when a cache is given (`()` for neither).
        Without the weights the attention may use the chunked or fused
        kernels and skip keeping them.
        """
        returns_more = return_attention_scores or attention.get("cache") is not None

        def self_attend(x):
            attended = self._self_attention_layer(
                x,
                x,
                return_attention_scores=return_attention_scores,
                training=training,
                **attention,
            )
            # output, or (output, weights[, updated cache]) / (output, updated cache)
            return (attended[0], tuple(attended[1:])) if returns_more else (attended, ())

        return self.residual_sub_block(
            inputs,
            self._self_attention_layer_norm,
            self_attend,
            self._self_attention_dropout,
            training,
        )

    def drop_residual_branch(self, x, training):
        """A residual branch as the sum sees it; blocks that drop whole branches override it."""
        return x

    def attention_sublayer(self, name, query_shape, value_shape, key_dim, rotary=False):
        """A built attention sublayer; `rotary` gives it the block's rotary positions.

        `MultiHeadAttention` when `num_key_value_heads` is None (the weights
        and variable paths of blocks made before the argument existed), else
        `GroupQueryAttention` with `num_key_value_heads` key/value heads.
        """
        arguments = {
            "dropout": self.dropout,
            "implementation": self.implementation,
            "rotary_max_wavelength": self.rotary_max_wavelength if rotary else None,
            "name": name,
            **dense_kwargs(self),
        }
        if self.num_key_value_heads is None:
            layer = MultiHeadAttention(num_heads=self.num_heads, key_dim=key_dim, **arguments)
        else:
            layer = GroupQueryAttention(
                head_dim=key_dim,
                num_query_heads=self.num_heads,
                num_key_value_heads=self.num_key_value_heads,
                **arguments,
            )
        layer.build(query_shape, value_shape)
        return layer

    def build_feedforward(self, inputs_shape, hidden_dim):
        """The MLP's two Dense layers, in keras-hub's order and names."""
        self._feedforward_intermediate_dense = keras.layers.Dense(
            self.intermediate_dim,
            activation=self.activation,
            name="feedforward_intermediate_dense",
            **dense_kwargs(self),
        )
        self._feedforward_intermediate_dense.build(inputs_shape)
        self._feedforward_output_dense = keras.layers.Dense(
            hidden_dim, name="feedforward_output_dense", **dense_kwargs(self)
        )
        self._feedforward_output_dense.build(tuple(inputs_shape[:-1]) + (self.intermediate_dim,))

    def feedforward(self, x):
        """The MLP as a `residual_sub_block` sublayer: (output, None)."""
        return self._feedforward_output_dense(self._feedforward_intermediate_dense(x)), None

    def scores_spec(self, inputs, key_length):
        """The symbolic attention weights (batch, num_heads, length, key_length)."""
        shape = (inputs.shape[0], self.num_heads, inputs.shape[1], key_length)
        return keras.KerasTensor(shape, dtype=self.compute_dtype)

    def dropout_layer(self, name):
        """A `Dropout` sublayer whose seed state drives `residual_dropout`."""
        return keras.layers.Dropout(self.dropout, dtype=self.dtype_policy, name=name)

    def layer_norm(self, name, shape):
        """A built LayerNormalization sublayer in the block's dtype policy."""
        norm = keras.layers.LayerNormalization(
            epsilon=self.layer_norm_epsilon, dtype=self.dtype_policy, name=name
        )
        norm.build(shape)
        return norm

    @property
    def normalize_first(self):
        """keras-hub's name for `norm_first`."""
        return self.norm_first


def resolve_norm_first(norm_first, normalize_first):
    """`norm_first`, or keras-hub's `normalize_first` when that is given.

    `norm_first` defaults to False, so only an explicit True that
    `normalize_first=False` contradicts can be told apart and refused.
    """
    if normalize_first is None:
        return norm_first
    check_bool("normalize_first", normalize_first)
    if norm_first is True and normalize_first is False:
        raise ValueError(
            "`normalize_first` is keras-hub's name for `norm_first`; pass one of them. "
            f"Received: norm_first={norm_first}, normalize_first={normalize_first}"
        )
    return normalize_first


def check_key_value_heads(num_heads, num_key_value_heads):
    """`num_key_value_heads` is None or a positive divisor of `num_heads`."""
    check_positive_int("num_key_value_heads", num_key_value_heads, allow_none=True)
    if num_key_value_heads is not None and num_heads % num_key_value_heads:
        raise ValueError(
            "`num_heads` must be divisible by `num_key_value_heads`: each key/value head "
            "serves a group of query heads. "
            f"Received: num_heads={num_heads}, num_key_value_heads={num_key_value_heads}"
        )


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
    if hidden_dim < num_heads or hidden_dim % num_heads:
        # A remainder would silently drop features from every head's share.
        raise ValueError(
            "The hidden size (last axis of the inputs) must be a multiple of `num_heads` "
            "so that the heads split it evenly, or pass `key_dim`. "
            f"Received: hidden_dim={hidden_dim}, num_heads={num_heads}"
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


def padding_to_key_mask(padding_mask, name="padding_mask"):
    """A (B, T) padding mask -> (B, 1, 1, T), hiding padded keys from every query and head."""
    padding_mask = boolean_mask(padding_mask, name)
    if len(padding_mask.shape) != 2:
        raise ValueError(
            f"`{name}` must be (batch, length). Received: {name}.shape={tuple(padding_mask.shape)}"
        )
    return padding_mask[:, None, None, :]  # (B, 1, 1, T)


def pick_alias(name, value, peer_name, peer_value):
    """The value of an argument that may come under our name or a peer library's."""
    if peer_value is None:
        return value
    if value is not None:
        raise ValueError(
            f"`{peer_name}` is another name for `{name}`; pass only one of them. "
            f"Received: {name} and {peer_name} both set"
        )
    return peer_value


def attention_mask_4d(attention_mask, name="attention_mask"):
    """A rank 2 (T, S), 3 (B, T, S) or 4 (B, H, T, S) bool mask as (B | 1, H | 1, T, S)."""
    attention_mask = boolean_mask(attention_mask, name)
    rank = len(attention_mask.shape)
    if not 2 <= rank <= 4:
        raise ValueError(
            f"`{name}` must have rank 2 (length, key_length), 3 (batch, length, "
            "key_length) or 4 (batch, heads, length, key_length). "
            f"Received: {name}.shape={tuple(attention_mask.shape)}"
        )
    if rank == 2:
        return attention_mask[None, None]  # (1, 1, T, S)
    if rank == 3:
        return attention_mask[:, None]  # (B, 1, T, S)
    return attention_mask


def self_attention_mask(padding_mask, attention_mask):
    """A rank-4 mask hiding padded keys, merged with `attention_mask`.

    `attention_mask` follows the rule of `keras_attention.ops.masks`: rank 2
    (T, T), 3 (B, T, T) or 4 (B, H, T, T).
    """
    key_mask = None
    if padding_mask is not None:
        key_mask = padding_to_key_mask(padding_mask)  # (B, 1, 1, T)
    if attention_mask is not None:
        attention_mask = attention_mask_4d(attention_mask)  # (B | 1, H | 1, T, T)
    return merge_masks(key_mask, attention_mask)
