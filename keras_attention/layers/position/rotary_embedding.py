"""Rotary position embedding (RoPE) as a layer."""

import keras

from keras_attention.ops.rotary import apply_rotary
from keras_attention.validation import check_finite_number


def check_rotary(rotary_max_wavelength, key_dim):
    """Raise a ValueError unless the rotary settings fit `key_dim`."""
    if rotary_max_wavelength is None:
        return
    check_finite_number("rotary_max_wavelength", rotary_max_wavelength, positive=True)
    if key_dim % 2:
        raise ValueError(
            "Rotary embeddings rotate pairs of features, so `key_dim` must be even. "
            f"Received: key_dim={key_dim}"
        )


@keras.saving.register_keras_serializable(package="keras_attention")
class RotaryEmbedding(keras.layers.Layer):
    """Rotates query or key features by position-dependent angles (RoPE).

    The features are split in two halves `(x1, x2)` and each pair
    `(x1_i, x2_i)` at position `p` is rotated by the angle `p * theta_i`,
    `theta_i = max_wavelength^(-2i/D)`
    ([Su et al., 2021](https://arxiv.org/abs/2104.09864)). The dot product
    of a query rotated at position `p` and a key rotated at position `s`
    then depends on `p - s` only. Apply it to queries and keys (not values)
    before the attention scores. This layer wraps
    `keras_attention.ops.apply_rotary`.

    Args:
        max_wavelength: base of the geometric progression of wavelengths.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        inputs: `(B, T, D)` or `(B, T, H, D)` (heads), `D` even.
        start_index: position of the first element (int or scalar tensor),
            for decoding one step at a time with a cache.

    Returns:
        a tensor shaped like `inputs`, in the compute dtype. A Keras mask on
        `inputs` is passed through.

    Example:

    >>> import numpy as np
    >>> from keras_attention.layers.position.rotary_embedding import RotaryEmbedding
    >>> layer = RotaryEmbedding()
    >>> x = np.array([[[1.0, 0.0]] * 3])  # (1, 3, 2): one pair, 3 positions
    >>> np.asarray(layer(x), "float64")[0].round(4).tolist()  # rotated by 0, 1, 2 radians
    [[1.0, 0.0], [0.5403, 0.8415], [-0.4161, 0.9093]]
    """

    def __init__(self, max_wavelength=10000, **kwargs):
        super().__init__(**kwargs)
        check_finite_number("max_wavelength", max_wavelength, positive=True)
        self.max_wavelength = max_wavelength
        self.supports_masking = True

    def build(self, input_shape):
        if len(input_shape) not in (3, 4):
            raise ValueError(
                "`inputs` must be (batch, length, dim) or (batch, length, heads, dim). "
                f"Received: inputs.shape={tuple(input_shape)}"
            )
        dim = input_shape[-1]
        if dim is None or dim % 2:
            raise ValueError(
                "The feature dimension of `inputs` must be known and even for "
                f"rotary embeddings. Received: dim={dim}"
            )

    def call(self, inputs, start_index=0):
        return apply_rotary(inputs, start_index=start_index, max_wavelength=self.max_wavelength)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "max_wavelength": self.max_wavelength}
