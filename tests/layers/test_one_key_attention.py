"""Attention layers over one key: weight 1, and no "softmax over size 1" warning.

One key is what a single-token sequence or a first decoding step gives;
keras' warning ("did you mean sigmoid?") would be noise there.
"""

import numpy as np
import pytest
import tensorflow as tf
from softmax_warnings import softmax_of_size_one_warnings

from keras_attention.layers.attention.additive_attention import AdditiveAttention
from keras_attention.layers.attention.dot_product_attention import DotProductAttention
from keras_attention.layers.attention.grouped_query_attention import GroupQueryAttention
from keras_attention.layers.attention.multi_head_attention import MultiHeadAttention
from keras_attention.layers.attention.self_attention import SelfAttention

RNG = np.random.default_rng(3)
QUERY = RNG.normal(size=(2, 3, 6)).astype("float32")
ONE_KEY = RNG.normal(size=(2, 1, 6)).astype("float32")


def _head_layers():
    kernels = ("xla", "chunked", "fused")
    layers = {
        f"mha_{kernel}": MultiHeadAttention(2, 4, implementation=kernel) for kernel in kernels
    }
    layers["gqa"] = GroupQueryAttention(head_dim=4, num_query_heads=4, num_key_value_heads=2)
    return layers


@pytest.mark.parametrize("name", list(_head_layers()))
def test_multi_head_layers_over_one_key(name, caplog):
    layer = _head_layers()[name]
    twice = np.concatenate([ONE_KEY, ONE_KEY], axis=1)  # the same key twice: weights 1/2
    expected = np.asarray(layer(QUERY, twice))

    def calls():
        output = layer(QUERY, ONE_KEY)
        with_scores, scores = layer(QUERY, ONE_KEY, return_attention_scores=True)
        return output, with_scores, scores

    assert softmax_of_size_one_warnings(calls, caplog) == []
    output, with_scores, scores = calls()
    np.testing.assert_array_equal(np.asarray(scores), 1.0)
    np.testing.assert_allclose(np.asarray(output), expected, atol=1e-5)
    np.testing.assert_allclose(np.asarray(with_scores), expected, atol=1e-5)


def test_first_decoding_step_over_one_cached_position(caplog):
    layer = MultiHeadAttention(2, 4)
    token = QUERY[:, :1]
    cache = np.zeros((2, 2, 1, 2, 4), "float32")  # room for one position

    def step():
        return layer(token, token, cache=cache, cache_update_index=0, use_causal_mask=True)

    for call in (step, tf.function(step, jit_compile=True)):
        assert softmax_of_size_one_warnings(call, caplog) == []
        np.testing.assert_allclose(
            np.asarray(call()[0]), np.asarray(layer(token, token)), atol=1e-5
        )


def test_one_token_sequence_in_self_attention(caplog):
    layer = SelfAttention(num_heads=2, key_dim=4, causal=True)
    assert softmax_of_size_one_warnings(lambda: layer(ONE_KEY), caplog) == []


@pytest.mark.parametrize("make_layer", [lambda: AdditiveAttention(5), DotProductAttention])
def test_bahdanau_and_luong_over_one_value(make_layer, caplog):
    layer = make_layer()

    def call():
        return layer(QUERY, ONE_KEY, return_attention_scores=True)

    assert softmax_of_size_one_warnings(call, caplog) == []
    output, scores = call()
    np.testing.assert_array_equal(np.asarray(scores), 1.0)
    np.testing.assert_allclose(np.asarray(output), np.broadcast_to(ONE_KEY, (2, 3, 6)), atol=1e-6)
