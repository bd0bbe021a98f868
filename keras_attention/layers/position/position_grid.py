"""Position encodings of a 2D grid of tokens (image patches), with optional prefix tokens."""

from keras import ops

from keras_attention.layers.position.position_merge import MergedPositionLayer
from keras_attention.layers.position.position_merge import merge_encoding


def check_grid_size(grid_size):
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


def check_num_prefix_tokens(num_prefix_tokens):
    if (
        isinstance(num_prefix_tokens, bool)
        or not isinstance(num_prefix_tokens, int)
        or num_prefix_tokens < 0
    ):
        raise ValueError(
            "`num_prefix_tokens` must be a non-negative integer. "
            f"Received: num_prefix_tokens={num_prefix_tokens!r}"
        )


def check_grid_input_shape(input_shape, num_prefix_tokens):
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


def input_grid(inputs, grid_size, num_prefix_tokens):
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


def grid_encoding_for_input(inputs, grid_encoding, prefix_encoding):
    """Lays a `(h, w, E)` encoding out like `inputs`: as is, or flattened after the prefix."""
    if len(inputs.shape) == 4:
        return grid_encoding  # (h, w, E)
    flat = ops.reshape(grid_encoding, (-1, ops.shape(grid_encoding)[-1]))  # (h * w, E)
    if prefix_encoding is None:
        return flat
    return ops.concatenate([prefix_encoding, flat], axis=0)  # (P + h * w, E)


def interpolation_matrix(in_size, out_size):
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
    >>> from keras_attention.layers.position.position_grid import resize_position_grid
    >>> table = np.arange(4, dtype="float32").reshape(2, 2, 1)
    >>> np.asarray(resize_position_grid(table, (4, 4)))[..., 0].tolist()[0]
    [0.0, 0.25, 0.75, 1.0]
    """
    table = ops.cast(ops.convert_to_tensor(table), "float32")
    rows, cols = table.shape[0], table.shape[1]
    row_weights = interpolation_matrix(rows, grid_size[0])  # (h, rows)
    col_weights = interpolation_matrix(cols, grid_size[1])  # (w, cols)
    table = ops.einsum("hr,rcd->hcd", row_weights, table)  # (h, cols, E)
    return ops.einsum("wc,hcd->hwd", col_weights, table)  # (h, w, E)


class GridPositionLayer(MergedPositionLayer):
    """Base of the 2D position layers: the call that encodes a grid and its prefix tokens.

    A subclass keeps `num_prefix_tokens` and gives the encoding of a
    `(rows, cols)` grid, `_grid_encoding(rows, cols)` of shape
    `(rows, cols, E)`, and that of the prefix tokens, `_prefix_encoding()` of
    shape `(num_prefix_tokens, E)` or None. `call` checks the input, finds its
    grid, lays both encodings out like the input in the compute dtype and
    merges them with it.
    """

    def call(self, inputs, grid_size=None):
        check_grid_input_shape(inputs.shape, self.num_prefix_tokens)
        rows, cols = input_grid(inputs, grid_size, self.num_prefix_tokens)
        grid = ops.cast(self._grid_encoding(rows, cols), self.compute_dtype)  # (h, w, E)
        prefix = self._prefix_encoding()
        if prefix is not None:
            prefix = ops.cast(prefix, self.compute_dtype)  # (P, E)
        encoding = grid_encoding_for_input(inputs, grid, prefix)
        return merge_encoding(inputs, encoding, self.merge)
