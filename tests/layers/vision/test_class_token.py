import keras
import numpy as np
import pytest
from layer_harness import LayerSpec
from layer_harness import assert_docstring_examples_pass
from layer_harness import harness_test

from keras_attention.layers.vision import class_token
from keras_attention.layers.vision.class_token import ClassToken

RNG = np.random.default_rng(0)

SPECS = [
    LayerSpec("tokens", ClassToken, {}, inputs=[RNG.normal(size=(2, 3, 4)).astype("float32")]),
]


test_harness = harness_test(SPECS)


def test_prepends_the_learned_token():
    layer = ClassToken(initializer="random_normal")
    x = RNG.normal(size=(3, 5, 4)).astype("float32")
    got = keras.ops.convert_to_numpy(layer(x))
    token = keras.ops.convert_to_numpy(layer.token)
    assert got.shape == (3, 6, 4) and token.shape == (1, 1, 4)
    np.testing.assert_array_equal(got[:, 0], np.broadcast_to(token[0, 0], (3, 4)))
    np.testing.assert_array_equal(got[:, 1:], x)
    assert layer.compute_output_shape((None, None, 4)) == (None, None, 4)
    assert layer.compute_output_shape((None, 5, 4)) == (None, 6, 4)


def test_keras_mask_gains_a_visible_class_position():
    layer = ClassToken(initializer="ones")
    mask = np.array([[True, False, False], [True, True, True]])
    got = keras.ops.convert_to_numpy(layer.compute_mask(np.zeros((2, 3, 2)), mask))
    np.testing.assert_array_equal(got, np.concatenate([np.ones((2, 1), bool), mask], axis=1))
    assert layer.compute_mask(np.zeros((2, 3, 2)), None) is None

    ids = keras.Input((None,), dtype="int32")
    embedded = keras.layers.Embedding(5, 2, mask_zero=True, embeddings_initializer="zeros")(ids)
    pooled = keras.layers.GlobalAveragePooling1D()(layer(embedded))  # honours the mask
    got = keras.ops.convert_to_numpy(keras.Model(ids, pooled)(np.array([[1, 0, 0], [1, 2, 3]])))
    # Mean over the class token (ones) and the zero embeddings that are not padding.
    np.testing.assert_allclose(got, [[1 / 2, 1 / 2], [1 / 4, 1 / 4]], rtol=1e-6)


def test_bad_input_rank():
    with pytest.raises(ValueError, match=r"Received: inputs\.shape=\(2, 4\)"):
        ClassToken()(np.zeros((2, 4)))


def test_docstring_examples():
    assert_docstring_examples_pass(class_token)
