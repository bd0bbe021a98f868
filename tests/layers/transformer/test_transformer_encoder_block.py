import json
import re
import zipfile

import keras
import keras_hub
import numpy as np
import pytest
from layer_harness import LayerSpec
from layer_harness import harness_test
from numpy_transformer import encoder_block
from transformer_block_inputs import PADDING
from transformer_block_inputs import X

from keras_attention.layers.attention.grouped_query_attention import GroupQueryAttention
from keras_attention.layers.attention.multi_head_attention import MultiHeadAttention
from keras_attention.layers.transformer.transformer_encoder_block import TransformerEncoderBlock

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
    LayerSpec(
        "grouped_query_rotary",
        TransformerEncoderBlock,
        {
            "num_heads": 4,
            "intermediate_dim": 8,
            "num_key_value_heads": 2,
            "norm_first": True,
            "rotary_max_wavelength": 100.0,
        },
        inputs=[X],
        tensor_kwargs={"padding_mask": PADDING},
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


# ---------------------------------------------------------------------------
# Grouped-query attention (`num_key_value_heads`).


def _grouped_as_multi_head(weights, num_query_heads):
    """A grouped block's weights with each key/value head repeated for its query heads.

    Query head `u` of grouped-query attention attends with key/value head
    `u // G` (`G` query heads per group), which is multi-head attention whose
    key and value heads are copies: Wk (D, Nkv, K) -> (D, Nq, K), bk (Nkv, K)
    -> (Nq, K), and alike for the value.
    """
    weights = list(weights)
    groups = num_query_heads // weights[2].shape[-2]
    for index, head_axis in ((2, 1), (3, 0), (4, 1), (5, 0)):  # Wk, bk, Wv, bv
        weights[index] = np.repeat(weights[index], groups, axis=head_axis)
    return weights


@pytest.mark.parametrize("num_key_value_heads", [2, 1])
@pytest.mark.parametrize("norm_first", [False, True])
def test_grouped_query_block_matches_numpy_forward_pass(num_key_value_heads, norm_first):
    block = TransformerEncoderBlock(
        num_heads=4,
        intermediate_dim=24,
        norm_first=norm_first,
        num_key_value_heads=num_key_value_heads,
    )
    output, scores = block(X, padding_mask=PADDING, return_attention_scores=True)
    weights = [np.asarray(w, np.float64) for w in block.get_weights()]
    assert weights[2].shape == (16, num_key_value_heads, 4)  # the key kernel
    expected, expected_scores = encoder_block(
        X.astype(np.float64),
        _grouped_as_multi_head(weights, 4),
        PADDING[:, None, None, :],
        norm_first,
    )
    np.testing.assert_allclose(np.asarray(output), expected, atol=1e-4)
    np.testing.assert_allclose(np.asarray(scores), expected_scores, atol=1e-5)
    # Heads of one group share their keys but not their queries: their weights differ.
    assert not np.allclose(np.asarray(scores)[:, 0], np.asarray(scores)[:, 1])


def test_as_many_key_value_heads_as_heads_is_the_multi_head_block():
    multi_head = TransformerEncoderBlock(num_heads=4, intermediate_dim=24)
    grouped = TransformerEncoderBlock(num_heads=4, intermediate_dim=24, num_key_value_heads=4)
    multi_head(X)
    grouped(X)
    assert [w.shape for w in grouped.weights] == [w.shape for w in multi_head.weights]
    grouped.set_weights(multi_head.get_weights())
    got = grouped(X, padding_mask=PADDING, return_attention_scores=True)
    expected = multi_head(X, padding_mask=PADDING, return_attention_scores=True)
    for a, b in zip(got, expected):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), atol=1e-6)


def _attention_sublayer(block):
    attention_classes = (MultiHeadAttention, GroupQueryAttention)
    (sublayer,) = [value for value in vars(block).values() if isinstance(value, attention_classes)]
    return sublayer


def test_the_sublayer_is_multi_head_unless_key_value_heads_are_given():
    multi_head = TransformerEncoderBlock(num_heads=4, intermediate_dim=8)
    grouped = TransformerEncoderBlock(num_heads=4, intermediate_dim=8, num_key_value_heads=1)
    multi_head(X)
    grouped(X)
    assert type(_attention_sublayer(multi_head)) is MultiHeadAttention
    sublayer = _attention_sublayer(grouped)
    assert type(sublayer) is GroupQueryAttention
    assert (sublayer.num_query_heads, sublayer.num_key_value_heads, sublayer.head_dim) == (4, 1, 4)
    assert multi_head.get_config()["num_key_value_heads"] is None
    assert grouped.get_config()["num_key_value_heads"] == 1
    assert multi_head.key_value_heads == 4 and grouped.key_value_heads == 1
    # The variable paths within the block are the same for both kinds.
    assert [w.path.split("/", 1)[1] for w in grouped.weights] == [
        w.path.split("/", 1)[1] for w in multi_head.weights
    ]


def test_a_keras_file_saved_without_the_argument_loads_as_multi_head(tmp_path):
    # A file written before `num_key_value_heads` existed: its config lacks the key.
    inputs = keras.Input((6, 16))
    model = keras.Model(inputs, TransformerEncoderBlock(num_heads=2, intermediate_dim=8)(inputs))
    expected = np.asarray(model(X))
    path, old_path = tmp_path / "model.keras", tmp_path / "old.keras"
    model.save(path)
    with zipfile.ZipFile(path) as new, zipfile.ZipFile(old_path, "w") as old:
        for item in new.infolist():
            data = new.read(item.filename)
            if item.filename == "config.json":
                config = json.loads(data)
                block_config = config["config"]["layers"][1]["config"]
                del block_config["num_key_value_heads"]
                data = json.dumps(config).encode()
            old.writestr(item, data)
    restored = keras.saving.load_model(old_path)
    np.testing.assert_allclose(np.asarray(restored(X)), expected, atol=1e-6)
    (block,) = [layer for layer in restored.layers if isinstance(layer, TransformerEncoderBlock)]
    assert block.num_key_value_heads is None
    assert type(_attention_sublayer(block)) is MultiHeadAttention


@pytest.mark.parametrize("num_key_value_heads", [3, 8])
def test_key_value_heads_must_divide_the_heads(num_key_value_heads):
    match = f"num_heads=4, num_key_value_heads={num_key_value_heads}"
    with pytest.raises(ValueError, match=match):
        TransformerEncoderBlock(
            num_heads=4, intermediate_dim=8, num_key_value_heads=num_key_value_heads
        )
    with pytest.raises(ValueError, match="num_key_value_heads.*Received: num_key_value_heads=0"):
        TransformerEncoderBlock(num_heads=4, intermediate_dim=8, num_key_value_heads=0)
