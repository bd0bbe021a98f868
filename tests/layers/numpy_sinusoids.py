"""The sinusoidal position table of "Attention Is All You Need", in NumPy, for tests."""

import numpy as np


def numpy_sinusoids(positions, dim, max_wavelength=10000.0):
    """PE(p, 2k) = sin(p w_k), PE(p, 2k+1) = cos(p w_k), w_k = 1 / max_wavelength^(2k/d)."""
    positions = np.asarray(positions, dtype="float64")
    table = np.zeros((len(positions), dim))
    for k in range(dim // 2):
        omega = 1.0 / max_wavelength ** (2 * k / dim)
        table[:, 2 * k] = np.sin(positions * omega)
        table[:, 2 * k + 1] = np.cos(positions * omega)
    return table
