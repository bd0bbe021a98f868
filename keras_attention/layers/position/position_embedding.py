"""Learned position embedding: a table with one trainable row per position."""

import keras
from keras import ops

from keras_attention.layers.position.position_merge import MergedPositionLayer
from keras_attention.layers.position.position_merge import encoding_width
from keras_attention.layers.position.position_merge import merge_encoding
from keras_attention.validation import check_position_window
from keras_attention.validation import check_positive_int
from keras_attention.validation import check_rank

_OUTSIDE_TABLE = (
    "The positions start_index .. start_index + sequence_length - 1 must lie in the table of "
    "max_length={table_size} rows. Received: sequence_length={length}, start_index={start_index}"
)


@keras.saving.register_keras_serializable(package="keras_attention")
class PositionEmbedding(MergedPositionLayer):
    """Learned position embedding: row `p` of a trainable table encodes position `p`.

    The table has `max_length` rows (the "lookup table" option of positional
    encoding in [Vaswani et al., 2017](https://arxiv.org/abs/1706.03762), as
    used by BERT and GPT-2). The encoding is returned, added to the input or
    concatenated to it.

    Args:
        max_length: number of rows of the table: the longest sequence (plus
            `start_index`) the layer can encode.
        merge: `None` returns the embedding `(B, T, E)`; `"add"` returns
            `inputs + embedding`; `"concat"` returns
            `concatenate([inputs, embedding], axis=-1)`.
        embeddings_initializer: initializer of the table.
        concat_dim: width `E` of the table with `merge="concat"`; defaults
            to the input width. Only valid with `merge="concat"`.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        inputs: `(B, T, D)`; only its shape is used unless merging.
        start_index: position of the first element (int or scalar integer
            tensor), for decoding one step at a time with a cache.

    Returns:
        `(B, T, E)` (merge `None`, `E = D`), `(B, T, D)` (`"add"`) or
        `(B, T, D + E)` (`"concat"`), in the compute dtype. A Keras mask on
        `inputs` is passed through.

    A static `T` (plus a Python-int `start_index`) longer than the table
    raises a `ValueError`. A length or `start_index` known only at run time
    cannot be checked when the model is built: TensorFlow then raises an
    `InvalidArgumentError` when it runs, except inside XLA-compiled loops,
    where positions past the table read its last row.

    Example:

    >>> import numpy as np
    >>> from keras_attention.layers.position.position_embedding import PositionEmbedding
    >>> layer = PositionEmbedding(max_length=8, merge="add")
    >>> tuple(layer(np.zeros((2, 5, 4))).shape)
    (2, 5, 4)
    """

    def __init__(
        self,
        max_length,
        merge=None,
        embeddings_initializer="glorot_uniform",
        concat_dim=None,
        **kwargs,
    ):
        super().__init__(merge=merge, concat_dim=concat_dim, **kwargs)
        check_positive_int("max_length", max_length)
        self.max_length = max_length
        self.embeddings_initializer = keras.initializers.get(embeddings_initializer)

    def build(self, input_shape):
        check_rank("inputs", input_shape, 3, "(batch, length, features)")
        self._check_length(input_shape[1], 0)
        encoding_dim = encoding_width(input_shape[-1], self.merge, self.concat_dim)
        self.embeddings = self.add_weight(
            name="embeddings",
            shape=(self.max_length, encoding_dim),
            initializer=self.embeddings_initializer,
            trainable=True,
        )

    def _check_length(self, length, start_index):
        check_position_window(length, start_index, self.max_length, _OUTSIDE_TABLE)

    def call(self, inputs, start_index=0):
        self._check_length(inputs.shape[1], start_index)
        length = ops.shape(inputs)[1]
        encoding_dim = self.embeddings.shape[-1]
        table = ops.convert_to_tensor(self.embeddings)
        start = ops.cast(start_index, "int32")
        rows = ops.slice(table, (start, 0), (length, encoding_dim))  # (T, E)
        return merge_encoding(inputs, ops.cast(rows, self.compute_dtype), self.merge)

    def get_config(self):
        return {
            **super().get_config(),
            "max_length": self.max_length,
            "embeddings_initializer": keras.initializers.serialize(self.embeddings_initializer),
        }
