"""SelfAttention: NumPy reference, Keras masks, Sequential training."""

import keras
import numpy as np
import pytest
from bad_head_arguments import BAD_HEAD_ARGUMENTS
from layer_harness import LayerSpec
from layer_harness import harness_test
from sublayer_weights import sublayer_weights

from keras_attention.layers.attention.self_attention import SelfAttention

RNG = np.random.default_rng(3)


def reference_self_attention(layer, x, padding=None, causal=False):
    """Multi-head self-attention in NumPy; padded keys and queries attend to nothing."""
    w = sublayer_weights(layer)

    def project(name):
        return np.einsum("btd,dnk->btnk", x, w[(name, "kernel")]) + w[(name, "bias")]

    q, k, v = project("query"), project("key"), project("value")
    logits = np.einsum("btnk,bsnk->bnts", q, k) / np.sqrt(q.shape[-1])
    mask = np.ones(logits.shape, bool)
    if padding is not None:
        mask &= (padding[:, :, None] & padding[:, None, :])[:, None]
    if causal:
        mask &= np.tril(np.ones(logits.shape[-2:], bool))
    logits = np.where(mask, logits, -np.inf)
    peak = np.max(logits, axis=-1, keepdims=True)
    exps = np.where(mask, np.exp(logits - np.where(np.isfinite(peak), peak, 0.0)), 0.0)
    total = exps.sum(-1, keepdims=True)
    weights = exps / np.where(total > 0, total, 1.0)
    heads = np.einsum("bnts,bsnv->btnv", weights, v)
    output = np.einsum("btnv,nve->bte", heads, w[("attention_output", "kernel")])
    return output + w[("attention_output", "bias")], weights


@pytest.mark.parametrize("causal", [False, True])
def test_matches_numpy_reference_with_padding(causal):
    x = RNG.normal(size=(2, 5, 6)).astype("float32")
    padding = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    layer = SelfAttention(num_heads=2, key_dim=3, causal=causal, bias_initializer="random_normal")
    output, scores = layer(x, mask=padding, return_attention_scores=True)
    expected, expected_weights = reference_self_attention(layer, x, padding, causal)
    np.testing.assert_allclose(output, expected, atol=1e-5)
    np.testing.assert_allclose(scores, expected_weights, atol=1e-6)
    assert tuple(scores.shape) == (2, 2, 5, 5)


def test_real_positions_ignore_trailing_padding():
    tokens = np.array([[4, 8, 2, 0, 0, 0]])
    embedding = keras.layers.Embedding(10, 6, mask_zero=True)
    layer = SelfAttention(num_heads=2, key_dim=4)
    padded = np.asarray(layer(embedding(tokens)))
    unpadded = np.asarray(layer(embedding(tokens[:, :3])))
    np.testing.assert_allclose(padded[:, :3], unpadded, atol=1e-5)


def test_sequential_with_embedding_mask_trains_and_propagates_the_mask():
    rng = np.random.default_rng(0)
    lengths = rng.integers(2, 7, size=32)
    tokens = rng.integers(1, 20, size=(32, 6))
    tokens[np.arange(6)[None, :] >= lengths[:, None]] = 0
    # Label: whether token 1..9 (a "small" token) occurs in the sequence.
    labels = ((tokens > 0) & (tokens < 10)).any(axis=1).astype("float32")
    attention = SelfAttention(num_heads=2, key_dim=4, causal=True)
    pooling = keras.layers.GlobalAveragePooling1D()
    model = keras.Sequential(
        [
            keras.Input((6,), dtype="int32"),
            keras.layers.Embedding(20, 8, mask_zero=True),
            attention,
            pooling,
            keras.layers.Dense(1, activation="sigmoid"),
        ]
    )
    model.compile(
        optimizer=keras.optimizers.Adam(1e-2), loss="binary_crossentropy", jit_compile=False
    )
    history = model.fit(tokens, labels, epochs=4, batch_size=16, verbose=0)
    losses = history.history["loss"]
    assert np.all(np.isfinite(losses)) and losses[-1] < losses[0]
    # The pooling saw the padding mask: its output is the mean over real tokens.
    probe = keras.Model(model.inputs[0], [attention.output, pooling.output])
    attended, pooled = (np.asarray(t) for t in probe(tokens[:4]))
    real = (tokens[:4] > 0)[..., None]
    np.testing.assert_allclose(pooled, (attended * real).sum(1) / real.sum(1), atol=1e-5)


def test_symbolic_scores_shape():
    inputs = keras.Input((None, 6))
    output, scores = SelfAttention(num_heads=3, key_dim=2)(inputs, return_attention_scores=True)
    assert tuple(output.shape) == (None, None, 6)
    assert tuple(scores.shape) == (None, 3, None, None)


@pytest.mark.parametrize(
    "kwargs, match",
    BAD_HEAD_ARGUMENTS
    + [
        ({"num_heads": 2, "key_dim": 4, "causal": "yes"}, "causal='yes'"),
        ({"num_heads": 2, "key_dim": 4, "implementation": "fast"}, "implementation='fast'"),
        ({"num_heads": 2, "key_dim": 4, "dropout": -0.1}, "dropout=-0.1"),
        ({"num_heads": 2, "key_dim": 3, "rotary_max_wavelength": 100}, "even.*key_dim=3"),
        ({"num_heads": 2, "key_dim": 4, "rotary_max_wavelength": -1}, "rotary_max_wavelength=-1"),
    ],
)
def test_bad_constructor_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SelfAttention(**kwargs)


def test_bad_input_rank():
    message = r"`inputs` must be \(batch, length, features\) with known features. .*\(2, 6\)"
    with pytest.raises(ValueError, match=message):
        SelfAttention(num_heads=2, key_dim=4)(np.ones((2, 6), "float32"))


SPECS = [
    LayerSpec(
        "causal_rotary_scores",
        SelfAttention,
        {"num_heads": 2, "key_dim": 4, "causal": True, "rotary_max_wavelength": 100},
        inputs=[RNG.normal(size=(2, 5, 6)).astype("float32")],
        call_kwargs={"return_attention_scores": True},
    ),
]


test_harness = harness_test(SPECS)
