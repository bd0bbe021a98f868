"""The Swin Transformer classifier: Swin-T's size, the model protocol, saving and export."""

import json

import keras
import numpy as np
import pytest
import tensorflow as tf
from tiny_models import SWIN_SIZES

import keras_attention as ka
from keras_attention.models.image_classification.swin_sizes import SWIN_PRESETS
from keras_attention.models.image_classification.swin_sizes import swin_transformer_preset
from keras_attention.models.image_classification.swin_transformer import SwinTransformer
from keras_attention.models.image_classification.swin_transformer import (
    swin_transformer_from_preset,
)
from keras_attention.serving.image_classification_export import export_image_classifier

RNG = np.random.default_rng(2)
SMALL = SWIN_SIZES  # 40 x 24 images, two stages, three named classes


def swin_parameters(embed_dim, depths, num_heads, window, patch, channels, classes):
    """Parameters of Swin from the paper's architecture (section 3), layer by layer."""
    total = patch * patch * channels * embed_dim + embed_dim  # patch projection
    total += 2 * embed_dim  # its LayerNorm
    dim = embed_dim
    for stage, (depth, heads) in enumerate(zip(depths, num_heads)):
        if stage:
            total += 2 * 4 * dim + 4 * dim * 2 * dim  # merge: LayerNorm(4C), linear 4C -> 2C
            dim *= 2
        block = 2 * dim  # LayerNorm
        block += 3 * dim * dim + 3 * dim  # q, k, v
        block += (2 * window - 1) ** 2 * heads  # relative position bias table
        block += dim * dim + dim  # output projection
        block += 2 * dim  # LayerNorm
        block += dim * 4 * dim + 4 * dim + 4 * dim * dim + dim  # MLP
        total += depth * block
    return total + 2 * dim + dim * classes + classes  # final LayerNorm, head


def swin_multiply_adds(image, embed_dim, depths, window, patch, channels, classes):
    """Multiply-adds of one image: projections, window attention, MLPs, merges, head."""
    side = image // patch
    total = side * side * patch * patch * channels * embed_dim
    dim = embed_dim
    for stage, depth in enumerate(depths):
        if stage:
            side //= 2
            total += side * side * 4 * dim * 2 * dim
            dim *= 2
        tokens, size = side * side, min(window, side)
        # qkv 3C^2, projection C^2, MLP 8C^2 per token; QK^T and AV: M^2 C each per token.
        total += depth * (tokens * 12 * dim * dim + 2 * tokens * size * size * dim)
    return total + dim * classes


def test_swin_tiny_224_has_the_papers_shape_and_size():
    model = swin_transformer_from_preset("swin_tiny_224")
    expected = swin_parameters(96, (2, 2, 6, 2), (3, 6, 12, 24), 7, 4, 3, 1000)
    assert model.count_params() == expected
    assert abs(expected - 28.3e6) < 0.05e6  # "28M" in Table 1; 28,288,354 in the paper's code
    assert model.output_shape == (None, 1000)
    assert [block.map_size for block in model.encoder_blocks][::2] == [
        (56, 56),
        (28, 28),
        (14, 14),
        (14, 14),
        (14, 14),
        (7, 7),
    ]


def test_swin_tiny_224_costs_about_4_5_gflops():
    # The paper counts a multiply-add as one FLOP: Swin-T is 4.5G.
    flops = swin_multiply_adds(224, 96, (2, 2, 6, 2), 7, 4, 3, 1000)
    assert abs(flops - 4.5e9) / 4.5e9 < 0.1, flops


def test_presets():
    assert sorted(SWIN_PRESETS) == ["swin_glyphs_32", "swin_tiny_224"]
    swin_transformer_preset("swin_glyphs_32")["depths"] = (9,)  # a copy
    assert SWIN_PRESETS["swin_glyphs_32"]["depths"] == (2, 2)
    with pytest.raises(ValueError, match="preset"):
        swin_transformer_preset("swin_huge")
    assert ka.models.SwinTransformer is SwinTransformer
    # The small size keeps each patch's ink (enlarged pixel-art images) and adds a position
    # embedding, which keeps it through the first pre-norm; Swin-T is the paper's.
    assert SWIN_PRESETS["swin_glyphs_32"]["normalize_patches"] is False
    assert SWIN_PRESETS["swin_glyphs_32"]["absolute_position_embedding"] is True
    assert "normalize_patches" not in SWIN_PRESETS["swin_tiny_224"]
    assert "absolute_position_embedding" not in SWIN_PRESETS["swin_tiny_224"]


def _first_tokens(model, levels):
    """The tokens entering the first block for images of one grey level each: `(L, D)`."""
    images = np.stack([np.full((40, 24, 3), 255.0 * level, "float32") for level in levels])
    x = model.patch_embedding(model._pixels(images, False))
    if model.patch_norm is not None:
        x = model.patch_norm(x)
    return np.asarray(x)[:, 0, 0]


def test_normalized_patches_of_one_grey_level_keep_only_its_side_of_mid_grey():
    levels = [0.0, 0.1, 0.2, 0.3, 0.7, 0.8, 1.0]
    normalized = _first_tokens(SwinTransformer(**SMALL), levels)  # fresh: zero biases
    for side in (normalized[:4], normalized[4:]):  # below and above mid-grey
        np.testing.assert_allclose(side, side[[0]].repeat(len(side), 0), atol=1e-3)
    plain = _first_tokens(SwinTransformer(**SMALL, normalize_patches=False), levels)
    gaps = np.linalg.norm(np.diff(plain, axis=0), axis=-1)
    assert np.all(gaps > 1e-2), gaps


def test_without_patch_normalization_there_are_no_patch_norm_weights(tmp_path):
    model = _randomized(SwinTransformer(**SMALL, normalize_patches=False))
    assert model.patch_norm is None and model.normalize_patches is False
    assert not any("patch_norm" in v.path for v in model.weights)
    full = SwinTransformer(**SMALL)
    assert model.count_params() == full.count_params() - 2 * SMALL["embed_dim"]
    path = tmp_path / "plain.keras"
    model.save(path)
    restored = keras.saving.load_model(path)
    assert restored.normalize_patches is False
    images = RNG.uniform(0, 255, (2, 40, 24, 3)).astype("float32")
    np.testing.assert_allclose(np.asarray(restored(images)), np.asarray(model(images)), atol=1e-5)


def _layer_norm(x, gamma, beta, epsilon):
    """NumPy LayerNorm over the last axis."""
    mean = x.mean(-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + epsilon) * gamma + beta


def _first_block_queries_input(model, levels):
    """NumPy: what the first block's attention sees at patch (0, 0) for one grey level each.

    The patch projection of a one-level patch is `level * sum(w) + b` (in [-1, 1] pixels),
    plus the position table's first row with `absolute_position_embedding`, then the block's
    pre-norm LayerNorm: `(L, D)`.
    """
    kernel = np.asarray(model.patch_embedding.weights[0])  # (p, p, C, D) or (p*p*C, D)
    bias = np.asarray(model.patch_embedding.weights[1])
    pixels = 2.0 * np.asarray(levels, "float32") - 1.0  # "symmetric" rescaling
    tokens = pixels[:, None] * kernel.reshape(-1, kernel.shape[-1]).sum(0) + bias  # (L, D)
    if model.position_embedding is not None:
        tokens = tokens + np.asarray(model.position_embedding.grid_embeddings)[0, 0]
    norm = model.encoder_blocks[0].attention_norm
    return _layer_norm(tokens, np.asarray(norm.gamma), np.asarray(norm.beta), norm.epsilon)


def test_first_block_sees_grey_levels_only_with_a_position_embedding():
    levels = [0.0, 0.1, 0.2, 0.3, 0.7, 0.8, 1.0]
    images = np.stack([np.full((40, 24, 3), 255.0 * level, "float32") for level in levels])
    for embedded in (False, True):
        model = SwinTransformer(
            **SMALL, normalize_patches=False, absolute_position_embedding=embedded
        )
        seen = _first_block_queries_input(model, levels)
        x = model.patch_embedding(model._pixels(images, False))
        if embedded:
            x = model.position_embedding(x)
        ours = np.asarray(model.encoder_blocks[0].attention_norm(x))[:, 0, 0]
        np.testing.assert_allclose(ours, seen, atol=1e-4)
        gaps = np.linalg.norm(np.diff(seen, axis=0), axis=-1)
        if embedded:
            assert np.all(gaps > 1e-2), gaps
        else:  # fresh zero biases: the pre-norm keeps only the side of mid-grey
            assert np.all(gaps[[0, 1, 2, 4, 5]] < 1e-3), gaps


def test_absolute_position_embedding_weights_config_and_round_trip(tmp_path):
    model = _randomized(SwinTransformer(**SMALL, absolute_position_embedding=True))
    table = model.position_embedding.grid_embeddings
    assert tuple(table.shape) == (10, 6, SMALL["embed_dim"])  # 40 x 24 pixels, 4-pixel patches
    assert model.count_params() == SwinTransformer(**SMALL).count_params() + 10 * 6 * 8
    assert any(v is table for v in model.no_decay_variables())
    assert SwinTransformer(**SMALL).position_embedding is None
    assert not any("position_embedding" in v.path for v in SwinTransformer(**SMALL).weights)
    images = RNG.uniform(0, 255, (2, 40, 24, 3)).astype("float32")
    path = tmp_path / "ape.keras"
    model.save(path)
    restored = keras.saving.load_model(path)
    assert restored.absolute_position_embedding is True
    np.testing.assert_allclose(np.asarray(restored(images)), np.asarray(model(images)), atol=1e-5)
    # The table moves the logits: the same model without it answers otherwise.
    table.assign(np.zeros(table.shape, "float32"))
    assert not np.allclose(np.asarray(model(images)), np.asarray(restored(images)), atol=1e-4)


def _randomized(model):
    for variable in model.weights:
        variable.assign(RNG.normal(size=variable.shape).astype("float32") * 0.1)
    return model


def test_classifies_images_of_any_size_and_draws_attention_through_its_methods():
    model = _randomized(SwinTransformer(**SMALL))
    images = RNG.uniform(0, 255, (3, 50, 30, 3)).astype("float32")
    labels, probabilities, maps = model.classify(images, batch_size=2, return_attention=True)
    assert set(labels) <= {"a", "b", "c"} and probabilities.shape == (3, 3)
    np.testing.assert_allclose(probabilities.sum(-1), 1.0, rtol=1e-5)
    logits = np.asarray(model(images))
    np.testing.assert_array_equal(labels, np.array(["a", "b", "c"])[logits.argmax(-1)])
    # Map 10 x 6 in 4 x 4 windows (padded to 12 x 8), then 5 x 3 in one 3-wide window.
    assert [m.shape for m in maps] == [(3, 6, 2, 16, 16)] * 2 + [(3, 2, 4, 9, 9)] * 2
    layouts = model.window_layouts
    assert [size for size, _ in layouts] == [(10, 6)] * 2 + [(5, 3)] * 2
    for block_maps, (size, positions) in zip(maps, layouts):
        real = positions >= 0  # (windows, M^2)
        assert sorted(positions[real]) == list(range(size[0] * size[1]))
        for window, window_real in enumerate(real):
            weights = block_maps[:, window]  # (B, heads, M^2, M^2)
            # Real queries' weights sum to 1 and never fall on padding.
            np.testing.assert_allclose(weights[:, :, window_real].sum(-1), 1.0, rtol=1e-5)
            assert np.all(weights[:, :, :, ~window_real] == 0)
        assert (~real).any()  # both stages pad


def test_no_decay_variables_are_biases_norms_and_bias_tables():
    model = SwinTransformer(**SMALL)
    names = {v.path.split("/")[-1] for v in model.no_decay_variables()}
    assert names == {"bias", "gamma", "beta", "relative_position_bias"}
    tables = [v for v in model.no_decay_variables() if v.path.endswith("relative_position_bias")]
    assert len(tables) == 4
    assert not any(v.path.endswith("kernel") for v in model.no_decay_variables())


def test_keras_file_round_trip(tmp_path):
    model = _randomized(SwinTransformer(**SMALL, augmentation=[keras.layers.RandomFlip()]))
    images = RNG.uniform(0, 255, (2, 40, 24, 3)).astype("float32")
    path = tmp_path / "swin.keras"
    model.save(path)
    restored = keras.saving.load_model(path)
    assert isinstance(restored, SwinTransformer) and restored.class_names == ["a", "b", "c"]
    np.testing.assert_allclose(np.asarray(restored(images)), np.asarray(model(images)), atol=1e-5)
    # Equal as JSON writes them (tuples and lists alike).
    assert json.dumps(restored.get_config()) == json.dumps(model.get_config())


def test_export_serves_probabilities_and_labels(tmp_path):
    model = _randomized(SwinTransformer(**SMALL))
    path = export_image_classifier(model, tmp_path / "served")
    serve = tf.saved_model.load(path).signatures["serving_default"]
    images = RNG.uniform(0, 255, (2, 33, 17, 3)).astype("float32")
    result = serve(images=tf.constant(images))
    assert sorted(result) == ["labels", "probabilities"]
    expected = keras.ops.softmax(model(images)).numpy()
    np.testing.assert_allclose(result["probabilities"].numpy(), expected, rtol=1e-4, atol=1e-5)
    assert [label.decode() for label in result["labels"].numpy()] == list(model.classify(images))


@pytest.mark.parametrize(
    "change,argument",
    [
        ({"depths": (2, 2, 2)}, "depths"),
        ({"num_heads": (3, 4)}, "num_heads"),
        ({"depths": ()}, "depths"),
        ({"image_size": 30}, "image_size"),
        ({"window_size": 0}, "window_size"),
        ({"mlp_ratio": -1}, "mlp_ratio"),
        ({"normalize_patches": 1}, "normalize_patches"),
        ({"absolute_position_embedding": "yes"}, "absolute_position_embedding"),
        ({"stochastic_depth_rate": 1.0}, "stochastic_depth_rate"),
        ({"rescaling": "none"}, "rescaling"),
        ({"class_names": ["a"]}, "class_names"),
    ],
)
def test_bad_arguments_name_themselves(change, argument):
    with pytest.raises(ValueError, match=argument):
        SwinTransformer(**{**SMALL, **change})
