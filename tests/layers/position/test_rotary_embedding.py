import keras
import numpy as np
import pytest
import tensorflow as tf
from layer_harness import LayerSpec
from layer_harness import assert_docstring_examples_pass
from layer_harness import harness_test

from keras_attention.layers.position import rotary_embedding
from keras_attention.layers.position.rotary_embedding import RotaryEmbedding


def numpy_rope(x, positions, max_wavelength=10000.0):
    """RoPE on (T, ..., D): pair (x_i, x_{i + D/2}) rotated by p * base^(-2i/D)."""
    x = np.asarray(x, dtype="float64")
    half = x.shape[-1] // 2
    out = np.empty_like(x)
    for t, p in enumerate(positions):
        for i in range(half):
            angle = p * max_wavelength ** (-2.0 * i / x.shape[-1])
            first, second = x[t, ..., i], x[t, ..., i + half]
            out[t, ..., i] = first * np.cos(angle) - second * np.sin(angle)
            out[t, ..., i + half] = second * np.cos(angle) + first * np.sin(angle)
    return out


RNG = np.random.default_rng(0)

SPECS = [
    LayerSpec(
        "heads_start",
        RotaryEmbedding,
        {"max_wavelength": 100},
        inputs=[RNG.normal(size=(2, 5, 2, 8)).astype("float32")],
        call_kwargs={"start_index": 3},
        trainable=False,
    ),
]


test_harness = harness_test(SPECS)


@pytest.mark.parametrize("shape", [(2, 6, 8), (2, 6, 3, 4)])
def test_rotation_matches_numpy_reference(shape):
    x = RNG.normal(size=shape).astype("float32")
    got = keras.ops.convert_to_numpy(RotaryEmbedding(max_wavelength=50)(x, start_index=2))
    for b in range(shape[0]):
        np.testing.assert_allclose(got[b], numpy_rope(x[b], np.arange(2, 8), 50.0), atol=1e-5)


def test_rotation_preserves_norms():
    x = RNG.normal(size=(1, 7, 8)).astype("float32")
    got = keras.ops.convert_to_numpy(RotaryEmbedding()(x))
    np.testing.assert_allclose(np.linalg.norm(got, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-5)


def test_scores_depend_only_on_relative_position():
    layer = RotaryEmbedding()
    query, key = RNG.normal(size=(2, 1, 1, 8)).astype("float32")

    def score(p, s):
        q = keras.ops.convert_to_numpy(layer(query, start_index=p))[0, 0]
        k = keras.ops.convert_to_numpy(layer(key, start_index=s))[0, 0]
        return float(np.dot(q, k))

    same_offset = [score(2, 0), score(5, 3), score(12, 10), score(40, 38)]
    np.testing.assert_allclose(same_offset, same_offset[0], rtol=1e-4, atol=1e-5)
    # The NumPy reference gives the same relative score.
    expected = np.dot(numpy_rope(query[0], [7])[0], numpy_rope(key[0], [5])[0])
    np.testing.assert_allclose(same_offset[0], expected, rtol=1e-4, atol=1e-5)
    assert abs(score(3, 0) - same_offset[0]) > 1e-3  # another offset, another score


@pytest.mark.parametrize("start_index", [3, "tensor"])
def test_start_index_gives_rows_of_the_full_sequence(start_index):
    x = RNG.normal(size=(1, 3, 6)).astype("float32")
    layer = RotaryEmbedding()
    padded = np.concatenate([np.zeros((1, 3, 6), "float32"), x], axis=1)
    full = keras.ops.convert_to_numpy(layer(padded))
    if start_index == "tensor":
        start_index = keras.ops.convert_to_tensor(3, "int32")
    part = keras.ops.convert_to_numpy(layer(x, start_index=start_index))
    np.testing.assert_allclose(part, full[:, 3:], atol=1e-6)


def test_one_step_decoding_under_xla_with_a_tensor_start_index():
    layer = RotaryEmbedding()
    x = RNG.normal(size=(1, 1, 2, 4)).astype("float32")
    step = tf.function(lambda x, index: layer(x, start_index=index), jit_compile=True)
    for index in (0, 9):
        got = np.asarray(step(x, tf.constant(index)))
        np.testing.assert_allclose(got[0], numpy_rope(x[0], [index]), atol=1e-5)


def test_odd_dimension_is_rejected():
    with pytest.raises(ValueError, match=r"known and even .* Received: dim=5"):
        RotaryEmbedding()(np.zeros((1, 3, 5)))


def test_bad_rank_is_rejected():
    with pytest.raises(ValueError, match=r"Received: inputs\.shape=\(2, 4\)"):
        RotaryEmbedding()(np.zeros((2, 4)))


@pytest.mark.parametrize("max_wavelength", [0, -1.0, "big"])
def test_bad_max_wavelength(max_wavelength):
    with pytest.raises(ValueError, match=rf"Received: max_wavelength={max_wavelength!r}"):
        RotaryEmbedding(max_wavelength=max_wavelength)


def test_docstring_examples():
    assert_docstring_examples_pass(rotary_embedding)
