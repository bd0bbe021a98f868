"""`ops.compilation`: which executor a trace is for, and the einsum that suits it.

`einsum` must give `keras.ops.einsum`'s numbers everywhere, and under XLA on
TensorFlow be one `Einsum` op (XLA lowers it to one dot whose layouts it
chooses) rather than keras' rewrite into transposes and batched matmuls.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_attention.ops.compilation import compiled_with_xla
from keras_attention.ops.compilation import einsum

rng = np.random.default_rng(5)
QUERY = rng.standard_normal((2, 5, 3, 4)).astype("float32")  # (B, Tq, H, D)
KEY = rng.standard_normal((2, 7, 3, 4)).astype("float32")  # (B, Tk, H, D)
EQUATION = "bqhd,bkhd->bhqk"
EXPECTED = np.einsum(EQUATION, QUERY.astype("float64"), KEY.astype("float64"))


def _op_types(function, *arguments):
    graph = function.get_concrete_function(*arguments).graph
    return {operation.type for operation in graph.get_operations()}


@pytest.mark.parametrize("jit_compile", [False, True])
def test_einsum_matches_numpy_eagerly_in_graphs_and_under_xla(jit_compile):
    np.testing.assert_allclose(np.asarray(einsum(EQUATION, QUERY, KEY)), EXPECTED, atol=1e-5)
    compiled = tf.function(lambda q, k: einsum(EQUATION, q, k), jit_compile=jit_compile)
    np.testing.assert_allclose(np.asarray(compiled(QUERY, KEY)), EXPECTED, atol=1e-5)


def test_under_xla_it_is_one_einsum_op_and_in_a_graph_keras_rewrite():
    arguments = (tf.constant(QUERY), tf.constant(KEY))
    under_xla = _op_types(
        tf.function(lambda q, k: einsum(EQUATION, q, k), jit_compile=True), *arguments
    )
    assert "Einsum" in under_xla and "BatchMatMulV2" not in under_xla
    in_graph = _op_types(tf.function(lambda q, k: einsum(EQUATION, q, k)), *arguments)
    assert "BatchMatMulV2" in in_graph and "Einsum" not in in_graph


def test_operands_of_two_dtypes_keep_keras_promotion_under_xla():
    compiled = tf.function(
        lambda q, k: einsum(EQUATION, q, k), jit_compile=True
    )  # tf.einsum alone would reject float16 against float32
    result = compiled(tf.constant(QUERY, tf.float16), tf.constant(KEY))
    assert keras.backend.standardize_dtype(result.dtype) == "float32"
    np.testing.assert_allclose(np.asarray(result), EXPECTED, atol=5e-3)


def test_compiled_with_xla_tells_the_executors_apart():
    seen = []
    tf.function(lambda: seen.append(compiled_with_xla()) or 0.0, jit_compile=True)()
    tf.function(lambda: seen.append(compiled_with_xla()) or 0.0)()
    assert seen == [True, False] and not compiled_with_xla()
