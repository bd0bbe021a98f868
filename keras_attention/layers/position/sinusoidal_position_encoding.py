"""Fixed sinusoidal position encoding of "Attention is all you need"."""

import keras
from keras import ops

from keras_attention.layers.position.position_merge import MergedPositionLayer
from keras_attention.layers.position.position_merge import check_encoding_width
from keras_attention.layers.position.position_merge import encoding_width
from keras_attention.layers.position.position_merge import merge_encoding
from keras_attention.validation import check_bool
from keras_attention.validation import check_finite_number
from keras_attention.validation import check_rank


def sinusoidal_table(positions, dim, max_wavelength=10000, interleave=True):
    """Sinusoidal encodings of `positions`, sines and cosines interleaved or split.

    PE(p, 2k) = sin(p * omega_k) and PE(p, 2k + 1) = cos(p * omega_k) with
    omega_k = 1 / max_wavelength^(2k / dim), k = 0 .. dim/2 - 1
    ([Vaswani et al., 2017](https://arxiv.org/abs/1706.03762)). With
    `interleave=False` the same values are laid out as tensor2tensor, fairseq
    and Marian lay them out: PE(p, k) = sin(p * omega_k) and
    PE(p, dim/2 + k) = cos(p * omega_k).

    Args:
        positions: `(T,)` positions (Python list, array or tensor; integer
            or float).
        dim: width of the encoding, a positive even integer.
        max_wavelength: the longest wavelength, `2 pi max_wavelength`.
        interleave: sines and cosines alternate (True) or come in two
            halves (False).

    Returns:
        float32 tensor `(T, dim)`.

    Example:

    >>> import numpy as np
    >>> from keras_attention.layers.position.sinusoidal_position_encoding import sinusoidal_table
    >>> table = sinusoidal_table(np.arange(3), dim=4)
    >>> np.asarray(table, "float64")[1].round(3).tolist()
    [0.841, 0.54, 0.01, 1.0]
    >>> np.asarray(sinusoidal_table([1], dim=4, interleave=False), "float64").round(3).tolist()
    [[0.841, 0.01, 0.54, 1.0]]
    """
    check_bool("interleave", interleave)
    if isinstance(dim, bool) or not isinstance(dim, int) or dim <= 0 or dim % 2:
        raise ValueError(
            f"The sinusoidal encoding width must be a positive even integer. Received: dim={dim!r}"
        )
    check_finite_number("max_wavelength", max_wavelength, positive=True)
    exponents = ops.arange(0, dim, 2, dtype="float32") / float(dim)  # (dim/2,) 2k/d
    frequencies = ops.power(float(max_wavelength), -exponents)  # (dim/2,) omega_k
    positions = ops.cast(ops.convert_to_tensor(positions), "float32")
    angles = positions[:, None] * frequencies[None, :]  # (T, dim/2)
    if not interleave:
        return ops.concatenate([ops.sin(angles), ops.cos(angles)], axis=-1)  # (T, dim)
    table = ops.stack([ops.sin(angles), ops.cos(angles)], axis=-1)  # (T, dim/2, 2)
    return ops.reshape(table, (-1, dim))  # (T, dim): sin, cos, sin, cos, ...


@keras.saving.register_keras_serializable(package="keras_attention")
class SinusoidalPositionEncoding(MergedPositionLayer):
    """Fixed sinusoidal position encoding, returned, added or concatenated.

    Position `p` is encoded by PE(p, 2k) = sin(p * omega_k),
    PE(p, 2k + 1) = cos(p * omega_k), omega_k = 1 / max_wavelength^(2k/d)
    ([Vaswani et al., 2017](https://arxiv.org/abs/1706.03762)). The encoding
    has no weights, is bounded and is defined for any position, so it
    extends to sequences longer than those seen in training.

    Args:
        max_wavelength: the longest wavelength is `2 pi max_wavelength`.
        interleave: sines and cosines alternate (True, the paper's
            formula) or come as all sines then all cosines (False, as
            tensor2tensor, fairseq and Marian lay them out).
        merge: `None` returns the encoding `(B, T, E)`; `"add"` returns
            `inputs + encoding`; `"concat"` returns
            `concatenate([inputs, encoding], axis=-1)`.
        concat_dim: width `E` of the encoding with `merge="concat"`;
            defaults to the input width. Only valid with `merge="concat"`.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        inputs: `(B, T, D)`; only its shape is used unless merging.
        start_index: position of the first element (int or scalar tensor),
            for decoding one step at a time with a cache.

    Returns:
        `(B, T, E)` (merge `None`, `E = D`), `(B, T, D)` (`"add"`) or
        `(B, T, D + E)` (`"concat"`), in the compute dtype. A Keras mask on
        `inputs` is passed through. The encoding width `E` must be even.

    Example:

    >>> import numpy as np
    >>> from keras_attention.layers.position.sinusoidal_position_encoding import (
    ...     SinusoidalPositionEncoding)
    >>> layer = SinusoidalPositionEncoding()
    >>> encoding = layer(np.zeros((1, 3, 4)))
    >>> np.asarray(encoding, "float64")[0, 1].round(3).tolist()
    [0.841, 0.54, 0.01, 1.0]
    >>> concat = SinusoidalPositionEncoding(merge="concat", concat_dim=2)
    >>> tuple(concat(np.zeros((1, 3, 4))).shape)
    (1, 3, 6)
    """

    def __init__(
        self, max_wavelength=10000, merge=None, concat_dim=None, interleave=True, **kwargs
    ):
        super().__init__(merge=merge, concat_dim=concat_dim, **kwargs)
        check_finite_number("max_wavelength", max_wavelength, positive=True)
        check_bool("interleave", interleave)
        self.interleave = interleave
        if concat_dim is not None and concat_dim % 2:
            raise ValueError(
                f"`concat_dim` must be even for sinusoids. Received: concat_dim={concat_dim}"
            )
        self.max_wavelength = max_wavelength

    def build(self, input_shape):
        check_rank("inputs", input_shape, 3, "(batch, length, features)")
        encoding_dim = encoding_width(input_shape[-1], self.merge, self.concat_dim)
        check_encoding_width(encoding_dim, 2, "sinusoidal encoding")
        self._encoding_width = encoding_dim

    def call(self, inputs, start_index=0):
        length = ops.shape(inputs)[1]
        positions = ops.arange(length, dtype="float32") + ops.cast(start_index, "float32")
        table = sinusoidal_table(
            positions, self._encoding_width, self.max_wavelength, self.interleave
        )  # (T, E)
        return merge_encoding(inputs, ops.cast(table, self.compute_dtype), self.merge)

    def get_config(self):
        return {
            **super().get_config(),
            "max_wavelength": self.max_wavelength,
            "interleave": self.interleave,
        }
