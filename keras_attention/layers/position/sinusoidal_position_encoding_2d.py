"""Fixed 2D sinusoidal position encoding of image patches (rows and columns)."""

import keras
from keras import ops

from keras_attention.layers.position.position_grid import GridPositionLayer
from keras_attention.layers.position.position_grid import check_grid_input_shape
from keras_attention.layers.position.position_grid import check_num_prefix_tokens
from keras_attention.layers.position.position_merge import check_encoding_width
from keras_attention.layers.position.position_merge import encoding_width
from keras_attention.layers.position.sinusoidal_position_encoding import sinusoidal_table
from keras_attention.validation import check_finite_number


def sinusoidal_table_2d(grid_size, dim, max_wavelength=10000):
    """2D sinusoidal encodings of a `(rows, cols)` grid.

    The first `dim / 2` channels are the 1D sinusoidal encoding
    (`sinusoidal_table`, sines and cosines interleaved) of the row index, the
    last `dim / 2` that of the column index: the construction of MAE and
    big_vision's `posemb_sincos_2d`, up to the order of the channels.

    Args:
        grid_size: `(rows, cols)`, ints or scalar integer tensors.
        dim: width of the encoding, a positive multiple of 4.
        max_wavelength: the longest wavelength of the sinusoids.

    Returns:
        float32 tensor `(rows, cols, dim)`.

    Example:

    >>> import numpy as np
    >>> from keras_attention.layers.position.sinusoidal_position_encoding_2d import (
    ...     sinusoidal_table_2d)
    >>> table = np.asarray(sinusoidal_table_2d((2, 3), dim=4), "float64")
    >>> table.shape, table[1, 2].round(4).tolist()
    ((2, 3, 4), [0.8415, 0.5403, 0.9093, -0.4161])
    """
    if isinstance(dim, bool) or not isinstance(dim, int) or dim <= 0 or dim % 4:
        raise ValueError(
            "The 2D sinusoidal encoding width must be a positive multiple of 4 "
            f"(two sin/cos halves). Received: dim={dim!r}"
        )
    rows, cols = grid_size
    half = dim // 2
    row_table = sinusoidal_table(ops.arange(rows), half, max_wavelength)  # (h, dim/2)
    col_table = sinusoidal_table(ops.arange(cols), half, max_wavelength)  # (w, dim/2)
    row_table = ops.broadcast_to(row_table[:, None, :], (rows, cols, half))  # (h, w, dim/2)
    col_table = ops.broadcast_to(col_table[None, :, :], (rows, cols, half))  # (h, w, dim/2)
    return ops.concatenate([row_table, col_table], axis=-1)  # (h, w, dim)


@keras.saving.register_keras_serializable(package="keras_attention")
class SinusoidalPositionEncoding2D(GridPositionLayer):
    """Fixed 2D sinusoidal position encoding of a grid of image patches.

    Half the channels encode the row of a patch and half its column, each
    with the 1D sinusoids of
    [Vaswani et al., 2017](https://arxiv.org/abs/1706.03762), as in MAE
    ([He et al., 2021](https://arxiv.org/abs/2111.06377)) and the simple
    ViT baselines of big_vision. Having no weights, it fits any grid size.
    Prefix tokens (class or register tokens) get a zero encoding, as in MAE.

    Two input layouts:

    - a grid `(B, h, w, D)`: the grid size is read from the input (even
      when only known at run time). No prefix tokens.
    - a row-major flattened sequence `(B, P + h * w, D)` whose first
      `P = num_prefix_tokens` tokens are prefix tokens: the grid is the
      `grid_size` call argument (required).

    Args:
        max_wavelength: the longest wavelength of the sinusoids.
        merge: `None` returns the encoding; `"add"` returns
            `inputs + encoding`; `"concat"` concatenates it to the features.
        num_prefix_tokens: number of tokens before the patches in a
            flattened input (1 for a class token); their encoding is 0.
        concat_dim: width `E` of the encoding with `merge="concat"`;
            defaults to the input width. Only valid with `merge="concat"`.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        inputs: `(B, h, w, D)` or `(B, P + h * w, D)`.
        grid_size: `(h, w)` of a flattened input, ints or scalar integer
            tensors. Not allowed with a `(B, h, w, D)` input.

    Returns:
        the encoding laid out like `inputs` with width `E` (merge `None`),
        `inputs + encoding` (`"add"`) or the concatenation (`"concat"`), in
        the compute dtype. `E` must be a multiple of 4. A Keras mask on
        `inputs` is passed through.

    Example:

    >>> import numpy as np
    >>> from keras_attention.layers import SinusoidalPositionEncoding2D
    >>> layer = SinusoidalPositionEncoding2D(merge="add")
    >>> tuple(layer(np.zeros((1, 2, 3, 8))).shape)
    (1, 2, 3, 8)
    >>> with_class = SinusoidalPositionEncoding2D(num_prefix_tokens=1)
    >>> tuple(with_class(np.zeros((1, 1 + 2 * 3, 8)), grid_size=(2, 3)).shape)
    (1, 7, 8)
    """

    def __init__(
        self,
        max_wavelength=10000,
        merge=None,
        num_prefix_tokens=0,
        concat_dim=None,
        **kwargs,
    ):
        super().__init__(merge=merge, concat_dim=concat_dim, **kwargs)
        check_finite_number("max_wavelength", max_wavelength, positive=True)
        check_num_prefix_tokens(num_prefix_tokens)
        if concat_dim is not None and concat_dim % 4:
            raise ValueError(
                f"`concat_dim` must be a multiple of 4. Received: concat_dim={concat_dim}"
            )
        self.max_wavelength = max_wavelength
        self.num_prefix_tokens = num_prefix_tokens

    def build(self, input_shape):
        check_grid_input_shape(input_shape, self.num_prefix_tokens)
        encoding_dim = encoding_width(input_shape[-1], self.merge, self.concat_dim)
        check_encoding_width(encoding_dim, 4, "2D sinusoidal encoding")
        self._encoding_width = encoding_dim

    def _grid_encoding(self, rows, cols):
        return sinusoidal_table_2d((rows, cols), self._encoding_width, self.max_wavelength)

    def _prefix_encoding(self):
        if not self.num_prefix_tokens:
            return None
        return ops.zeros((self.num_prefix_tokens, self._encoding_width), self.compute_dtype)

    def get_config(self):
        return {
            **super().get_config(),
            "max_wavelength": self.max_wavelength,
            "num_prefix_tokens": self.num_prefix_tokens,
        }
