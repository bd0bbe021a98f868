"""Eager calls of the chunked kernel run its tile loops as one cached graph.

The tile steps are Python methods: eagerly, a loop that runs op by op calls
them once per tile, while a traced loop calls them only while tracing. So
the number of Python tile steps tells how a call ran, without timing it.
"""

import importlib

import numpy as np
import pytest
import tensorflow as tf
from numpy_reference import scaled_dot_product_attention as reference

from keras_attention.ops import attention
from keras_attention.ops.eager_graph import graph_when_eager

chunked_module = importlib.import_module("keras_attention.ops.chunked_attention")
rng = np.random.default_rng(7)


@pytest.fixture
def tile_steps(monkeypatch):
    """A list that grows by one each time Python computes a tile's scores."""
    steps = []
    tile_scores = chunked_module._TiledAttention.tile_scores

    def counting(self, *args, **kwargs):
        steps.append(args[1:3])
        return tile_scores(self, *args, **kwargs)

    monkeypatch.setattr(chunked_module._TiledAttention, "tile_scores", counting)
    return steps


def _forward_and_backward(q, k, v, mask=None, is_causal=True):
    q, k, v = (tf.constant(t) for t in (q, k, v))
    with tf.GradientTape() as tape:
        tape.watch([q, k, v])
        out = chunked_module.chunked_attention(q, k, v, mask, is_causal, 0.5, block_size=4)
        weights = tf.reshape(tf.range(tf.size(out), dtype=out.dtype), out.shape) / 100.0
        loss = tf.reduce_sum(out * weights)
    return out, tape.gradient(loss, [q, k, v])


@pytest.mark.parametrize("masked", [False, True])
def test_a_second_eager_call_with_the_same_shapes_runs_no_python_tile_step(tile_steps, masked):
    # 37 causal tokens in blocks of 4: 10 query blocks, 55 visible tiles,
    # each visited once forward and once backward.
    q, k, v = (rng.normal(size=(1, 37, 3, 4)).astype("float32") for _ in range(3))
    mask = (rng.random((1, 1, 37, 37)) > 0.2) if masked else None
    out, gradients = _forward_and_backward(q, k, v, mask)
    assert len(tile_steps) < 55  # the loop bodies were traced, not run per tile
    tile_steps.clear()
    again, again_gradients = _forward_and_backward(q, k, v, mask)
    assert tile_steps == []
    expected, _ = reference(q, k, v, mask, True, scale=0.5)
    np.testing.assert_allclose(np.asarray(again), expected, atol=2e-6)
    for first, second in zip(gradients, again_gradients):
        np.testing.assert_array_equal(np.asarray(first), np.asarray(second))


def test_dot_product_attention_called_eagerly_reuses_its_graph(tile_steps):
    q, k, v = (rng.normal(size=(2, 21, 2, 8)).astype("float32") for _ in range(3))
    for _ in range(2):
        tile_steps.clear()
        with tf.GradientTape() as tape:
            q_tensor = tf.constant(q)
            tape.watch(q_tensor)
            out = attention.dot_product_attention(
                q_tensor, k, v, is_causal=True, implementation="chunked"
            )
        tape.gradient(out, q_tensor)
    assert tile_steps == []
    expected, _ = reference(q, k, v, None, True)
    np.testing.assert_allclose(np.asarray(out), expected, atol=2e-6)


def test_options_and_shapes_get_graphs_of_their_own():
    # Python options are part of the key: causal and not, mask given and not.
    q, k, v = (rng.normal(size=(1, 9, 2, 4)).astype("float32") for _ in range(3))
    mask = rng.random((1, 1, 9, 9)) > 0.3
    for given in (None, mask, None):
        for is_causal in (True, False, True):
            got = chunked_module.chunked_attention(q, k, v, given, is_causal, 0.5, block_size=4)
            expected, _ = reference(q, k, v, given, is_causal, scale=0.5)
            np.testing.assert_allclose(np.asarray(got), expected, atol=2e-6)
    shorter = q[:, :6]
    got = chunked_module.chunked_attention(shorter, k, v, None, True, 0.5, block_size=4)
    expected, _ = reference(shorter, k, v, None, True, scale=0.5)
    np.testing.assert_allclose(np.asarray(got), expected, atol=2e-6)


def test_graph_when_eager_traces_once_and_runs_inside_compiled_functions():
    calls = []

    def double(x):
        calls.append(tf.executing_eagerly())
        return x * 2.0

    wrapped = graph_when_eager(double)
    assert float(wrapped(tf.constant(1.0))) == 2.0
    assert calls == [False]  # eagerly: traced into its own graph

    @tf.function(jit_compile=True)
    def outer(x):
        return wrapped(x) + 1.0

    assert float(outer(tf.constant(1.0))) == 3.0
    assert calls == [False, False]
    assert float(wrapped(tf.constant(5.0))) == 10.0
    assert len(calls) == 2  # the eager graph was reused
