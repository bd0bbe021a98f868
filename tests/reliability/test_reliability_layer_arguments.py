"""Every public layer refuses a bad constructor argument with a ValueError that names it.

The message must name the argument and echo what was received
("... Received: units=0"), so that a user can find the mistake in their own
code without reading ours.
"""

import re

import keras
import pytest

from keras_attention import layers

# (layer, arguments that make it valid, {argument: [bad values]})
NUMBER = [0, -1, 1.5, "4", None, True]
RATE = [-0.1, 1.0, "0.1", None, True]
FLAG = [0, 1, "yes", None]
SEED = [1.5, "7", True]
# What every multi-head layer takes.
HEADS = {"num_heads": NUMBER, "dropout": RATE}

AUDIT = [
    (
        layers.AdditiveAttention,
        {"units": 4},
        {"units": NUMBER, "dropout": RATE, "use_bias": FLAG, "seed": SEED},
    ),
    (
        layers.DotProductAttention,
        {},
        {"score_mode": ["cosine", None], "dropout": RATE, "seed": SEED, "use_scale": FLAG},
    ),
    (
        layers.MultiHeadAttention,
        {"num_heads": 2, "key_dim": 4},
        {
            **HEADS,
            "key_dim": NUMBER,
            "value_dim": [0, -1, 1.5],
            "use_bias": FLAG,
            "use_gate": FLAG,
            "sliding_window": [0, -1, 1.5],
            "implementation": ["flash", None],
            "rotary_max_wavelength": [0, -1, float("nan"), "1e4"],
            "seed": SEED,
        },
    ),
    (
        layers.GroupQueryAttention,
        {"head_dim": 4, "num_query_heads": 4, "num_key_value_heads": 2},
        {
            "head_dim": NUMBER,
            "num_query_heads": NUMBER + [3],  # 3 query heads cannot share 2 key/value heads
            "num_key_value_heads": NUMBER + [3],
            "dropout": RATE,
            "use_bias": FLAG,
            "use_gate": FLAG,
            "sliding_window": [0, -1, 1.5],
            "flash_attention": [0, "yes"],
            "implementation": ["flash", None],
            "rotary_max_wavelength": [0, -1, float("nan"), "1e4"],
            "seed": SEED,
        },
    ),
    (
        layers.SelfAttention,
        {"num_heads": 2, "key_dim": 4},
        {**HEADS, "key_dim": NUMBER, "causal": FLAG, "seed": SEED},
    ),
    (
        layers.SpatialSelfAttention,
        {},
        {**HEADS, "key_dim": [0, -1, 1.5], "seed": SEED},
    ),
    (
        layers.PatchEmbedding,
        {"patch_size": 4, "hidden_dim": 8},
        {"patch_size": NUMBER, "hidden_dim": NUMBER, "use_bias": FLAG, "flatten": FLAG},
    ),
    (layers.PositionEmbedding, {"max_length": 8}, {"max_length": NUMBER, "merge": ["sum"]}),
    (
        layers.PositionEmbedding2D,
        {"grid_size": (2, 2)},
        {"grid_size": [0, (0, 2), (2,)], "num_prefix_tokens": [-1, 1.5]},
    ),
    (layers.RotaryEmbedding, {}, {"max_wavelength": [0, -1, float("nan"), "1e4"]}),
    (
        layers.SinusoidalPositionEncoding,
        {},
        {"max_wavelength": [0, -1, float("nan")], "merge": ["sum"]},
    ),
    (
        layers.SinusoidalPositionEncoding2D,
        {},
        {"max_wavelength": [0, -1], "num_prefix_tokens": [-1, 1.5]},
    ),
    (layers.StochasticDepth, {}, {"rate": RATE, "seed": SEED}),
    (
        layers.TokenAndPositionEmbedding,
        {"vocabulary_size": 10, "sequence_length": 8, "embedding_dim": 4},
        {
            "vocabulary_size": NUMBER,
            "sequence_length": NUMBER,
            "embedding_dim": NUMBER,
            "mask_zero": FLAG,
            "scale_embeddings": FLAG,
            "position": ["rotary", None],
        },
    ),
    (layers.TokenPooling, {}, {"pooling": ["max", None]}),
    (layers.AlibiBias, {}, {"alibi_bias_max": [0, -1, float("nan"), "8", None]}),
    (
        layers.AlibiBias2D,
        {"grid_size": (2, 3)},
        {
            "grid_size": [(0, 3), (2,), (2.5, 3), "2x3", None],
            "slopes": [[], [-1.0], [float("nan")], "1", ["0.5"], 0.5],
        },
    ),
    (
        layers.RelativePositionBias,
        {"num_heads": 2},
        {
            "num_heads": NUMBER,
            # Bidirectional buckets come in pairs, at least two a side.
            "num_buckets": NUMBER + [2, 7],
            "max_distance": NUMBER,
            "bidirectional": FLAG,
        },
    ),
    (
        layers.WindowAttention,
        {"num_heads": 2, "window_size": 4},
        {**HEADS, "window_size": NUMBER, "use_bias": FLAG, "seed": SEED},
    ),
    (
        layers.SwinTransformerBlock,
        {"num_heads": 2, "window_size": 4},
        {
            **HEADS,
            "window_size": NUMBER,
            "shift_size": [-1, 1.5, "2", None, 4],  # 4: not smaller than the window
            "mlp_ratio": [0, -1, float("nan"), "4"],
            "attention_dropout": RATE,
            "stochastic_depth_rate": RATE,
            "layer_norm_epsilon": [0, -1e-5, float("nan"), "1e-5"],
            "use_bias": FLAG,
            "seed": SEED,
        },
    ),
    (layers.PatchMerging, {}, {"layer_norm_epsilon": [0, -1e-5, float("nan"), "1e-5"]}),
]
for block in (
    layers.TransformerEncoderBlock,
    layers.TransformerDecoderBlock,
    layers.TransformerEncoder,
    layers.TransformerDecoder,
):
    AUDIT.append(
        (
            block,
            {"num_heads": 2, "intermediate_dim": 8},
            {
                **HEADS,
                "intermediate_dim": NUMBER,
                "key_dim": [0, -1, 1.5],
                "norm_first": FLAG,
                "normalize_first": [0, 1, "yes"],
                "layer_norm_epsilon": [0, -1e-5, float("nan"), "1e-5"],
                "implementation": ["flash"],
                "rotary_max_wavelength": [0, -1, "1e4"],
                # None is multi-head attention; 3 and 4 do not divide num_heads=2.
                "num_key_value_heads": [0, -1, 1.5, "1", True, 3, 4],
            },
        )
    )
AUDIT.append(
    (
        layers.TransformerEncoderBlock,
        {"num_heads": 2, "intermediate_dim": 8},
        {"stochastic_depth_rate": RATE},
    )
)

CASES = [
    pytest.param(layer, valid, argument, bad, id=f"{layer.__name__}-{argument}={bad!r}")
    for layer, valid, table in AUDIT
    for argument, bad_values in table.items()
    for bad in bad_values
]


@pytest.mark.parametrize("layer, valid, argument, bad", CASES)
def test_bad_constructor_argument_is_refused_naming_it(layer, valid, argument, bad):
    with pytest.raises(ValueError, match=rf"`?{argument}`?.*Received: .*{re.escape(argument)}="):
        layer(**{**valid, argument: bad})


def test_attention_decoder_refuses_an_unknown_attention_style():
    with pytest.raises(ValueError, match=r"attention_style.*Received: attention_style='luong2'"):
        layers.AttentionDecoder(
            keras.layers.GRUCell(4), layers.AdditiveAttention(4), attention_style="luong2"
        )


def test_every_public_layer_is_audited():
    audited = {layer for layer, _, _ in AUDIT}
    # Layers with no argument that a value could make wrong (ClassToken takes
    # an initializer, checked by keras) or whose checks are tested above.
    exempt = {layers.ClassToken, layers.AttentionDecoder, layers.BaseAttention}
    public = {
        getattr(layers, name)
        for name in dir(layers)
        if isinstance(getattr(layers, name), type)
        and issubclass(getattr(layers, name), keras.layers.Layer)
    }
    assert public - exempt <= audited, sorted(c.__name__ for c in public - exempt - audited)
