"""Dropout whose random bits are a hash of the element index, cheap under XLA."""

import keras
from keras import ops

from keras_attention.validation import check_rate


def _mix_bits(bits):
    """A 32-bit integer hash (lowbias32): every input bit flips about half the output bits."""
    bits = ops.bitwise_xor(bits, ops.right_shift(bits, 16))
    bits = ops.multiply(bits, ops.cast(0x7FEB352D, "uint32"))
    bits = ops.bitwise_xor(bits, ops.right_shift(bits, 15))
    bits = ops.multiply(bits, ops.cast(0x846CA68B, "uint32"))
    return ops.bitwise_xor(bits, ops.right_shift(bits, 16))


def hashed_dropout(inputs, rate, seed=None):
    """Inverted dropout whose random bits are a hash of (seed, element index).

    The same distribution as `keras.random.dropout` (each element kept with
    probability `1 - rate` and scaled by `1 / (1 - rate)`), with bits that are
    a pure elementwise function of the position: under XLA on CPU the
    stateless generator behind `keras.random.dropout` takes seconds for a
    (16, 8, 256, 256) tensor once its seed is a tensor (as a
    `SeedGenerator`'s is), while the hash fuses into the neighbouring
    kernels. The seed is drawn from `seed` as keras.random does, so a
    `SeedGenerator` gives a new mask at every call and an int the same one.

    Args:
        inputs: tensor of any shape and float dtype.
        rate: probability of dropping an element, in [0, 1).
        seed: int, `keras.random.SeedGenerator` or None (global generator).

    Returns:
        tensor like `inputs`, with about `rate` of its elements set to 0.

    Example:

    >>> import numpy as np
    >>> dropped = np.asarray(hashed_dropout(np.ones((100, 100), "float32"), 0.25, seed=1))
    >>> bool(abs((dropped == 0).mean() - 0.25) < 0.02), float(dropped.max())
    (True, 1.3333333730697632)
    """
    check_rate("rate", rate)
    if rate == 0:
        return inputs
    seed_pair = ops.cast(
        keras.random.randint((2,), 0, 2**31 - 1, dtype="int32", seed=seed), "uint32"
    )
    shape = ops.shape(inputs)
    size = 1
    for dimension in shape:
        size = size * dimension
    index = ops.reshape(ops.arange(size, dtype="int32"), shape)  # (B, H, Tq, Tk)
    key = ops.multiply(_mix_bits(seed_pair[0]), ops.cast(0x9E3779B9, "uint32")) + seed_pair[1]
    # One round suffices: lowbias32 of consecutive integers has no detectable
    # correlation between neighbours, and each round costs passes over the tensor.
    bits = _mix_bits(ops.bitwise_xor(ops.cast(index, "uint32"), key))
    # keep with probability 1 - rate: the bits are uniform on [0, 2**32).
    threshold = ops.cast(min(int(round(rate * 2**32)), 2**32 - 1), "uint32")
    keep = ops.greater_equal(bits, threshold)
    scaled = inputs * ops.cast(1.0 / (1.0 - rate), inputs.dtype)
    return ops.where(keep, scaled, ops.zeros_like(scaled))
