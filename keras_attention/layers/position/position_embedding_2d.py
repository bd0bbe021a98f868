"""Learned 2D position embedding of image patches, resizable to other grids."""

import keras
from keras import ops

from keras_attention.layers.position.position_grid import GridPositionLayer
from keras_attention.layers.position.position_grid import check_grid_input_shape
from keras_attention.layers.position.position_grid import check_grid_size
from keras_attention.layers.position.position_grid import check_num_prefix_tokens
from keras_attention.layers.position.position_grid import resize_position_grid
from keras_attention.layers.position.position_merge import encoding_width


@keras.saving.register_keras_serializable(package="keras_attention")
class PositionEmbedding2D(GridPositionLayer):
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
    >>> from keras_attention.layers.position.position_embedding_2d import PositionEmbedding2D
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
        super().__init__(merge=merge, concat_dim=concat_dim, **kwargs)
        grid_size = check_grid_size(grid_size)
        check_num_prefix_tokens(num_prefix_tokens)
        self.grid_size = grid_size
        self.num_prefix_tokens = num_prefix_tokens
        self.embeddings_initializer = keras.initializers.get(embeddings_initializer)

    def build(self, input_shape):
        check_grid_input_shape(input_shape, self.num_prefix_tokens)
        encoding_dim = encoding_width(input_shape[-1], self.merge, self.concat_dim)
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
        if grid_size is None and len(inputs.shape) == 3:
            grid_size = self.grid_size  # a flattened input is on the table's grid by default
        return super().call(inputs, grid_size)

    def _grid_encoding(self, rows, cols):
        table = ops.convert_to_tensor(self.grid_embeddings)
        static = isinstance(rows, int) and isinstance(cols, int)
        if static and (rows, cols) == self.grid_size:
            return table
        return resize_position_grid(table, (rows, cols))  # (h, w, E)

    def _prefix_encoding(self):
        return self.prefix_embeddings

    def get_config(self):
        return {
            **super().get_config(),
            "grid_size": self.grid_size,
            "num_prefix_tokens": self.num_prefix_tokens,
            "embeddings_initializer": keras.initializers.serialize(self.embeddings_initializer),
        }
