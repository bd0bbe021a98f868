"""SpatialSelfAttention: identity at initialisation, NumPy reference of SAGAN."""

import keras
import numpy as np
import pytest
from layer_harness import LayerSpec
from layer_harness import harness_test

from keras_attention.layers.vision.spatial_self_attention import SpatialSelfAttention

RNG = np.random.default_rng(5)


def _weights(layer):
    found = {}
    for variable in layer.weights:
        parts = variable.path.split("/")
        found[tuple(parts[-2:]) if len(parts) > 2 else parts[-1]] = keras.ops.convert_to_numpy(
            variable
        )
    return found


def reference_spatial_attention(layer, x):
    """y = x + gamma * W_o(softmax(f(x) g(x)^T / sqrt(d)) h(x)) over the H*W positions."""
    w = _weights(layer)
    batch, height, width, channels = x.shape
    flat = x.reshape(batch, height * width, channels)  # positions in row-major order

    def conv1x1(name):
        return np.einsum("bpc,cnd->bpnd", flat, w[(name, "kernel")]) + w[(name, "bias")]

    f, g, h = conv1x1("query"), conv1x1("key"), conv1x1("value")
    logits = np.einsum("bpnd,bqnd->bnpq", f, g) / np.sqrt(f.shape[-1])
    logits = logits - logits.max(-1, keepdims=True)
    beta = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)  # (B, N, HW, HW)
    attended = np.einsum("bnpq,bqnv->bpnv", beta, h)
    if ("attention_output", "kernel") in w:
        attended = np.einsum("bpnv,nvc->bpc", attended, w[("attention_output", "kernel")])
        attended = attended + w[("attention_output", "bias")]
    else:
        attended = attended.reshape(batch, height * width, channels)
    output = flat + w["gamma"] * attended
    return output.reshape(x.shape), beta


def test_new_layer_is_the_identity():
    x = RNG.normal(size=(2, 3, 4, 16)).astype("float32")
    layer = SpatialSelfAttention()
    np.testing.assert_array_equal(layer(x), x)
    assert float(keras.ops.convert_to_numpy(layer.gamma)) == 0.0


@pytest.mark.parametrize(
    "kwargs, has_output_projection",
    [({}, False), ({"num_heads": 2, "key_dim": 3, "value_dim": 5}, True)],
    ids=["sagan", "two_heads"],
)
def test_matches_numpy_reference(kwargs, has_output_projection):
    x = RNG.normal(size=(2, 3, 4, 16)).astype("float32")
    layer = SpatialSelfAttention(
        gamma_initializer="ones", bias_initializer="random_normal", **kwargs
    )
    output, scores = layer(x, return_attention_scores=True)
    expected, expected_weights = reference_spatial_attention(layer, x)
    np.testing.assert_allclose(output, expected, atol=1e-5)
    np.testing.assert_allclose(scores, expected_weights, atol=1e-6)
    heads = kwargs.get("num_heads", 1)
    assert tuple(scores.shape) == (2, heads, 12, 12)
    sublayers = {path[0] for path in _weights(layer) if isinstance(path, tuple)}
    assert ("attention_output" in sublayers) == has_output_projection


def test_default_sizes_follow_the_paper():
    layer = SpatialSelfAttention()
    layer.build((None, 4, 4, 32))
    w = _weights(layer)
    assert w[("query", "kernel")].shape == (32, 1, 4)  # C / 8 channels for queries
    assert w[("key", "kernel")].shape == (32, 1, 4)
    assert w[("value", "kernel")].shape == (32, 1, 32)  # C channels for values
    small = SpatialSelfAttention()
    small.build((None, 4, 4, 3))
    assert _weights(small)[("query", "kernel")].shape == (3, 1, 1)  # at least one channel


def test_symbolic_unknown_spatial_size():
    inputs = keras.Input((None, None, 8))
    output, scores = SpatialSelfAttention()(inputs, return_attention_scores=True)
    assert tuple(output.shape) == (None, None, None, 8)
    assert tuple(scores.shape) == (None, 1, None, None)
    fixed = keras.Input((3, 5, 8))
    _, scores = SpatialSelfAttention(num_heads=2)(fixed, return_attention_scores=True)
    assert tuple(scores.shape) == (None, 2, 15, 15)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"key_dim": 0}, "key_dim=0"),
        ({"num_heads": 2.5}, "num_heads=2.5"),
        ({"num_heads": "2"}, "num_heads='2'"),
        ({"value_dim": -3}, "value_dim=-3"),
        ({"implementation": "cuda"}, "implementation='cuda'"),
        ({"dropout": 2}, "dropout=2"),
    ],
)
def test_bad_constructor_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SpatialSelfAttention(**kwargs)


def test_bad_input_rank():
    message = r"a \(batch, height, width, channels\) feature map with known channels. .*\(2, 5, 8\)"
    with pytest.raises(ValueError, match=message):
        SpatialSelfAttention()(np.ones((2, 5, 8), "float32"))


SPECS = [
    LayerSpec(
        "two_heads_scores",
        SpatialSelfAttention,
        {
            "num_heads": 2,
            "key_dim": 2,
            "value_dim": 3,
            "gamma_initializer": keras.initializers.Ones(),
        },
        inputs=[RNG.normal(size=(2, 3, 4, 8)).astype("float32")],
        call_kwargs={"return_attention_scores": True},
    ),
]


test_harness = harness_test(SPECS)
