"""One Swin Transformer block: (shifted) window attention and an MLP on a feature map.

Liu et al., "Swin Transformer: Hierarchical Vision Transformer using Shifted
Windows" (https://arxiv.org/abs/2103.14030), section 3.2 and figure 3.
"""

import functools

import keras
import numpy as np
from keras import ops

from keras_attention.layers.transformer.stochastic_depth import StochasticDepth
from keras_attention.layers.vision.window_attention import WindowAttention
from keras_attention.layers.vision.window_attention import attention_output_spec
from keras_attention.layers.vision.window_attention import window_count
from keras_attention.validation import check_bool
from keras_attention.validation import check_finite_number
from keras_attention.validation import check_non_negative_int
from keras_attention.validation import check_positive_int
from keras_attention.validation import check_rate
from keras_attention.validation import check_seed_argument
from keras_attention.validation import keep_checked_arguments
from keras_attention.validation import kept_arguments

# The constructor arguments kept as they are, with their checks.
_CHECKED_ARGUMENTS = {
    "num_heads": check_positive_int,
    "window_size": check_positive_int,
    "shift_size": check_non_negative_int,
    "mlp_ratio": functools.partial(check_finite_number, positive=True),
    "use_bias": check_bool,
    "dropout": check_rate,
    "attention_dropout": check_rate,
    "stochastic_depth_rate": check_rate,
    "layer_norm_epsilon": functools.partial(check_finite_number, positive=True),
    "seed": check_seed_argument,
}


def window_layout(height, width, window_size, shift_size):
    """How a block lays its windows on a `height x width` map.

    As the paper's code does, a map no larger than the window along its
    shorter side is one window of that side, without shift. The map is
    padded at the bottom and right to whole windows.

    Args:
        height: map height.
        width: map width.
        window_size: the block's window side.
        shift_size: the block's cyclic shift.

    Returns:
        `(window, shift, (padded_height, padded_width))`.

    Example:

    >>> from keras_attention.layers.vision.swin_transformer_block import window_layout
    >>> window_layout(56, 56, 7, 3), window_layout(10, 6, 4, 2), window_layout(4, 4, 7, 3)
    ((7, 3, (56, 56)), (4, 2, (12, 8)), (4, 0, (4, 4)))
    """
    if min(height, width) <= window_size:
        window_size, shift_size = min(height, width), 0
    padded = (-(-height // window_size) * window_size, -(-width // window_size) * window_size)
    return window_size, shift_size, padded


def window_token_positions(height, width, window_size, shift_size):
    """Where each token of each window lies on the unpadded, unshifted map.

    Args:
        height, width, window_size, shift_size: as `window_layout`.

    Returns:
        int array `(windows, M^2)`: the row-major index `row * width + col`
        of the map position each window token holds, or -1 for padding.

    Example:

    >>> from keras_attention.layers.vision.swin_transformer_block import window_token_positions
    >>> window_token_positions(2, 2, 1, 0).tolist()
    [[0], [1], [2], [3]]
    """
    window, shift, (padded_height, padded_width) = window_layout(
        height, width, window_size, shift_size
    )
    rows, cols = np.meshgrid(np.arange(padded_height), np.arange(padded_width), indexing="ij")
    positions = np.where((rows < height) & (cols < width), rows * width + cols, -1)
    # The block rolls the map up and left by `shift` before cutting windows.
    return _partition(np.roll(positions, (-shift, -shift), axis=(0, 1)), window)


def _partition(grid, window):
    """`(H, W)` -> `(windows, M^2)`, windows and tokens row-major."""
    height, width = grid.shape
    grid = grid.reshape(height // window, window, width // window, window)
    return grid.transpose(0, 2, 1, 3).reshape(-1, window * window)


def shifted_window_mask(height, width, window_size, shift_size):
    """Which tokens of a (shifted, padded) window may attend to which.

    After the cyclic shift, a window at the bottom or right edge holds
    tokens from up to four parts of the map that are not neighbours in the
    image; a token attends only to keys of its own part, and never to
    padding.

    Args:
        height, width, window_size, shift_size: as `window_layout`.

    Returns:
        bool array `(windows, M^2, M^2)`, True = may attend, or None when
        every token may see its whole window (no shift, no padding).

    Example:

    >>> from keras_attention.layers.vision.swin_transformer_block import shifted_window_mask
    >>> mask = shifted_window_mask(4, 4, 2, 1)
    >>> mask.shape, int(mask[0].sum()), int(mask[3].sum())
    ((4, 4, 4), 16, 4)
    """
    window, shift, padded = window_layout(height, width, window_size, shift_size)
    if shift == 0 and padded == (height, width):
        return None
    positions = window_token_positions(height, width, window_size, shift_size)
    # Parts of the rolled map, numbered as in the paper's code: along each axis,
    # rows up to the last window, the last window's own rows, and the `shift`
    # rows that the roll brought over from the other edge.
    rows, cols = np.meshgrid(np.arange(padded[0]), np.arange(padded[1]), indexing="ij")
    part_rows = (rows >= padded[0] - window).astype(int) + (rows >= padded[0] - shift)
    part_cols = (cols >= padded[1] - window).astype(int) + (cols >= padded[1] - shift)
    regions = _partition(part_rows * 3 + part_cols if shift else np.zeros_like(rows), window)
    same_region = regions[:, :, None] == regions[:, None, :]
    return same_region & (positions >= 0)[:, None, :]


@keras.saving.register_keras_serializable(package="keras_attention")
class SwinTransformerBlock(keras.layers.Layer):
    """A Swin Transformer block on a `(B, H, W, C)` feature map.

    Figure 3 (b) of Liu et al. 2021 (https://arxiv.org/abs/2103.14030):

        x = x + DropPath(W-MSA(LN(x)))     (SW-MSA when shift_size > 0)
        x = x + DropPath(MLP(LN(x)))       (C -> mlp_ratio * C -> C, GELU)

    With `shift_size > 0` the normalised map is rolled up and left by
    `shift_size` (`keras.ops.roll`) before the windows are cut, and rolled
    back after; a mask keeps the tokens that the roll brought together from
    different parts of the image apart (`shifted_window_mask`). Stack blocks
    with `shift_size` 0 and `window_size // 2` in turn.

    As in the paper's code, a map whose shorter side is no larger than
    `window_size` is one window of that side, without shift. Sides that
    are not multiples of the window are padded with zeros at the bottom and
    right for the attention (padded keys are masked out) and cropped after.
    The map's height and width must be known when the block is built.

    Args:
        num_heads: attention heads; must divide the channels C.
        window_size: the window side M.
        shift_size: the cyclic shift, in `[0, window_size)`.
        mlp_ratio: the MLP's hidden width is `mlp_ratio * C`.
        use_bias: whether the query, key and value projection adds a bias.
        dropout: dropout after the attention and in the MLP.
        attention_dropout: dropout on the attention weights.
        stochastic_depth_rate: rate of dropping each residual branch while
            training.
        layer_norm_epsilon: epsilon of both LayerNorms.
        seed: optional int seed of the dropouts.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        inputs: `(B, H, W, C)`.
        return_attention_scores: also return the attention weights.
        training: whether dropout and stochastic depth are active.

    Returns:
        `(B, H, W, C)`, and with `return_attention_scores=True` the weights
        `(B, windows, num_heads, M^2, M^2)` of the (shifted) windows;
        `window_token_positions(H, W, window_size, shift_size)` says where
        each of their tokens lies on the map.

    Example:

    >>> import numpy as np
    >>> from keras_attention.layers.vision.swin_transformer_block import SwinTransformerBlock
    >>> block = SwinTransformerBlock(num_heads=2, window_size=4, shift_size=2)
    >>> out, weights = block(np.zeros((1, 8, 8, 16)), return_attention_scores=True)
    >>> tuple(out.shape), tuple(weights.shape)
    ((1, 8, 8, 16), (1, 4, 2, 16, 16))
    """

    def __init__(
        self,
        num_heads,
        window_size,
        shift_size=0,
        mlp_ratio=4.0,
        use_bias=True,
        dropout=0.0,
        attention_dropout=0.0,
        stochastic_depth_rate=0.0,
        layer_norm_epsilon=1e-5,
        seed=None,
        **kwargs,
    ):
        """Check the arguments and keep them; the sublayers are made in `build`."""
        super().__init__(**kwargs)
        keep_checked_arguments(self, locals(), _CHECKED_ARGUMENTS)
        if shift_size >= window_size:
            raise ValueError(
                "`shift_size` must be smaller than `window_size`. "
                f"Received: shift_size={shift_size}, window_size={window_size}"
            )

    def build(self, input_shape):
        """Check the feature-map shape and build the window attention and MLP."""
        input_shape = tuple(input_shape)
        if len(input_shape) != 4 or None in tuple(input_shape[1:]):
            raise ValueError(
                "`inputs` must be a feature map (batch, height, width, channels) whose height, "
                f"width and channels are known. Received: inputs.shape={tuple(input_shape)}"
            )
        height, width, channels = input_shape[1:]
        window, shift, padded = window_layout(height, width, self.window_size, self.shift_size)
        self.map_size = (height, width)
        self.effective_window_size = window
        self.effective_shift_size = shift
        self.padded_size = padded
        self._mask = shifted_window_mask(height, width, self.window_size, self.shift_size)
        policy = self.dtype_policy
        seed = self.seed

        def norm(name):
            layer = keras.layers.LayerNormalization(
                epsilon=self.layer_norm_epsilon, dtype=policy, name=name
            )
            layer.build(input_shape)
            return layer

        self.attention_norm = norm("attention_norm")
        self.attention = WindowAttention(
            self.num_heads,
            window,
            use_bias=self.use_bias,
            dropout=self.attention_dropout,
            seed=seed,
            dtype=policy,
            name="window_attention",
        )
        self.attention.build((input_shape[0], *padded, channels))
        self.feedforward_norm = norm("feedforward_norm")
        hidden = max(1, int(round(channels * self.mlp_ratio)))
        self.intermediate_dense = keras.layers.Dense(
            hidden, activation="gelu", dtype=policy, name="intermediate_dense"
        )
        self.intermediate_dense.build(input_shape)
        self.output_dense = keras.layers.Dense(channels, dtype=policy, name="output_dense")
        self.output_dense.build(input_shape[:3] + (hidden,))
        self.dropout_layer = keras.layers.Dropout(self.dropout, seed=seed, dtype=policy)
        self.stochastic_depth = StochasticDepth(self.stochastic_depth_rate, seed=seed, dtype=policy)

    def window_token_positions(self):
        """`window_token_positions` of the map this block was built for: `(windows, M^2)`."""
        return window_token_positions(*self.map_size, self.window_size, self.shift_size)

    def call(self, inputs, return_attention_scores=False, training=None):
        height, width = self.map_size
        shift = self.effective_shift_size
        x = self.attention_norm(inputs)
        if self.padded_size != (height, width):
            pad_rows, pad_cols = self.padded_size[0] - height, self.padded_size[1] - width
            x = ops.pad(x, ((0, 0), (0, pad_rows), (0, pad_cols), (0, 0)))
        if shift:
            x = ops.roll(x, shift=(-shift, -shift), axis=(1, 2))
        x = self.attention(
            x,
            attention_mask=self._mask,
            return_attention_scores=return_attention_scores,
            training=training,
        )
        x, scores = x if return_attention_scores else (x, None)
        if shift:
            x = ops.roll(x, shift=(shift, shift), axis=(1, 2))
        x = x[:, :height, :width]
        x = inputs + self.stochastic_depth(
            self.dropout_layer(x, training=training), training=training
        )
        y = self.intermediate_dense(self.feedforward_norm(x))
        y = self.output_dense(self.dropout_layer(y, training=training))
        x = x + self.stochastic_depth(self.dropout_layer(y, training=training), training=training)
        return (x, scores) if return_attention_scores else x

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def compute_output_spec(self, inputs, return_attention_scores=False, training=None):
        window = self.effective_window_size
        windows = window_count(*self.padded_size, window)
        return attention_output_spec(self, inputs, return_attention_scores, windows, window)

    def get_config(self):
        return {**super().get_config(), **kept_arguments(self, _CHECKED_ARGUMENTS)}
