"""Multi-head self-attention inside non-overlapping windows, with a relative position bias.

Liu et al., "Swin Transformer: Hierarchical Vision Transformer using Shifted
Windows" (https://arxiv.org/abs/2103.14030), section 3.2.
"""

import keras
import numpy as np
from keras import ops

from keras_attention.ops.attention import dot_product_attention
from keras_attention.validation import check_bool
from keras_attention.validation import check_known_last_axes
from keras_attention.validation import check_positive_int
from keras_attention.validation import check_rank
from keras_attention.validation import check_rate
from keras_attention.validation import check_seed_argument
from keras_attention.validation import keep_checked_arguments
from keras_attention.validation import kept_arguments

# The constructor arguments kept as they are, with their checks.
_CHECKED_ARGUMENTS = {
    "num_heads": check_positive_int,
    "window_size": check_positive_int,
    "use_bias": check_bool,
    "dropout": check_rate,
    "seed": check_seed_argument,
}


def relative_position_index(window_size):
    """Row of the bias table for every (query, key) pair of a window.

    Tokens are numbered row-major in an `M x M` window. The offset of key
    `j` from query `i` is `(dy, dx)`, each in `[-(M - 1), M - 1]`; its table
    row is `(dy + M - 1) * (2M - 1) + (dx + M - 1)`.

    Args:
        window_size: the window side `M`.

    Returns:
        int32 array `(M*M, M*M)` with values in `[0, (2M - 1)^2)`.

    Example:

    >>> from keras_attention.layers.vision.window_attention import relative_position_index
    >>> relative_position_index(2).tolist()
    [[4, 3, 1, 0], [5, 4, 2, 1], [7, 6, 4, 3], [8, 7, 5, 4]]
    """
    check_positive_int("window_size", window_size)
    rows, cols = np.meshgrid(np.arange(window_size), np.arange(window_size), indexing="ij")
    rows, cols = rows.reshape(-1), cols.reshape(-1)  # (M*M,) each
    dy = rows[:, None] - rows[None, :] + window_size - 1  # (M*M, M*M), in [0, 2M - 2]
    dx = cols[:, None] - cols[None, :] + window_size - 1
    return (dy * (2 * window_size - 1) + dx).astype("int32")


def window_partition(maps, window_size):
    """`(B, H, W, C)` -> `(B * windows, M * M, C)`, windows row-major, tokens row-major."""
    shape = ops.shape(maps)
    rows, cols = shape[1] // window_size, shape[2] // window_size
    channels = maps.shape[-1]
    x = ops.reshape(maps, (-1, rows, window_size, cols, window_size, channels))
    x = ops.transpose(x, (0, 1, 3, 2, 4, 5))  # (B, rows, cols, M, M, C)
    return ops.reshape(x, (-1, window_size * window_size, channels))


def window_reverse(windows, window_size, height, width):
    """`(B * windows, M * M, C)` -> `(B, H, W, C)`: the inverse of `window_partition`."""
    rows, cols = height // window_size, width // window_size
    channels = windows.shape[-1]
    x = ops.reshape(windows, (-1, rows, cols, window_size, window_size, channels))
    x = ops.transpose(x, (0, 1, 3, 2, 4, 5))  # (B, rows, M, cols, M, C)
    return ops.reshape(x, (-1, height, width, channels))


def window_count(height, width, window_size):
    """Number of `window_size` windows on a map padded up to whole windows.

    Example:

    >>> from keras_attention.layers.vision.window_attention import window_count
    >>> window_count(56, 56, 7), window_count(10, 6, 4)
    (64, 6)
    """
    return -(-height // window_size) * -(-width // window_size)


def attention_output_spec(layer, inputs, return_attention_scores, windows, window_size):
    """A window attention layer's symbolic outputs: the map, and the weights when asked for."""
    outputs = keras.KerasTensor(inputs.shape, dtype=layer.compute_dtype)
    if not return_attention_scores:
        return outputs
    tokens = window_size * window_size
    shape = (inputs.shape[0], windows, layer.num_heads, tokens, tokens)
    return outputs, keras.KerasTensor(shape, dtype=layer.compute_dtype)


@keras.saving.register_keras_serializable(package="keras_attention")
class WindowAttention(keras.layers.Layer):
    """Self-attention within each `window_size x window_size` window of a feature map.

    Section 3.2 of Liu et al. 2021 (https://arxiv.org/abs/2103.14030): the
    map is cut into non-overlapping `M x M` windows (row-major) and every
    token attends to the `M^2` tokens of its own window only:

        Attention(Q, K, V) = SoftMax(Q K^T / sqrt(d) + B) V

    `B` is gathered from a learned table of `(2M - 1)^2` rows, one value per
    head, by the offset between query and key (`relative_position_index`).
    An optional boolean `attention_mask` `(windows, M^2, M^2)`, True = may
    attend, keeps apart the tokens of a shifted window that come from
    different parts of the image (`SwinTransformerBlock` makes it).

    Args:
        num_heads: attention heads; must divide the channels C.
        window_size: the window side M; must divide the map's height and
            width (`SwinTransformerBlock` pads the map and clips the window).
        use_bias: whether the query, key and value projection adds a bias.
        dropout: dropout rate on the attention weights while training.
        seed: optional int seed of the dropout.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        inputs: `(B, H, W, C)` feature map.
        attention_mask: optional bool `(H/M * W/M, M^2, M^2)`, the same for
            every image.
        return_attention_scores: also return the attention weights.
        training: whether dropout is active.

    Returns:
        `(B, H, W, C)`, and with `return_attention_scores=True` the weights
        `(B, windows, num_heads, M^2, M^2)`, windows and tokens row-major;
        rows sum to 1, except those of a query that may see no key, which
        are 0 (as is its output before the output projection).

    Example:

    >>> import numpy as np
    >>> from keras_attention.layers.vision.window_attention import WindowAttention
    >>> layer = WindowAttention(num_heads=2, window_size=4)
    >>> out, weights = layer(np.zeros((1, 8, 12, 6)), return_attention_scores=True)
    >>> tuple(out.shape), tuple(weights.shape)
    ((1, 8, 12, 6), (1, 6, 2, 16, 16))
    """

    def __init__(self, num_heads, window_size, use_bias=True, dropout=0.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        keep_checked_arguments(self, locals(), _CHECKED_ARGUMENTS)
        self._index = relative_position_index(window_size).reshape(-1)  # (M^4,)
        self._seed_generator = keras.random.SeedGenerator(seed) if dropout > 0 else None

    def build(self, input_shape):
        input_shape = tuple(input_shape)
        check_rank("inputs", input_shape, 4, "a feature map (batch, height, width, channels)")
        check_known_last_axes(inputs=input_shape)
        channels = input_shape[-1]
        if channels % self.num_heads:
            raise ValueError(
                "The channels of `inputs` must be a multiple of `num_heads`. "
                f"Received: channels={channels}, num_heads={self.num_heads}"
            )
        for axis, side in (("height", input_shape[1]), ("width", input_shape[2])):
            if side is not None and side % self.window_size:
                raise ValueError(
                    f"The {axis} of `inputs` must be a multiple of `window_size`. "
                    f"Received: {axis}={side}, window_size={self.window_size}"
                )
        self.qkv = keras.layers.Dense(
            3 * channels, use_bias=self.use_bias, dtype=self.dtype_policy, name="qkv"
        )
        self.qkv.build(input_shape[:1] + (None, channels))
        self.output_projection = keras.layers.Dense(
            channels, dtype=self.dtype_policy, name="output_projection"
        )
        self.output_projection.build(input_shape[:1] + (None, channels))
        sides = 2 * self.window_size - 1
        self.relative_position_bias = self.add_weight(
            name="relative_position_bias",
            shape=(sides * sides, self.num_heads),
            initializer=keras.initializers.TruncatedNormal(stddev=0.02),
        )

    def call(self, inputs, attention_mask=None, return_attention_scores=False, training=None):
        """Attend within each window, with the relative position bias; see the class docstring."""
        size = self.window_size
        tokens = size * size
        shape = ops.shape(inputs)
        channels = inputs.shape[-1]
        head_dim = channels // self.num_heads
        windows = window_partition(inputs, size)  # (B*nW, M^2, C)
        qkv = ops.reshape(self.qkv(windows), (-1, tokens, 3, self.num_heads, head_dim))
        query, key, value = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]  # (B*nW, M^2, h, d) each

        # (M^4, h) -> (1, h, M^2, M^2), added to the scaled scores.
        bias = ops.take(self.relative_position_bias, self._index, axis=0)
        bias = ops.transpose(ops.reshape(bias, (tokens, tokens, self.num_heads)), (2, 0, 1))
        mask = None
        if attention_mask is not None:
            # (nW, M^2, M^2) -> (B*nW, 1, M^2, M^2): the same mask for every image.
            mask = ops.cast(attention_mask, "bool")[None, :, None]
            mask = ops.broadcast_to(mask, (shape[0],) + tuple(mask.shape[1:]))
            mask = ops.reshape(mask, (-1, 1, tokens, tokens))
        attended = dot_product_attention(
            query,
            key,
            value,
            mask=mask,
            bias=ops.cast(bias, query.dtype)[None],
            dropout_rate=self.dropout,
            training=bool(training) and self.dropout > 0,
            return_weights=return_attention_scores,
            seed=self._seed_generator,
        )
        attended, weights = attended if return_attention_scores else (attended, None)
        # (B*nW, M^2, h, d) -> (B*nW, M^2, C)
        attended = self.output_projection(ops.reshape(attended, (-1, tokens, channels)))
        outputs = window_reverse(attended, size, shape[1], shape[2])
        if not return_attention_scores:
            return outputs
        return outputs, ops.reshape(weights, (shape[0], -1, self.num_heads, tokens, tokens))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def compute_output_spec(
        self, inputs, attention_mask=None, return_attention_scores=False, training=None
    ):
        height, width = inputs.shape[1:3]
        windows = None if None in (height, width) else window_count(height, width, self.window_size)
        return attention_output_spec(
            self, inputs, return_attention_scores, windows, self.window_size
        )

    def get_config(self):
        return {**super().get_config(), **kept_arguments(self, _CHECKED_ARGUMENTS)}
