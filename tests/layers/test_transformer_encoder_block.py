import re

import keras
import keras_hub
import numpy as np
import pytest
from layer_harness import LayerSpec
from layer_harness import harness_test
from numpy_transformer import encoder_block
from transformer_block_inputs import PADDING
from transformer_block_inputs import X

from keras_attention.layers.transformer_encoder_block import TransformerEncoderBlock

SPECS = [
    LayerSpec(
        "post_norm",
        TransformerEncoderBlock,
        {"num_heads": 2, "intermediate_dim": 24},
        inputs=[X],
        tensor_kwargs={"padding_mask": PADDING},
        private_args=(),
    ),
    LayerSpec(
        "pre_norm_scores",
        TransformerEncoderBlock,
        {
            "num_heads": 4,
            "intermediate_dim": 8,
            "norm_first": True,
            "dropout": 0.1,
            "stochastic_depth_rate": 0.1,
            "activation": "gelu",
        },
        inputs=[X],
        call_kwargs={"return_attention_scores": True},
    ),
]


test_harness = harness_test(SPECS)


@pytest.mark.parametrize("norm_first", [False, True])
def test_matches_numpy_forward_pass(norm_first):
    block = TransformerEncoderBlock(num_heads=2, intermediate_dim=24, norm_first=norm_first)
    output, scores = block(X, padding_mask=PADDING, return_attention_scores=True)
    weights = [np.asarray(w, np.float64) for w in block.get_weights()]
    expected, expected_scores = encoder_block(
        X.astype(np.float64), weights, PADDING[:, None, None, :], norm_first
    )
    np.testing.assert_allclose(np.asarray(output), expected, atol=1e-4)
    np.testing.assert_allclose(np.asarray(scores), expected_scores, atol=1e-5)


@pytest.mark.parametrize("norm_first", [False, True])
def test_matches_keras_hub_encoder_with_copied_weights(norm_first):
    theirs = keras_hub.layers.TransformerEncoder(
        intermediate_dim=24, num_heads=2, normalize_first=norm_first
    )
    expected = np.asarray(theirs(X, padding_mask=PADDING))
    ours = TransformerEncoderBlock(num_heads=2, intermediate_dim=24, norm_first=norm_first)
    ours(X)
    assert [w.shape for w in ours.get_weights()] == [w.shape for w in theirs.get_weights()]
    ours.set_weights(theirs.get_weights())
    np.testing.assert_allclose(np.asarray(ours(X, padding_mask=PADDING)), expected, atol=1e-5)


def test_keras_mask_from_embedding_hides_padding():
    tokens = np.array([[3, 4, 5, 0, 0], [6, 7, 0, 0, 0]])
    inputs = keras.Input((None,), dtype="int32")
    embedded = keras.layers.Embedding(10, 8, mask_zero=True)(inputs)
    block = TransformerEncoderBlock(num_heads=2, intermediate_dim=8)
    model = keras.Model(inputs, block(embedded, return_attention_scores=True)[1])
    scores = np.asarray(model(tokens))
    assert np.all(scores[0, :, :, 3:] == 0.0)
    assert np.all(scores[1, :, :, 2:] == 0.0)
    # Real tokens' rows are distributions over the real tokens; padded
    # queries attend to nothing (the keras mask also masks queries).
    np.testing.assert_allclose(scores[0, :, :3].sum(-1), 1.0, atol=1e-5)
    np.testing.assert_allclose(scores[1, :, :2].sum(-1), 1.0, atol=1e-5)
    assert np.all(scores[0, :, 3:] == 0.0)


def test_stochastic_depth_is_identity_at_inference():
    block = TransformerEncoderBlock(num_heads=2, intermediate_dim=8, stochastic_depth_rate=0.5)
    plain = TransformerEncoderBlock(num_heads=2, intermediate_dim=8)
    plain(X)
    block(X)
    block.set_weights(plain.get_weights())
    np.testing.assert_allclose(np.asarray(block(X)), np.asarray(plain(X)), atol=1e-6)


@pytest.mark.parametrize(
    "argument, value",
    [
        ("num_heads", 0),
        ("num_heads", 2.5),
        ("intermediate_dim", -3),
        ("dropout", 1.0),
        ("implementation", "cuda"),
        ("key_dim", 0),
    ],
)
def test_bad_arguments(argument, value):
    match = rf"{argument}.*Received: {argument}={re.escape(repr(value))}"
    with pytest.raises(ValueError, match=match):
        TransformerEncoderBlock(**{"num_heads": 2, "intermediate_dim": 8, argument: value})


def test_bad_shapes():
    with pytest.raises(ValueError, match="inputs.*Received: inputs.shape=\\(2, 16\\)"):
        TransformerEncoderBlock(num_heads=2, intermediate_dim=8)(X[:, 0])
    with pytest.raises(ValueError, match="hidden_dim=16, num_heads=32"):
        TransformerEncoderBlock(num_heads=32, intermediate_dim=8)(X)
    with pytest.raises(ValueError, match="padding_mask.*Received: padding_mask.shape=\\(2,\\)"):
        TransformerEncoderBlock(num_heads=2, intermediate_dim=8)(X, padding_mask=PADDING[:, 0])


@pytest.mark.parametrize("normalize_first", [False, True])
def test_keras_hub_normalize_first_sets_norm_first_and_round_trips(normalize_first):
    block = TransformerEncoderBlock(
        num_heads=2, intermediate_dim=8, normalize_first=normalize_first
    )
    assert block.norm_first is normalize_first is block.normalize_first
    config = block.get_config()
    assert config["norm_first"] is config["normalize_first"] is normalize_first
    assert TransformerEncoderBlock.from_config(config).norm_first is normalize_first
