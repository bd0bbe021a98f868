import numpy as np
import pytest
from numpy_reference import softmax_with_mask
from softmax_warnings import softmax_of_size_one_warnings

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


def test_one_key_gives_weight_one_without_the_size_one_softmax_warning(caplog):
    import keras
    import tensorflow as tf

    from keras_attention.ops.attention import dot_product_attention

    # The capture sees keras' warning where it is meant: a softmax over size 1 elsewhere.
    assert softmax_of_size_one_warnings(lambda: keras.ops.softmax(np.zeros((2, 1))), caplog)
    q = rng.normal(size=(2, 3, 2, 4)).astype("float32")
    kv = rng.normal(size=(2, 1, 2, 4)).astype("float32")
    hidden = np.array([True, False])[:, None, None, None]  # example 1 may not see its key

    def eager():
        return dot_product_attention(q, kv, kv, mask=hidden, return_weights=True)

    compiled = tf.function(eager, jit_compile=True)
    for call in (eager, compiled, lambda: masked_softmax(np.ones((4, 1)), np.ones((4, 1), bool))):
        assert softmax_of_size_one_warnings(call, caplog) == []
    (output, weights), (compiled_output, _) = eager(), compiled()
    np.testing.assert_array_equal(np.asarray(weights)[0], 1.0)
    np.testing.assert_array_equal(np.asarray(weights)[1], 0.0)
    np.testing.assert_allclose(np.asarray(output)[0], np.broadcast_to(kv[0], (3, 2, 4)))
    np.testing.assert_array_equal(np.asarray(output)[1], 0.0)
    np.testing.assert_allclose(np.asarray(compiled_output), np.asarray(output), atol=1e-6)


def test_softmax_over_one_entry_is_one_with_zero_gradient_and_nan_for_nan():
    import tensorflow as tf

    logits = tf.Variable([[2.0], [-3.0]])
    with tf.GradientTape() as tape:
        weights = masked_softmax(logits)
        loss = tf.reduce_sum(weights * 5.0)
    np.testing.assert_array_equal(np.asarray(weights), 1.0)  # softmax of one logit
    np.testing.assert_array_equal(np.asarray(tape.gradient(loss, logits)), 0.0)
    assert np.isnan(np.asarray(masked_softmax(np.array([[np.nan]], "float32")))[0, 0])
