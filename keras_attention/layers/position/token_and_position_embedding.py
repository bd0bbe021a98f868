"""Token embedding plus position encoding: the input stage of a Transformer."""

import functools
import math

import keras
from keras import ops

from keras_attention.layers.position.position_embedding import PositionEmbedding
from keras_attention.layers.position.sinusoidal_position_encoding import SinusoidalPositionEncoding
from keras_attention.validation import check_bool
from keras_attention.validation import check_choice
from keras_attention.validation import check_finite_number
from keras_attention.validation import check_position_window
from keras_attention.validation import check_positive_int
from keras_attention.validation import check_rank
from keras_attention.validation import keep_checked_arguments
from keras_attention.validation import kept_arguments

# "sinusoidal" interleaves sines and cosines (the paper's formula);
# "sinusoidal_split" puts all sines first (tensor2tensor, fairseq, Marian).
POSITION_MODES = ("learned", "sinusoidal", "sinusoidal_split")

# The constructor arguments kept as they are, with their checks.
_CHECKED_ARGUMENTS = {
    "vocabulary_size": check_positive_int,
    "sequence_length": check_positive_int,
    "embedding_dim": check_positive_int,
    "mask_zero": check_bool,
    "scale_embeddings": check_bool,
    "max_wavelength": functools.partial(check_finite_number, positive=True),
    "output_bias": check_bool,
    "position": functools.partial(check_choice, choices=POSITION_MODES),
}

_BEYOND_LENGTH = (
    "The positions start_index .. start_index + length - 1 must be below "
    "sequence_length={table_size}. Received: length={length}, start_index={start_index}"
)


@keras.saving.register_keras_serializable(package="keras_attention")
class TokenAndPositionEmbedding(keras.layers.Layer):
    """Embeds token ids and adds a learned or sinusoidal position encoding.

    `output = token_embedding(ids) [* sqrt(embedding_dim)] + position(p)`, the
    input stage of the Transformer of
    [Vaswani et al., 2017](https://arxiv.org/abs/1706.03762) (which scales
    the token embeddings by `sqrt(embedding_dim)` and uses sinusoids) and of
    BERT/GPT (learned positions, no scaling).

    Called with `reverse=True` on features `(B, T, embedding_dim)`, it gives
    logits over the tokens with the same table, `features @ table^T [+ bias]`
    in float32: the output projection of a model that ties it to its input
    embedding (Press and Wolf, https://arxiv.org/abs/1608.05859).

    Args:
        vocabulary_size: number of token ids.
        sequence_length: the longest sequence (plus `start_index`) accepted;
            the number of rows of the learned position table.
        embedding_dim: width of the embeddings.
        mask_zero: whether id 0 is padding: the output then carries the
            Keras mask `ids != 0` for the layers that follow.
        position: `"learned"` (a `PositionEmbedding` table),
            `"sinusoidal"` (a fixed `SinusoidalPositionEncoding`, sines and
            cosines interleaved) or `"sinusoidal_split"` (all sines, then all
            cosines); sinusoids need an even `embedding_dim`.
        scale_embeddings: multiply the token embeddings by
            `sqrt(embedding_dim)` before adding the positions.
        embeddings_initializer: initializer of the token table and of the
            learned position table (cloned for each).
        max_wavelength: longest wavelength of the sinusoids.
        output_bias: give the `reverse=True` logits a trainable bias per
            token (zeros at first; Marian's `final_logits_bias`).
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        inputs: integer token ids `(B, T)`; with `reverse=True`, features
            `(B, T, embedding_dim)`.
        start_index: position of the first token (int or scalar integer
            tensor), for decoding one token at a time with a cache.
        reverse: project features to float32 token logits
            `(B, T, vocabulary_size)` instead of embedding ids.

    Returns:
        `(B, T, embedding_dim)` in the compute dtype, with the Keras mask
        `(B, T)` (`ids != 0`) when `mask_zero=True`. A static `T` (plus a
        Python-int `start_index`) longer than `sequence_length` raises a
        `ValueError`; a length known only at run time is not checked (see
        `PositionEmbedding`).

    Example:

    >>> import numpy as np
    >>> from keras_attention.layers.position.token_and_position_embedding import (
    ...     TokenAndPositionEmbedding)
    >>> layer = TokenAndPositionEmbedding(
    ...     vocabulary_size=10, sequence_length=6, embedding_dim=4, mask_zero=True)
    >>> ids = np.array([[3, 1, 0, 0]])
    >>> tuple(layer(ids).shape)
    (1, 4, 4)
    >>> np.asarray(layer.compute_mask(ids)).tolist()
    [[True, True, False, False]]
    """

    def __init__(
        self,
        vocabulary_size,
        sequence_length,
        embedding_dim,
        mask_zero=False,
        position="learned",
        scale_embeddings=False,
        embeddings_initializer="uniform",
        max_wavelength=10000,
        output_bias=False,
        **kwargs,
    ):
        """Check the arguments and keep them; the embeddings are made in `build`."""
        super().__init__(**kwargs)
        keep_checked_arguments(self, locals(), _CHECKED_ARGUMENTS)
        if position != "learned" and embedding_dim % 2:
            raise ValueError(
                "`embedding_dim` must be even for sinusoidal positions. "
                f"Received: embedding_dim={embedding_dim}"
            )
        self.embeddings_initializer = keras.initializers.get(embeddings_initializer)
        self.supports_masking = self.mask_zero

    def build(self, input_shape):
        """Makes the token table, the position encoding and, with `output_bias`, the bias.

        Built by the first call on ids `(B, T)`; a `reverse=True` call needs that first.
        """
        check_rank("inputs", input_shape, 2, "token ids (batch, length)")
        self._check_length(input_shape[1], 0)
        self.token_embedding = keras.layers.Embedding(
            self.vocabulary_size,
            self.embedding_dim,
            embeddings_initializer=self._clone_initializer(),
            dtype=self.dtype_policy,
            name="token_embedding",
        )
        self.token_embedding.build(input_shape)
        embedded_shape = tuple(input_shape) + (self.embedding_dim,)
        if self.position == "learned":
            self.position_embedding = PositionEmbedding(
                self.sequence_length,
                embeddings_initializer=self._clone_initializer(),
                dtype=self.dtype_policy,
                name="position_embedding",
            )
        else:
            self.position_embedding = SinusoidalPositionEncoding(
                self.max_wavelength,
                interleave=self.position == "sinusoidal",
                dtype=self.dtype_policy,
                name="position_embedding",
            )
        self.position_embedding.build(embedded_shape)
        if self.output_bias:
            self.logits_bias = self.add_weight(
                shape=(self.vocabulary_size,), initializer="zeros", name="logits_bias"
            )

    def _clone_initializer(self):
        return self.embeddings_initializer.__class__.from_config(
            self.embeddings_initializer.get_config()
        )

    def _check_length(self, length, start_index):
        check_position_window(length, start_index, self.sequence_length, _BEYOND_LENGTH)

    def call(self, inputs, start_index=0, reverse=False):
        if reverse:
            return self._token_logits(inputs)
        self._check_length(inputs.shape[1], start_index)
        tokens = self.token_embedding(inputs)  # (B, T, D)
        if self.scale_embeddings:
            tokens = tokens * ops.cast(math.sqrt(self.embedding_dim), tokens.dtype)
        positions = self.position_embedding(tokens, start_index=start_index)  # (B, T, D)
        return tokens + positions

    def _token_logits(self, features):
        """float32 logits `(B, T, V)` of features `(B, T, D)` against the token table."""
        table = ops.cast(self.token_embedding.embeddings, "float32")  # (V, D)
        logits = ops.matmul(ops.cast(features, "float32"), ops.transpose(table))  # (B, T, V)
        if self.output_bias:
            logits = logits + ops.cast(self.logits_bias, "float32")
        return logits

    def compute_mask(self, inputs, mask=None, reverse=False):
        if reverse or not self.mask_zero:
            return None
        return ops.not_equal(inputs, 0)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape) + (self.embedding_dim,)

    def compute_output_spec(self, inputs, start_index=0, reverse=False):
        if reverse:  # features (B, T, D) -> float32 logits (B, T, V)
            return keras.KerasTensor(
                tuple(inputs.shape[:-1]) + (self.vocabulary_size,), dtype="float32"
            )
        return keras.KerasTensor(self.compute_output_shape(inputs.shape), dtype=self.compute_dtype)

    def get_config(self):
        return {
            **super().get_config(),
            **kept_arguments(self, _CHECKED_ARGUMENTS),
            "embeddings_initializer": keras.initializers.serialize(self.embeddings_initializer),
        }
