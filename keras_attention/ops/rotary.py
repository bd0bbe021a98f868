"""Rotary position embedding (RoPE) applied to query or key features."""

from keras import ops


def rotary_angles(positions, dim, max_wavelength=10000):
    """Angles p * theta_i with theta_i = max_wavelength^(-2i/dim), i < dim/2.

    Args:
        positions: (T,) positions (any numeric dtype).
        dim: even feature size.
        max_wavelength: the base of the geometric progression of wavelengths.

    Returns:
        float32 (T, dim // 2).
    """
    if isinstance(dim, bool) or not isinstance(dim, int) or dim <= 0 or dim % 2:
        raise ValueError(f"`dim` must be a positive even integer. Received: dim={dim!r}")
    if not max_wavelength > 0:
        raise ValueError(
            f"`max_wavelength` must be positive. Received: max_wavelength={max_wavelength!r}"
        )
    exponents = ops.arange(0, dim, 2, dtype="float32") / float(dim)  # (dim/2,)
    inverse_frequencies = ops.power(float(max_wavelength), -exponents)
    positions = ops.cast(positions, "float32")
    return positions[:, None] * inverse_frequencies[None, :]  # (T, dim/2)


def apply_rotary(x, start_index=0, max_wavelength=10000, positions=None):
    """Rotate feature pairs of `x` by position-dependent angles (Su et al. 2021).

    The features are split in halves (x1, x2) and each pair (x1_i, x2_i) at
    position p is rotated by the angle p * theta_i, so that the dot product of
    a rotated query and key depends only on their relative position.

    Args:
        x: (batch, length, dim) or (batch, length, heads, dim), dim even.
        start_index: position of the first element along the length axis
            (int or scalar tensor), for decoding with a cache.
        max_wavelength: base of the wavelengths.
        positions: optional explicit (length,) positions; overrides start_index.

    Returns:
        tensor like `x`.

    Example:

    >>> import numpy as np
    >>> import keras_attention as ka
    >>> x = np.ones((1, 4, 2, 8), "float32")
    >>> tuple(ka.ops.apply_rotary(x).shape)
    (1, 4, 2, 8)
    """
    rank = len(x.shape)
    if rank not in (3, 4):
        raise ValueError(
            "`x` must be (batch, length, dim) or (batch, length, heads, dim). "
            f"Received: x.shape={tuple(x.shape)}"
        )
    dim = x.shape[-1]
    if positions is None:
        length = ops.shape(x)[1]
        positions = ops.arange(length, dtype="float32") + ops.cast(start_index, "float32")
    angles = rotary_angles(positions, dim, max_wavelength)  # (T, dim/2)
    angles = ops.concatenate([angles, angles], axis=-1)  # (T, dim)
    if rank == 4:
        angles = angles[:, None, :]  # (T, 1, dim) broadcasts over heads
    cos = ops.cast(ops.cos(angles), x.dtype)
    sin = ops.cast(ops.sin(angles), x.dtype)
    first, second = ops.split(x, 2, axis=-1)
    rotated_half = ops.concatenate([-second, first], axis=-1)
    return x * cos + rotated_half * sin
