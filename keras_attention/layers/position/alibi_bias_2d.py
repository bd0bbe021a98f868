"""2D ALiBi: a penalty on attention scores that grows with the distance between image patches."""

import keras
from keras import ops

from keras_attention.layers.position.position_grid import check_grid_size
from keras_attention.validation import check_finite_number
from keras_attention.validation import check_positive_int


def alibi_2d_slopes(num_heads):
    """The default per-head slopes of `AlibiBias2D`: `1, 1/4, 1/16, ...`, as Python floats.

    Head `h` (from 0) gets `4 ** -h`. A score falls by `slope` for each patch
    of distance: on equal scores the first head weighs a neighbour `e` times
    less than the patch itself and, at the centre of a 7x7 grid, gives 86%
    of its attention to the patches less than three away, like a small
    convolution; each further head
    reaches four times as far, and the last ones attend over the whole image
    almost uniformly.

    Args:
        num_heads: a positive int.

    Returns:
        a list of `num_heads` decreasing floats.

    Example:

    >>> from keras_attention.layers.position.alibi_bias_2d import alibi_2d_slopes
    >>> alibi_2d_slopes(3)
    [1.0, 0.25, 0.0625]
    """
    check_positive_int("num_heads", num_heads)
    return [4.0**-head for head in range(num_heads)]


@keras.saving.register_keras_serializable(package="keras_attention")
class AlibiBias2D(keras.layers.Layer):
    """ALiBi over a grid of image patches: `-slope_h * distance` added to the scores.

    ALiBi (Press et al., 2021, https://arxiv.org/abs/2108.12409) penalises
    a key by its distance from the query, with a fixed slope per head;
    2D ALiBi (Fuller et al., 2023, "CROMA", https://arxiv.org/abs/2311.00566)
    measures that distance on the image: between patch `(r, c)` and patch
    `(r', c')` it is `sqrt((r - r')**2 + (c - c')**2)`, in patches. Steep
    heads attend to nearby patches only, which gives a Vision Transformer
    the locality a convolution has from its first step of training, while
    gentle heads keep the whole image in view; nothing is learned.

    Tokens are the grid flattened row-major, as `PatchEmbedding` gives them:
    token `r * columns + c` is patch `(r, c)`.

    Args:
        grid_size: `(rows, columns)` of the patch grid.
        slopes: None for `alibi_2d_slopes(num_heads)`, or one non-negative
            number per head.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        attention_scores: `(B, H, N, N)` scores before the softmax, with
            `N = rows * columns` (keras-hub's `AlibiBias` convention: scores
            in, scores plus bias out).

    Returns:
        the scores plus the bias, shaped like `attention_scores`, in the
        compute dtype. `bias(num_heads)` gives the bias alone, `(1, H, N,
        N)`, to pass as `attention_bias=` to `MultiHeadAttention`,
        `GroupQueryAttention` or `TransformerEncoderBlock`.

    Example:

    >>> import numpy as np
    >>> from keras_attention.layers.position.alibi_bias_2d import AlibiBias2D
    >>> from keras_attention.layers.transformer.transformer_encoder_block import (
    ...     TransformerEncoderBlock)
    >>> alibi = AlibiBias2D(grid_size=(2, 3))
    >>> bias = alibi.bias(num_heads=2)  # (1, heads, 6 patches, 6 patches)
    >>> np.asarray(bias, "float64")[0, 0, 0].round(3).tolist()  # head 0, from patch (0, 0)
    [0.0, -1.0, -2.0, -1.0, -1.414, -2.236]
    >>> block = TransformerEncoderBlock(num_heads=2, intermediate_dim=16)
    >>> tokens = np.random.rand(1, 6, 8).astype("float32")
    >>> tuple(block(tokens, attention_bias=bias).shape)
    (1, 6, 8)
    """

    def __init__(self, grid_size, slopes=None, **kwargs):
        super().__init__(**kwargs)
        self.grid_size = check_grid_size(grid_size)
        if slopes is not None:
            if not isinstance(slopes, (tuple, list)) or not slopes:
                raise ValueError(
                    "`slopes` must be None or a non-empty list of numbers, one per head. "
                    f"Received: slopes={slopes!r}"
                )
            for slope in slopes:
                check_finite_number("slopes", slope)
                if slope < 0:
                    raise ValueError(
                        f"`slopes` must be non-negative numbers. Received: slopes={slopes!r}"
                    )
            slopes = [float(slope) for slope in slopes]
        self.slopes = slopes

    def head_slopes(self, num_heads):
        """The slopes of `num_heads` heads: `slopes`, or `alibi_2d_slopes(num_heads)`.

        Example:

        >>> from keras_attention.layers.position.alibi_bias_2d import AlibiBias2D
        >>> AlibiBias2D((4, 4), slopes=[0.5, 0.1]).head_slopes(2)
        [0.5, 0.1]
        """
        if num_heads is None:
            raise ValueError(
                "AlibiBias2D needs a known number of heads (axis 1 of the scores). "
                "Received: num_heads=None"
            )
        if self.slopes is None:
            return alibi_2d_slopes(num_heads)
        if len(self.slopes) != num_heads:
            raise ValueError(
                f"`slopes` has {len(self.slopes)} values for {num_heads} heads. "
                f"Received: slopes={self.slopes!r}, num_heads={num_heads}"
            )
        return list(self.slopes)

    def distances(self):
        """The `(N, N)` float32 distances in patches between every two patches.

        Example:

        >>> import numpy as np
        >>> from keras_attention.layers.position.alibi_bias_2d import AlibiBias2D
        >>> np.asarray(AlibiBias2D((1, 3)).distances()).tolist()
        [[0.0, 1.0, 2.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0]]
        """
        rows, columns = self.grid_size
        tokens = ops.arange(rows * columns, dtype="int32")
        row = ops.cast(tokens // columns, "float32")  # (N,)
        column = ops.cast(tokens % columns, "float32")  # (N,)
        squared = (row[:, None] - row[None, :]) ** 2 + (column[:, None] - column[None, :]) ** 2
        return ops.sqrt(squared)  # (N, N)

    def bias(self, num_heads):
        """The `(1, num_heads, N, N)` bias `-slope_h * distance`, in the compute dtype.

        Args:
            num_heads: a positive int, the heads of the attention layer.

        Returns:
            a float tensor to pass as `attention_bias=` (or as `bias=` to
            `keras_attention.ops.dot_product_attention`).
        """
        slopes = ops.convert_to_tensor(self.head_slopes(num_heads), "float32")
        # 0 - x rather than -x: the diagonal is 0.0, not -0.0.
        bias = 0.0 - slopes[:, None, None] * self.distances()[None]  # (H, N, N)
        return ops.cast(bias, self.compute_dtype)[None]  # (1, H, N, N)

    def build(self, attention_scores_shape):
        self._check_scores_shape(attention_scores_shape)

    def call(self, attention_scores):
        self._check_scores_shape(attention_scores.shape)
        scores = ops.cast(attention_scores, self.compute_dtype)
        return scores + self.bias(attention_scores.shape[1])

    def _check_scores_shape(self, shape):
        tokens = self.grid_size[0] * self.grid_size[1]
        if len(shape) != 4 or any(size not in (None, tokens) for size in shape[-2:]):
            raise ValueError(
                "`attention_scores` must be (batch, num_heads, N, N) with N = rows * columns "
                f"of grid_size={self.grid_size}, N={tokens}. "
                f"Received: attention_scores.shape={tuple(shape)}"
            )

    def compute_output_shape(self, attention_scores_shape):
        return tuple(attention_scores_shape)

    def get_config(self):
        return {**super().get_config(), "grid_size": list(self.grid_size), "slopes": self.slopes}
