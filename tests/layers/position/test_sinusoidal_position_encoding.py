import keras
import numpy as np
import pytest
import tensorflow as tf
from layer_harness import LayerSpec
from layer_harness import assert_docstring_examples_pass
from layer_harness import harness_test
from numpy_sinusoids import numpy_sinusoids

from keras_attention.layers.position import sinusoidal_position_encoding
from keras_attention.layers.position.sinusoidal_position_encoding import SinusoidalPositionEncoding
from keras_attention.layers.position.sinusoidal_position_encoding import sinusoidal_table

RNG = np.random.default_rng(0)

SPECS = [
    LayerSpec(
        "concat_start",
        SinusoidalPositionEncoding,
        {"merge": "concat", "concat_dim": 4, "max_wavelength": 100},
        inputs=[RNG.normal(size=(2, 5, 6)).astype("float32")],
        call_kwargs={"start_index": 3},
        trainable=False,
    ),
]


test_harness = harness_test(SPECS)


@pytest.mark.parametrize("max_wavelength", [10000, 50.0])
def test_encoding_matches_formula(max_wavelength):
    layer = SinusoidalPositionEncoding(max_wavelength=max_wavelength)
    encoding = keras.ops.convert_to_numpy(layer(np.zeros((2, 9, 8), "float32")))
    expected = numpy_sinusoids(np.arange(9), 8, max_wavelength)
    assert encoding.shape == (2, 9, 8)
    np.testing.assert_allclose(encoding[0], expected, atol=1e-6)
    np.testing.assert_allclose(encoding[1], expected, atol=1e-6)


def test_table_function_matches_formula_at_float_positions():
    positions = np.array([0.0, 2.5, 17.0, 123.0])
    table = keras.ops.convert_to_numpy(sinusoidal_table(positions, 10, max_wavelength=300))
    np.testing.assert_allclose(table, numpy_sinusoids(positions, 10, 300), atol=2e-5)


def test_add_and_concat_values_and_shapes():
    x = RNG.normal(size=(3, 4, 6)).astype("float32")
    added = keras.ops.convert_to_numpy(SinusoidalPositionEncoding(merge="add")(x))
    np.testing.assert_allclose(added, x + numpy_sinusoids(np.arange(4), 6)[None], atol=1e-6)

    concat = keras.ops.convert_to_numpy(SinusoidalPositionEncoding(merge="concat", concat_dim=4)(x))
    assert concat.shape == (3, 4, 10)
    np.testing.assert_array_equal(concat[..., :6], x)
    expected = np.broadcast_to(numpy_sinusoids(np.arange(4), 4), (3, 4, 4))
    np.testing.assert_allclose(concat[..., 6:], expected, atol=1e-6)

    default_width = SinusoidalPositionEncoding(merge="concat")
    assert default_width(x).shape == (3, 4, 12)
    assert default_width.compute_output_shape((None, None, 6)) == (None, None, 12)


@pytest.mark.parametrize("start_index", [3, "tensor"])
def test_start_index_gives_rows_of_the_full_table(start_index):
    layer = SinusoidalPositionEncoding()
    full = keras.ops.convert_to_numpy(layer(np.zeros((1, 8, 6), "float32")))[0]
    if start_index == "tensor":
        start_index = keras.ops.convert_to_tensor(3, "int32")
    part = keras.ops.convert_to_numpy(
        layer(np.zeros((1, 3, 6), "float32"), start_index=start_index)
    )[0]
    np.testing.assert_allclose(part, full[3:6], atol=1e-6)


def test_one_step_decoding_under_xla_with_a_tensor_start_index():
    layer = SinusoidalPositionEncoding(merge="add")

    @tf.function(jit_compile=True)
    def step(x, index):
        return layer(x, start_index=index)

    x = np.zeros((2, 1, 6), "float32")
    for index in (0, 4, 11):
        got = step(x, tf.constant(index))
        np.testing.assert_allclose(np.asarray(got)[0, 0], numpy_sinusoids([index], 6)[0], atol=1e-5)


def test_keras_mask_is_passed_through():
    ids = keras.Input(shape=(None,), dtype="int32")
    embedded = keras.layers.Embedding(10, 4, mask_zero=True, embeddings_initializer="zeros")(ids)
    encoded = SinusoidalPositionEncoding(merge="add")(embedded)
    pooled = keras.layers.GlobalAveragePooling1D()(encoded)  # honours the mask
    model = keras.Model(ids, pooled)
    tokens = np.array([[5, 2, 0, 0, 0], [1, 1, 1, 1, 0]])
    got = keras.ops.convert_to_numpy(model(tokens))
    table = numpy_sinusoids(np.arange(5), 4)
    np.testing.assert_allclose(got[0], table[:2].mean(axis=0), atol=1e-6)
    np.testing.assert_allclose(got[1], table[:4].mean(axis=0), atol=1e-6)


def test_odd_dimension_is_rejected():
    with pytest.raises(ValueError, match=r"must be even\. Received: dim=5"):
        SinusoidalPositionEncoding()(np.zeros((1, 3, 5)))
    with pytest.raises(ValueError, match=r"concat_dim=3"):
        SinusoidalPositionEncoding(merge="concat", concat_dim=3)
    with pytest.raises(ValueError, match=r"Received: dim=7"):
        sinusoidal_table(np.arange(3), 7)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"merge": "sum"}, r"`merge` must be one of .* Received: merge='sum'"),
        ({"concat_dim": 4}, r"only used with merge='concat'\. Received: concat_dim=4"),
        ({"merge": "concat", "concat_dim": 0}, r"positive integer\. Received: concat_dim=0"),
        ({"max_wavelength": 0}, r"positive finite number\. Received: max_wavelength=0"),
        ({"max_wavelength": -5.0}, r"Received: max_wavelength=-5\.0"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SinusoidalPositionEncoding(**kwargs)


def test_bad_input_rank():
    with pytest.raises(ValueError, match=r"Received: inputs\.shape=\(2, 4\)"):
        SinusoidalPositionEncoding()(np.zeros((2, 4)))


def test_docstring_examples():
    assert_docstring_examples_pass(sinusoidal_position_encoding)


def test_split_layout_is_marians_all_sines_then_all_cosines():
    # Marian's table (transformers' MarianSinusoidalPositionalEmbedding), written out:
    # angle(p, j) = p / 10000^(2 (j // 2) / d); sines of the even j, then cosines of the odd j.
    positions, dim = np.arange(7), 8
    angles = positions[:, None] / np.power(10000, 2 * (np.arange(dim) // 2) / dim)[None, :]
    expected = np.concatenate([np.sin(angles[:, 0::2]), np.cos(angles[:, 1::2])], axis=1)
    layer = SinusoidalPositionEncoding(interleave=False)
    encoding = keras.ops.convert_to_numpy(layer(np.zeros((1, 7, dim), "float32")))
    np.testing.assert_allclose(encoding[0], expected, atol=1e-6)
    assert SinusoidalPositionEncoding.from_config(layer.get_config()).interleave is False
    with pytest.raises(ValueError, match=r"`interleave` must be .* Received: interleave='no'"):
        SinusoidalPositionEncoding(interleave="no")
