"""Learned 2D position embedding of image patches, resizable to other grids."""

import keras
from keras import ops

from keras_attention.layers.position_embedding import _encoding_dim
from keras_attention.layers.position_embedding import _merge_encoding
from keras_attention.layers.position_embedding import _merged_shape
from keras_attention.layers.position_embedding import _validate_merge


def _check_grid_size(grid_size):
    """Validates a (rows, cols) pair of positive ints; returns it as a tuple."""
    if not isinstance(grid_size, (tuple, list)) or len(grid_size) != 2:
        raise ValueError(
            "`grid_size` must be a pair (rows, cols) of positive integers. "
            f"Received: grid_size={grid_size!r}"
        )
    for size in grid_size:
        if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
            raise ValueError(
                "`grid_size` must be a pair (rows, cols) of positive integers. "
                f"Received: grid_size={grid_size!r}"
            )
    return tuple(grid_size)


def _check_num_prefix_tokens(num_prefix_tokens):
    if (
        isinstance(num_prefix_tokens, bool)
        or not isinstance(num_prefix_tokens, int)
        or num_prefix_tokens < 0
    ):
        raise ValueError(
            "`num_prefix_tokens` must be a non-negative integer. "
            f"Received: num_prefix_tokens={num_prefix_tokens!r}"
        )


def _check_grid_input_shape(input_shape, num_prefix_tokens):
    """Input shapes the 2D position layers accept (checked in `build`)."""
    if len(input_shape) not in (3, 4):
        raise ValueError(
            "`inputs` must be a grid (batch, rows, cols, features) or a sequence "
            f"(batch, tokens, features). Received: inputs.shape={tuple(input_shape)}"
        )
    if len(input_shape) == 4 and num_prefix_tokens:
        raise ValueError(
            "A (batch, rows, cols, features) grid has no prefix tokens: pass the "
            "flattened (batch, tokens, features) sequence with num_prefix_tokens > 0. "
            f"Received: inputs.shape={tuple(input_shape)}, "
            f"num_prefix_tokens={num_prefix_tokens}"
        )


def _input_grid(inputs, grid_size, num_prefix_tokens):
    """(rows, cols) of `inputs`: its own axes for a 4D grid, `grid_size` for a sequence.

    Sizes are Python ints where known and scalar tensors otherwise.
    """
    if len(inputs.shape) == 4:
        if grid_size is not None:
            raise ValueError(
                "`grid_size` is only for flattened (batch, tokens, features) inputs; a "
                "(batch, rows, cols, features) input carries its grid. "
                f"Received: grid_size={grid_size!r}, inputs.shape={tuple(inputs.shape)}"
            )
        shape = ops.shape(inputs)
        return shape[1], shape[2]
    if not isinstance(grid_size, (tuple, list)) or len(grid_size) != 2:
        raise ValueError(
            "`grid_size` (rows, cols) is required for (batch, tokens, features) inputs. "
            f"Received: grid_size={grid_size!r}"
        )
    rows, cols = grid_size
    for size in (rows, cols):
        valid_int = isinstance(size, int) and not isinstance(size, bool) and size > 0
        if not (valid_int or hasattr(size, "dtype")):
            raise ValueError(
                "`grid_size` must hold positive integers or scalar integer tensors. "
                f"Received: grid_size={grid_size!r}"
            )
    static = isinstance(rows, int) and isinstance(cols, int)
    tokens = inputs.shape[1]
    if tokens is not None and static and tokens != num_prefix_tokens + rows * cols:
        raise ValueError(
            "The number of tokens must be num_prefix_tokens + rows * cols "
            f"= {num_prefix_tokens} + {rows} * {cols}. "
            f"Received: tokens={tokens}, grid_size={tuple(grid_size)}"
        )
    return rows, cols


def _grid_encoding_for_input(inputs, grid_encoding, prefix_encoding):
    """Lays a `(h, w, E)` encoding out like `inputs`: as is, or flattened after the prefix."""
    if len(inputs.shape) == 4:
        return grid_encoding  # (h, w, E)
    flat = ops.reshape(grid_encoding, (-1, ops.shape(grid_encoding)[-1]))  # (h * w, E)
    if prefix_encoding is None:
        return flat
    return ops.concatenate([prefix_encoding, flat], axis=0)  # (P + h * w, E)


def _interpolation_matrix(in_size, out_size):
    """Bilinear weights `(out_size, in_size)` mapping `in_size` samples to `out_size`.

    Half-pixel centres, edges clamped: the convention of
    `keras.ops.image.resize(..., interpolation="bilinear")` without
    antialiasing. `in_size` is a Python int; `out_size` may be a tensor.
    """
    scale = float(in_size) / ops.cast(out_size, "float32")
    centres = (ops.arange(out_size, dtype="float32") + 0.5) * scale - 0.5  # (out,)
    centres = ops.clip(centres, 0.0, float(in_size - 1))
    lower = ops.floor(centres)
    fraction = (centres - lower)[:, None]  # (out, 1)
    lower = ops.cast(lower, "int32")
    upper = ops.minimum(lower + 1, in_size - 1)
    return (
        ops.one_hot(lower, in_size, dtype="float32") * (1.0 - fraction)
        + ops.one_hot(upper, in_size, dtype="float32") * fraction
    )  # (out, in)


def resize_position_grid(table, grid_size):
    """Bilinearly resizes a `(rows, cols, E)` position table to `grid_size`.

    Works with sizes known only at run time (scalar tensors), under XLA; the
    same numbers as `keras.ops.image.resize(table, grid_size)` (bilinear,
    no antialiasing). Resizing to the table's own size is the identity.

    Args:
        table: `(rows, cols, E)` tensor with static `rows` and `cols`.
        grid_size: `(new_rows, new_cols)`, ints or scalar integer tensors.

    Returns:
        `(new_rows, new_cols, E)` float32 tensor.

    Example:

    >>> import numpy as np
    >>> from keras_attention.layers.position_embedding_2d import resize_position_grid
    >>> table = np.arange(4, dtype="float32").reshape(2, 2, 1)
    >>> np.asarray(resize_position_grid(table, (4, 4)))[..., 0].tolist()[0]
    [0.0, 0.25, 0.75, 1.0]
    """
    table = ops.cast(ops.convert_to_tensor(table), "float32")
    rows, cols = table.shape[0], table.shape[1]
    row_weights = _interpolation_matrix(rows, grid_size[0])  # (h, rows)
    col_weights = _interpolation_matrix(cols, grid_size[1])  # (w, cols)
    table = ops.einsum("hr,rcd->hcd", row_weights, table)  # (h, cols, E)
    return ops.einsum("wc,hcd->hwd", col_weights, table)  # (h, w, E)


@keras.saving.register_keras_serializable(package="keras_attention")
class PositionEmbedding2D(keras.layers.Layer):
    """Learned position embedding of a grid of image patches, resized on demand.

    A trainable `(rows, cols, E)` table, one vector per patch position, as
    in the Vision Transformer
    ([Dosovitskiy et al., 2021](https://arxiv.org/abs/2010.11929)). An input
    grid of another size (a ViT fine-tuned or served at another image size)
    gets the table bilinearly resized to its grid, which is what the ViT
    paper does to reuse pre-trained position embeddings. Optional prefix
    tokens (class or register tokens) have their own learned vectors that
    are never resized.

    Two input layouts:

    - a grid `(B, h, w, D)`: the grid size is read from the input (even
      when only known at run time, e.g. a model served at any image size).
      No prefix tokens.
    - a row-major flattened sequence `(B, P + h * w, D)` whose first
      `P = num_prefix_tokens` tokens are prefix tokens: the grid is the
      `grid_size` call argument (the table's grid by default).

    Args:
        grid_size: `(rows, cols)` of the table: the patch grid seen in
            training.
        merge: `None` returns the embedding; `"add"` returns
            `inputs + embedding`; `"concat"` concatenates it to the
            features.
        num_prefix_tokens: number of tokens before the patches in a
            flattened input (1 for a class token), each with its own
            learned vector.
        embeddings_initializer: initializer of the tables.
        concat_dim: width `E` of the tables with `merge="concat"`;
            defaults to the input width. Only valid with `merge="concat"`.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        inputs: `(B, h, w, D)` or `(B, P + h * w, D)`.
        grid_size: `(h, w)` of a flattened input, ints or scalar integer
            tensors; defaults to the layer's `grid_size`. Not allowed with
            a `(B, h, w, D)` input.

    Returns:
        the embedding laid out like `inputs` with width `E` (merge `None`),
        `inputs + embedding` (`"add"`) or the concatenation (`"concat"`),
        in the compute dtype. A Keras mask on `inputs` is passed through.

    Example:

    >>> import numpy as np
    >>> from keras_attention.layers.position_embedding_2d import PositionEmbedding2D
    >>> layer = PositionEmbedding2D(grid_size=(2, 2), merge="add", num_prefix_tokens=1)
    >>> tuple(layer(np.zeros((1, 1 + 2 * 2, 8))).shape)
    (1, 5, 8)
    >>> tuple(layer(np.zeros((1, 1 + 3 * 4, 8)), grid_size=(3, 4)).shape)
    (1, 13, 8)
    """

    def __init__(
        self,
        grid_size,
        merge=None,
        num_prefix_tokens=0,
        embeddings_initializer="random_normal",
        concat_dim=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        grid_size = _check_grid_size(grid_size)
        _validate_merge(merge, concat_dim)
        _check_num_prefix_tokens(num_prefix_tokens)
        self.grid_size = grid_size
        self.merge = merge
        self.num_prefix_tokens = num_prefix_tokens
        self.embeddings_initializer = keras.initializers.get(embeddings_initializer)
        self.concat_dim = concat_dim
        self.supports_masking = True

    def build(self, input_shape):
        _check_grid_input_shape(input_shape, self.num_prefix_tokens)
        encoding_dim = _encoding_dim(input_shape[-1], self.merge, self.concat_dim)
        self.grid_embeddings = self.add_weight(
            name="grid_embeddings",
            shape=self.grid_size + (encoding_dim,),
            initializer=self.embeddings_initializer,
            trainable=True,
        )
        self.prefix_embeddings = None
        if self.num_prefix_tokens:
            self.prefix_embeddings = self.add_weight(
                name="prefix_embeddings",
                shape=(self.num_prefix_tokens, encoding_dim),
                initializer=self.embeddings_initializer,
                trainable=True,
            )

    def call(self, inputs, grid_size=None):
        _check_grid_input_shape(inputs.shape, self.num_prefix_tokens)
        if grid_size is None and len(inputs.shape) == 3:
            grid_size = self.grid_size
        rows, cols = _input_grid(inputs, grid_size, self.num_prefix_tokens)
        table = ops.convert_to_tensor(self.grid_embeddings)
        static = isinstance(rows, int) and isinstance(cols, int)
        if not (static and (rows, cols) == self.grid_size):
            table = resize_position_grid(table, (rows, cols))  # (h, w, E)
        prefix = None
        if self.prefix_embeddings is not None:
            prefix = ops.cast(self.prefix_embeddings, self.compute_dtype)
        encoding = _grid_encoding_for_input(inputs, ops.cast(table, self.compute_dtype), prefix)
        return _merge_encoding(inputs, encoding, self.merge)

    def compute_output_shape(self, input_shape):
        encoding_dim = _encoding_dim(input_shape[-1], self.merge, self.concat_dim)
        return _merged_shape(input_shape, self.merge, encoding_dim)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "grid_size": self.grid_size,
                "merge": self.merge,
                "num_prefix_tokens": self.num_prefix_tokens,
                "embeddings_initializer": keras.initializers.serialize(
                    self.embeddings_initializer
                ),
                "concat_dim": self.concat_dim,
            }
        )
        return config
