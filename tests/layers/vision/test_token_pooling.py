import keras
import numpy as np
import pytest
from layer_harness import LayerSpec
from layer_harness import assert_docstring_examples_pass
from layer_harness import harness_test

from keras_attention.layers.vision import token_pooling
from keras_attention.layers.vision.token_pooling import TokenPooling

RNG = np.random.default_rng(0)
MASK = np.array([[True, True, False, False], [True, True, True, True]])

SPECS = [
    LayerSpec(
        "gap_masked",
        TokenPooling,
        {"pooling": "gap"},
        inputs=[RNG.normal(size=(2, 4, 3)).astype("float32")],
        tensor_kwargs={"mask": MASK},
        trainable=False,
    ),
]


test_harness = harness_test(SPECS)


def test_token_pooling_takes_index_zero():
    x = RNG.normal(size=(3, 5, 4)).astype("float32")
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(TokenPooling("token")(x)), x[:, 0])
    # The mask does not move the class token.
    masked = TokenPooling("token")(x, mask=np.zeros((3, 5), bool))
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(masked), x[:, 0])


def test_gap_averages_real_tokens_only():
    x = RNG.normal(size=(3, 4, 2)).astype("float32")
    mask = np.array([[True, False, True, False], [True, True, True, True], [False] * 4])
    got = keras.ops.convert_to_numpy(TokenPooling("gap")(x, mask=mask))
    np.testing.assert_allclose(got[0], (x[0, 0] + x[0, 2]) / 2, rtol=1e-6)
    np.testing.assert_allclose(got[1], x[1].mean(axis=0), rtol=1e-6)
    np.testing.assert_array_equal(got[2], 0.0)  # no real token: 0, not NaN
    unmasked = keras.ops.convert_to_numpy(TokenPooling("gap")(x))
    np.testing.assert_allclose(unmasked, x.mean(axis=1), rtol=1e-6)


def test_gap_uses_the_keras_mask():
    ids = keras.Input((None,), dtype="int32")
    embedded = keras.layers.Embedding(6, 3, mask_zero=True)(ids)
    model = keras.Model(ids, TokenPooling("gap")(embedded))
    tokens = np.array([[4, 2, 0, 0], [1, 2, 3, 5]])
    table = keras.ops.convert_to_numpy(model.layers[1].embeddings)
    got = keras.ops.convert_to_numpy(model(tokens))
    np.testing.assert_allclose(got[0], table[[4, 2]].mean(axis=0), rtol=1e-6)
    np.testing.assert_allclose(got[1], table[[1, 2, 3, 5]].mean(axis=0), rtol=1e-6)


def test_gap_under_float16_does_not_overflow():
    x = np.full((1, 100, 2), 1000.0, "float32")  # the sum 1e5 exceeds float16's range
    got = TokenPooling("gap", dtype="mixed_float16")(x)
    assert keras.backend.standardize_dtype(got.dtype) == "float16"
    np.testing.assert_allclose(keras.ops.convert_to_numpy(got).astype("float32"), 1000.0)


def test_output_shape():
    assert TokenPooling().compute_output_shape((None, None, 7)) == (None, 7)


def test_unknown_pooling_is_rejected():
    with pytest.raises(ValueError, match=r"Received: pooling='max'"):
        TokenPooling("max")


def test_bad_mask_and_input_ranks():
    with pytest.raises(ValueError, match=r"Received: mask\.shape=\(2, 4, 1\)"):
        TokenPooling("gap")(np.zeros((2, 4, 3)), mask=np.ones((2, 4, 1), bool))
    with pytest.raises(ValueError, match=r"Received: inputs\.shape=\(2, 4\)"):
        TokenPooling()(np.zeros((2, 4)))


def test_docstring_examples():
    assert_docstring_examples_pass(token_pooling)
