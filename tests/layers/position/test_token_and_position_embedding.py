import math

import keras
import numpy as np
import pytest
from layer_harness import LayerSpec
from layer_harness import assert_docstring_examples_pass
from layer_harness import harness_test
from numpy_sinusoids import numpy_sinusoids

from keras_attention.layers.position import token_and_position_embedding
from keras_attention.layers.position.token_and_position_embedding import TokenAndPositionEmbedding

IDS = np.array([[3, 7, 1, 0, 0], [2, 2, 9, 4, 1]], dtype="int32")

SPECS = [
    LayerSpec(
        "learned_masked_scaled",
        TokenAndPositionEmbedding,
        {
            "vocabulary_size": 10,
            "sequence_length": 8,
            "embedding_dim": 6,
            "mask_zero": True,
            "scale_embeddings": True,
        },
        inputs=[IDS],
        call_kwargs={"start_index": 1},
    ),
]


test_harness = harness_test(SPECS)


def _tables(layer):
    tokens = keras.ops.convert_to_numpy(layer.token_embedding.embeddings)
    positions = keras.ops.convert_to_numpy(layer.position_embedding.embeddings)
    return tokens, positions


def test_learned_positions_add_table_rows():
    layer = TokenAndPositionEmbedding(10, 8, 6)
    got = keras.ops.convert_to_numpy(layer(IDS))
    tokens, positions = _tables(layer)
    np.testing.assert_allclose(got, tokens[IDS] + positions[None, :5], rtol=1e-6)


def test_start_index_selects_later_positions():
    layer = TokenAndPositionEmbedding(10, 8, 6)
    got = keras.ops.convert_to_numpy(layer(IDS[:, :3], start_index=4))
    tokens, positions = _tables(layer)
    np.testing.assert_allclose(got, tokens[IDS[:, :3]] + positions[None, 4:7], rtol=1e-6)
    tensor_index = keras.ops.convert_to_tensor(4, "int32")
    with_tensor = keras.ops.convert_to_numpy(layer(IDS[:, :3], start_index=tensor_index))
    np.testing.assert_allclose(with_tensor, got)


def test_sinusoidal_positions_with_scaled_tokens():
    layer = TokenAndPositionEmbedding(10, 8, 6, position="sinusoidal", scale_embeddings=True)
    got = keras.ops.convert_to_numpy(layer(IDS, start_index=2))
    tokens = keras.ops.convert_to_numpy(layer.token_embedding.embeddings)
    expected = tokens[IDS] * math.sqrt(6) + numpy_sinusoids(np.arange(2, 7), 6)[None]
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert layer.position_embedding.weights == []


def test_padding_mask_is_computed_and_propagated():
    layer = TokenAndPositionEmbedding(10, 8, 4, mask_zero=True)
    mask = keras.ops.convert_to_numpy(layer.compute_mask(IDS))
    np.testing.assert_array_equal(mask, IDS != 0)

    ids = keras.Input(shape=(None,), dtype="int32")
    pooled = keras.layers.GlobalAveragePooling1D()(layer(ids))  # honours the mask
    got = keras.ops.convert_to_numpy(keras.Model(ids, pooled)(IDS))
    embedded = keras.ops.convert_to_numpy(layer(IDS))
    np.testing.assert_allclose(got[0], embedded[0, :3].mean(axis=0), rtol=1e-5)
    np.testing.assert_allclose(got[1], embedded[1].mean(axis=0), rtol=1e-5)

    assert TokenAndPositionEmbedding(10, 8, 4).compute_mask(IDS) is None


def test_output_shape_and_mixed_dtype():
    layer = TokenAndPositionEmbedding(10, 8, 4, dtype="mixed_bfloat16")
    out = layer(IDS)
    assert tuple(out.shape) == (2, 5, 4)
    assert keras.backend.standardize_dtype(out.dtype) == "bfloat16"
    assert all(w.dtype == "float32" for w in layer.weights)
    assert layer.compute_output_shape((None, None)) == (None, None, 4)


def test_sequence_longer_than_sequence_length_is_rejected():
    for position in ("learned", "sinusoidal"):
        with pytest.raises(
            ValueError, match=r"sequence_length=4\. Received: length=5, start_index=0"
        ):
            TokenAndPositionEmbedding(10, 4, 6, position=position)(IDS)
    with pytest.raises(ValueError, match=r"Received: length=3, start_index=2"):
        TokenAndPositionEmbedding(10, 4, 6)(IDS[:, :3], start_index=2)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"vocabulary_size": 0}, r"Received: vocabulary_size=0"),
        ({"vocabulary_size": 2.5}, r"Received: vocabulary_size=2\.5"),
        ({"sequence_length": -1}, r"Received: sequence_length=-1"),
        ({"embedding_dim": 0}, r"Received: embedding_dim=0"),
        ({"position": "rotary"}, r"Received: position='rotary'"),
        (
            {"position": "sinusoidal", "embedding_dim": 5},
            r"even for sinusoidal positions\. Received: embedding_dim=5",
        ),
        ({"max_wavelength": 0}, r"Received: max_wavelength=0"),
    ],
)
def test_bad_arguments(kwargs, message):
    arguments = {"vocabulary_size": 10, "sequence_length": 8, "embedding_dim": 4, **kwargs}
    with pytest.raises(ValueError, match=message):
        TokenAndPositionEmbedding(**arguments)


def test_bad_input_rank():
    with pytest.raises(ValueError, match=r"Received: inputs\.shape=\(2, 5, 1\)"):
        TokenAndPositionEmbedding(10, 8, 4)(IDS[..., None])


def test_docstring_examples():
    assert_docstring_examples_pass(token_and_position_embedding)


def test_reverse_gives_float32_logits_on_the_same_table_with_a_bias():
    layer = TokenAndPositionEmbedding(10, 8, 6, position="sinusoidal_split", output_bias=True)
    layer(IDS)
    layer.logits_bias.assign(np.arange(10, dtype="float32"))
    features = np.random.default_rng(0).normal(size=(2, 3, 6)).astype("float32")
    logits = keras.ops.convert_to_numpy(layer(features, reverse=True))
    tokens = keras.ops.convert_to_numpy(layer.token_embedding.embeddings)
    np.testing.assert_allclose(logits, features @ tokens.T + np.arange(10), rtol=1e-5, atol=1e-5)
    assert logits.dtype == np.float32
    # In a functional graph: ids in, logits out through the one layer.
    ids = keras.Input((None,), dtype="int32")
    model = keras.Model(ids, layer(layer(ids), reverse=True))
    assert model.output.shape == (None, None, 10) and model.output.dtype == "float32"
    restored = TokenAndPositionEmbedding.from_config(layer.get_config())
    assert restored.output_bias and restored.position == "sinusoidal_split"


def test_split_sinusoids_put_the_sines_first():
    layer = TokenAndPositionEmbedding(10, 8, 6, position="sinusoidal_split")
    got = keras.ops.convert_to_numpy(layer(IDS))
    tokens = keras.ops.convert_to_numpy(layer.token_embedding.embeddings)
    interleaved = numpy_sinusoids(np.arange(5), 6)  # sin, cos, sin, cos, ...
    split = np.concatenate([interleaved[:, 0::2], interleaved[:, 1::2]], axis=1)
    np.testing.assert_allclose(got, tokens[IDS] + split[None], atol=1e-5)
