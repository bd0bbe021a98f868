import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_attention.ops.hashed_dropout import hashed_dropout

SHAPE = (8, 4, 64, 64)  # 131072 elements: the kept fraction is within 0.005 of 1 - rate


def _dropped(seed, rate=0.25, shape=SHAPE):
    return np.asarray(hashed_dropout(np.ones(shape, "float32"), rate, seed))


@pytest.mark.parametrize("rate", [0.1, 0.5, 0.9])
def test_keeps_one_minus_rate_and_scales_what_it_keeps(rate):
    dropped = _dropped(3, rate)
    kept = dropped != 0
    assert abs(kept.mean() - (1 - rate)) < 0.005
    np.testing.assert_allclose(dropped[kept], 1 / (1 - rate), rtol=1e-6)
    # Inverted dropout keeps the expectation.
    assert abs(dropped.mean() - 1.0) < 0.02


def test_bits_are_independent_of_position():
    kept = (_dropped(5, 0.5) != 0).astype("float64").reshape(-1)
    centred = kept - kept.mean()
    # Neighbours along the last axis, across rows and across batch entries.
    for lag in (1, 64, 64 * 64):
        correlation = np.mean(centred[:-lag] * centred[lag:]) / np.var(kept)
        assert abs(correlation) < 0.02, (lag, correlation)
    # Every row keeps about half of its elements: no row is all kept or all dropped.
    per_row = kept.reshape(-1, 64).mean(axis=1)
    assert 0.2 < per_row.min() and per_row.max() < 0.8


def test_an_int_seed_repeats_and_a_seed_generator_moves_on():
    np.testing.assert_array_equal(_dropped(7), _dropped(7))
    assert (_dropped(7) != _dropped(8)).mean() > 0.3
    generator = keras.random.SeedGenerator(0)
    first, second = _dropped(generator), _dropped(generator)
    assert (first != second).mean() > 0.3


def test_same_masks_under_xla_and_a_new_one_each_compiled_call():
    generator = keras.random.SeedGenerator(1)

    @tf.function(jit_compile=True)
    def drop(x):
        return hashed_dropout(x, 0.5, generator)

    ones = tf.ones((16, 32))
    first, second = np.asarray(drop(ones)), np.asarray(drop(ones))
    assert abs((first == 0).mean() - 0.5) < 0.05
    assert (first != second).mean() > 0.3


def test_rate_zero_is_the_identity_and_keeps_the_dtype():
    x = np.arange(6, dtype="float16").reshape(2, 3)
    np.testing.assert_array_equal(np.asarray(hashed_dropout(x, 0.0, 1)), x)
    assert np.asarray(hashed_dropout(x, 0.5, 1)).dtype == np.float16


@pytest.mark.parametrize("rate", [-0.1, 1.0, "0.5", None])
def test_bad_rate_is_refused(rate):
    with pytest.raises(ValueError, match=r"`rate` must be a float in \[0, 1\). Received: rate="):
        hashed_dropout(np.ones((2, 2), "float32"), rate, 1)
