"""SwinTransformerBlock against a NumPy reference of (shifted) window attention, and the harness."""

import numpy as np
import pytest
from layer_harness import LayerSpec
from layer_harness import harness_test
from numpy_swin import same_image_part
from numpy_swin import swin_block

from keras_attention import layers
from keras_attention.layers.vision.swin_transformer_block import SwinTransformerBlock
from keras_attention.layers.vision.swin_transformer_block import shifted_window_mask
from keras_attention.layers.vision.swin_transformer_block import window_token_positions

RNG = np.random.default_rng(7)
EPSILON = 1e-5


def _normal(*shape, scale=1.0):
    return (RNG.normal(size=shape) * scale).astype("float32")


def randomized(block):
    for variable in block.weights:
        variable.assign(_normal(*variable.shape, scale=0.3))
    attention = block.attention
    return {
        "norm1_gamma": np.asarray(block.attention_norm.gamma),
        "norm1_beta": np.asarray(block.attention_norm.beta),
        "qkv_kernel": np.asarray(attention.qkv.kernel),
        "qkv_bias": np.asarray(attention.qkv.bias),
        "table": np.asarray(attention.relative_position_bias),
        "out_kernel": np.asarray(attention.output_projection.kernel),
        "out_bias": np.asarray(attention.output_projection.bias),
        "norm2_gamma": np.asarray(block.feedforward_norm.gamma),
        "norm2_beta": np.asarray(block.feedforward_norm.beta),
        "fc1_kernel": np.asarray(block.intermediate_dense.kernel),
        "fc1_bias": np.asarray(block.intermediate_dense.bias),
        "fc2_kernel": np.asarray(block.output_dense.kernel),
        "fc2_bias": np.asarray(block.output_dense.bias),
    }


def test_is_exported():
    assert layers.SwinTransformerBlock is SwinTransformerBlock


@pytest.mark.parametrize(
    "shape,window,shift",
    [
        ((2, 4, 4, 8), 2, 0),  # plain windows
        ((2, 6, 6, 8), 3, 1),  # shifted windows
        ((1, 5, 7, 8), 3, 1),  # shifted and padded
        ((1, 3, 6, 8), 4, 2),  # the shorter side is the window, no shift, padded
    ],
)
def test_matches_the_numpy_reference(shape, window, shift):
    block = SwinTransformerBlock(num_heads=2, window_size=window, shift_size=shift, mlp_ratio=2)
    block.build(shape)
    weights = randomized(block)
    x = _normal(*shape)
    out, scores = block(x, return_attention_scores=True)
    expected, expected_scores = swin_block(x.astype("float64"), weights, window, shift, 2, EPSILON)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-3, atol=1e-3)
    # Rows of padding queries are left out: they see only padding, if anything.
    real = expected_scores.sum(-1) > 0.5
    np.testing.assert_allclose(np.asarray(scores)[real], expected_scores[real], atol=1e-4)


@pytest.mark.parametrize("height,width,window,shift", [(8, 8, 4, 2), (6, 9, 3, 1), (7, 5, 4, 2)])
def test_shifted_windows_keep_parts_of_the_image_apart(height, width, window, shift):
    block = SwinTransformerBlock(num_heads=2, window_size=window, shift_size=shift)
    _, scores = block(_normal(2, height, width, 4), return_attention_scores=True)
    scores = np.asarray(scores)
    visible = same_image_part(height, width, window, shift)
    tokens = window * window
    for index in range(scores.shape[1]):
        allowed = np.array([[visible(index, i, j) for j in range(tokens)] for i in range(tokens)])
        np.testing.assert_array_equal(
            shifted_window_mask(height, width, window, shift)[index], allowed
        )
        assert np.all(scores[:, index][:, :, ~allowed] == 0)
    # The roll brought tokens together that do not touch in the image: at least one
    # window has pairs that may not attend.
    assert not all(
        visible(w, i, j)
        for w in range(scores.shape[1])
        for i in range(tokens)
        for j in range(tokens)
    )


def test_token_positions_undo_the_roll_and_drop_padding():
    positions = window_token_positions(3, 3, 2, 1)  # padded to 4 x 4, rolled by 1
    # The first rolled window starts at map position (1, 1).
    assert positions[0].tolist() == [4, 5, 7, 8]
    assert sorted(p for p in positions.reshape(-1) if p >= 0) == list(range(9))
    assert (positions < 0).sum() == 16 - 9


def test_clips_the_window_to_a_small_map():
    block = SwinTransformerBlock(num_heads=1, window_size=7, shift_size=3)
    _, scores = block(np.zeros((1, 4, 4, 4), "float32"), return_attention_scores=True)
    assert scores.shape == (1, 1, 1, 16, 16)
    assert (block.effective_window_size, block.effective_shift_size) == (4, 0)


def test_stochastic_depth_and_dropout_only_while_training():
    block = SwinTransformerBlock(
        num_heads=2, window_size=2, shift_size=1, dropout=0.3, stochastic_depth_rate=0.5, seed=2
    )
    x = _normal(4, 4, 4, 8)
    np.testing.assert_array_equal(np.asarray(block(x)), np.asarray(block(x, training=False)))
    assert not np.allclose(np.asarray(block(x, training=True)), np.asarray(block(x)))


@pytest.mark.parametrize(
    "kwargs,argument",
    [
        ({"num_heads": 0, "window_size": 2}, "num_heads"),
        ({"num_heads": 1, "window_size": 0}, "window_size"),
        ({"num_heads": 1, "window_size": 4, "shift_size": 4}, "shift_size"),
        ({"num_heads": 1, "window_size": 4, "shift_size": -1}, "shift_size"),
        ({"num_heads": 1, "window_size": 4, "mlp_ratio": 0}, "mlp_ratio"),
        ({"num_heads": 1, "window_size": 4, "dropout": -0.1}, "dropout"),
        ({"num_heads": 1, "window_size": 4, "attention_dropout": 2}, "attention_dropout"),
        ({"num_heads": 1, "window_size": 4, "stochastic_depth_rate": 1}, "stochastic_depth_rate"),
        ({"num_heads": 1, "window_size": 4, "layer_norm_epsilon": 0}, "layer_norm_epsilon"),
    ],
)
def test_bad_arguments_name_themselves(kwargs, argument):
    with pytest.raises(ValueError, match=argument):
        SwinTransformerBlock(**kwargs)


def test_needs_the_map_size_when_built():
    with pytest.raises(ValueError, match="height, width and channels are known"):
        SwinTransformerBlock(num_heads=1, window_size=2).build((None, None, 4, 8))


_MAP = RNG.normal(size=(2, 6, 5, 8)).astype("float32")

SPECS = [
    LayerSpec(
        "swin_block",
        SwinTransformerBlock,
        {"num_heads": 2, "window_size": 3},
        [_MAP],
        dynamic_axes=[()],
    ),
    LayerSpec(
        "swin_block_shifted_padded_scores",
        SwinTransformerBlock,
        {
            "num_heads": 2,
            "window_size": 4,
            "shift_size": 2,
            "dropout": 0.1,
            "stochastic_depth_rate": 0.2,
            "seed": 3,
        },
        [RNG.normal(size=(2, 6, 9, 8)).astype("float32")],
        call_kwargs={"return_attention_scores": True},
        dynamic_axes=[()],
    ),
]

test_harness = harness_test(SPECS)
