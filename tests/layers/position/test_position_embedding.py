import keras
import numpy as np
import pytest
import tensorflow as tf
from layer_harness import LayerSpec
from layer_harness import assert_docstring_examples_pass
from layer_harness import harness_test

from keras_attention.layers.position import position_embedding
from keras_attention.layers.position.position_embedding import PositionEmbedding

RNG = np.random.default_rng(0)
X = RNG.normal(size=(2, 5, 6)).astype("float32")

SPECS = [
    LayerSpec(
        "concat_start",
        PositionEmbedding,
        {"max_length": 8, "merge": "concat", "concat_dim": 4},
        inputs=[X],
        call_kwargs={"start_index": 2},
    ),
]


test_harness = harness_test(SPECS)


def _layer_with_table(max_length, width, **kwargs):
    layer = PositionEmbedding(max_length, **kwargs)
    layer.build((None, None, width if kwargs.get("merge") != "concat" else 3))
    table = RNG.normal(size=tuple(layer.embeddings.shape)).astype("float32")
    layer.embeddings.assign(table)
    return layer, table


def test_lookup_returns_the_table_rows_exactly():
    layer, table = _layer_with_table(10, 4)
    got = keras.ops.convert_to_numpy(layer(np.zeros((3, 6, 4), "float32")))
    np.testing.assert_array_equal(got, np.broadcast_to(table[:6], (3, 6, 4)))


@pytest.mark.parametrize("start_index", [3, "tensor"])
def test_start_index_gives_rows_of_the_table(start_index):
    layer, table = _layer_with_table(10, 4)
    if start_index == "tensor":
        start_index = keras.ops.convert_to_tensor(3, "int32")
    got = keras.ops.convert_to_numpy(layer(np.zeros((1, 3, 4), "float32"), start_index=start_index))
    np.testing.assert_array_equal(got[0], table[3:6])


def test_add_and_concat():
    x = RNG.normal(size=(2, 4, 4)).astype("float32")
    adder, table = _layer_with_table(6, 4, merge="add")
    np.testing.assert_allclose(keras.ops.convert_to_numpy(adder(x)), x + table[None, :4], rtol=1e-6)

    concat = PositionEmbedding(6, merge="concat", concat_dim=5)
    out = keras.ops.convert_to_numpy(concat(x))
    assert out.shape == (2, 4, 9)
    np.testing.assert_array_equal(out[..., :4], x)
    table = keras.ops.convert_to_numpy(concat.embeddings)
    assert table.shape == (6, 5)
    np.testing.assert_array_equal(out[..., 4:], np.broadcast_to(table[:4], (2, 4, 5)))
    assert concat.compute_output_shape((None, None, 4)) == (None, None, 9)


def test_one_step_decoding_under_xla_with_a_tensor_start_index():
    layer, table = _layer_with_table(12, 4)

    @tf.function(jit_compile=True)
    def step(x, index):
        return layer(x, start_index=index)

    for index in (0, 5, 11):
        got = np.asarray(step(np.zeros((2, 1, 4), "float32"), tf.constant(index)))
        np.testing.assert_array_equal(got[:, 0], np.broadcast_to(table[index], (2, 4)))


def test_keras_mask_is_passed_through():
    ids = keras.Input(shape=(None,), dtype="int32")
    embedded = keras.layers.Embedding(10, 4, mask_zero=True, embeddings_initializer="zeros")(ids)
    layer = PositionEmbedding(8, merge="add")
    pooled = keras.layers.GlobalAveragePooling1D()(layer(embedded))
    model = keras.Model(ids, pooled)
    got = keras.ops.convert_to_numpy(model(np.array([[3, 4, 0, 0]])))
    table = keras.ops.convert_to_numpy(layer.embeddings)
    np.testing.assert_allclose(got[0], table[:2].mean(axis=0), rtol=1e-6)


def test_sequence_longer_than_the_table_is_rejected():
    layer = PositionEmbedding(max_length=10)
    with pytest.raises(
        ValueError, match=r"max_length=10 rows\. Received: sequence_length=12, start_index=0"
    ):
        layer(np.zeros((1, 12, 4)))
    with pytest.raises(ValueError, match=r"Received: sequence_length=4, start_index=8"):
        layer(np.zeros((1, 4, 4)), start_index=8)


@pytest.mark.parametrize("max_length", [0, -3, 2.5, True, None])
def test_bad_max_length(max_length):
    with pytest.raises(
        ValueError, match=rf"positive integer\. Received: max_length={max_length!r}"
    ):
        PositionEmbedding(max_length)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"merge": "multiply"}, r"Received: merge='multiply'"),
        ({"merge": "add", "concat_dim": 3}, r"Received: concat_dim=3, merge='add'"),
        ({"merge": "concat", "concat_dim": -1}, r"Received: concat_dim=-1"),
    ],
)
def test_bad_merge_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PositionEmbedding(4, **kwargs)


def test_bad_input_rank():
    with pytest.raises(ValueError, match=r"Received: inputs\.shape=\(2, 3, 4, 5\)"):
        PositionEmbedding(4)(np.zeros((2, 3, 4, 5)))


def test_docstring_examples():
    assert_docstring_examples_pass(position_embedding)
