import numpy as np
import pytest
from numpy_reference import softmax_with_mask

from keras_attention.ops.rotary import apply_rotary
from keras_attention.ops.softmax import masked_softmax

rng = np.random.default_rng(0)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_masked_softmax_matches_reference_and_zeroes_masked_rows(dtype):
    import keras

    logits = rng.normal(size=(3, 4, 6)).astype("float32") * 10
    mask = rng.random((3, 4, 6)) > 0.4
    mask[1, 2] = False
    got = masked_softmax(keras.ops.cast(logits, dtype), mask)
    assert keras.backend.standardize_dtype(got.dtype) == "float32"
    tolerance = {"float32": 1e-6, "float16": 1e-2, "bfloat16": 5e-2}[dtype]
    np.testing.assert_allclose(np.asarray(got), softmax_with_mask(logits, mask), atol=tolerance)
    np.testing.assert_array_equal(np.asarray(got)[1, 2], 0.0)


def _numpy_rope(x, positions, base=10000.0):
    dim = x.shape[-1]
    half = dim // 2
    theta = base ** (-np.arange(half) * 2.0 / dim)
    angle = positions[:, None] * theta[None, :]  # (T, dim/2)
    x1, x2 = x[..., :half], x[..., half:]
    if x.ndim == 4:
        angle = angle[:, None, :]
    cos, sin = np.cos(angle), np.sin(angle)
    return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)


@pytest.mark.parametrize("shape", [(2, 5, 8), (2, 5, 3, 8)])
def test_rotary_matches_numpy_rope(shape):
    x = rng.normal(size=shape).astype("float32")
    np.testing.assert_allclose(
        np.asarray(apply_rotary(x)), _numpy_rope(x, np.arange(5.0)), atol=1e-5
    )
    np.testing.assert_allclose(
        np.asarray(apply_rotary(x, start_index=3)), _numpy_rope(x, np.arange(3.0, 8.0)), atol=1e-5
    )


def test_rotary_dot_products_depend_only_on_relative_position():
    q = rng.normal(size=(1, 1, 8)).astype("float32")
    k = rng.normal(size=(1, 1, 8)).astype("float32")

    def score(p, s):
        return float(np.sum(np.asarray(apply_rotary(q, p)) * np.asarray(apply_rotary(k, s))))

    assert score(5, 2) == pytest.approx(score(13, 10), abs=1e-4)
    assert score(5, 2) != pytest.approx(score(5, 4), abs=1e-3)


def test_rotary_bad_inputs():
    with pytest.raises(ValueError, match="Received: dim=7"):
        apply_rotary(np.zeros((1, 2, 7), "float32"))
    with pytest.raises(ValueError, match="Received: x.shape=\\(2, 7\\)"):
        apply_rotary(np.zeros((2, 7), "float32"))
