"""Vision Transformer builder, presets, attention maps and weight transfer."""

import doctest
import importlib
import math

import keras
import numpy as np
import pytest
import tensorflow as tf
from layer_harness import LayerSpec
from layer_harness import harness_test

from keras_attention.models.image_classification import vit_sizes
from keras_attention.models.image_classification.vision_transformer import get_attention_scores
from keras_attention.models.image_classification.vision_transformer import vision_transformer
from keras_attention.models.image_classification.vision_transformer import (
    vision_transformer_from_preset,
)
from keras_attention.models.image_classification.vision_transformer import (
    vision_transformer_no_decay_variables,
)
from keras_attention.models.image_classification.vision_transformer import (
    vision_transformer_token_layout,
)
from keras_attention.models.image_classification.vit_image_preprocessing import ResizeToModelSize
from keras_attention.models.image_classification.vit_image_preprocessing import TrainingAugmentation
from keras_attention.models.image_classification.vit_sizes import vision_transformer_preset
from keras_attention.models.image_classification.vit_weight_transfer import (
    copy_vision_transformer_weights,
)

TINY = dict(
    image_size=8, patch_size=4, num_classes=3, hidden_dim=8, num_layers=2, num_heads=2, mlp_dim=16
)
EPSILON = 1e-6
# `keras_attention.models.image_classification.vision_transformer` is also the builder's name.
vit_module = importlib.import_module(
    "keras_attention.models.image_classification.vision_transformer"
)


def _images(batch, height, width, seed=0):
    return np.random.default_rng(seed).uniform(0, 255, (batch, height, width, 3)).astype("float32")


def _randomize(model, seed=0):
    """Random values for every weight (the head starts at zero otherwise)."""
    rng = np.random.default_rng(seed)
    model.set_weights([rng.normal(0, 0.3, w.shape).astype("float32") for w in model.get_weights()])
    return model


# ---------------------------------------------------------------- NumPy reference of the paper


def _layer_norm(x, gamma, beta):
    mean = x.mean(-1, keepdims=True)
    variance = x.var(-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + EPSILON) * gamma + beta


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _gelu(x):
    return 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


def _numpy_vit(weights, images, patch_size, num_layers, pooling="token"):
    """Dosovitskiy et al. 2021, eqs. 1-4, for images already at image_size.

    Returns the logits and each layer's attention (B, heads, T, T).
    """
    x = images / 127.5 - 1.0
    batch, height, width, channels = x.shape
    rows, cols = height // patch_size, width // patch_size
    # Row-major patches, each flattened (p, p, C) like the conv kernel.
    patches = x.reshape(batch, rows, patch_size, cols, patch_size, channels)
    patches = patches.transpose(0, 1, 3, 2, 4, 5).reshape(batch, rows * cols, -1)  # (B, N, p*p*C)
    kernel = weights["patch_embedding/projection/kernel"]  # (p, p, C, D), same order as a patch
    tokens = patches @ kernel.reshape(patch_size * patch_size * channels, -1)
    tokens = tokens + weights["patch_embedding/projection/bias"]  # (B, N, D)
    grid = weights["position_embedding/grid_embeddings"].reshape(rows * cols, -1)
    if pooling == "token":
        cls = np.broadcast_to(weights["class_token/token"], (batch, 1, tokens.shape[-1]))
        tokens = np.concatenate([cls, tokens], axis=1)
        grid = np.concatenate([weights["position_embedding/prefix_embeddings"], grid], axis=0)
    z = tokens + grid
    attention_maps = []
    for layer in range(num_layers):
        w = {
            k.split("/", 1)[1]: v
            for k, v in weights.items()
            if k.startswith(f"encoder_block_{layer}/")
        }
        h = _layer_norm(
            z, w["self_attention_layer_norm/gamma"], w["self_attention_layer_norm/beta"]
        )
        q = (
            np.einsum("btd,dhk->bthk", h, w["self_attention_layer/query/kernel"])
            + w["self_attention_layer/query/bias"]
        )
        k = (
            np.einsum("btd,dhk->bthk", h, w["self_attention_layer/key/kernel"])
            + w["self_attention_layer/key/bias"]
        )
        v = (
            np.einsum("btd,dhk->bthk", h, w["self_attention_layer/value/kernel"])
            + w["self_attention_layer/value/bias"]
        )
        attention = _softmax(
            np.einsum("bqhk,bshk->bhqs", q, k) / np.sqrt(q.shape[-1])
        )  # (B, H, T, T)
        attention_maps.append(attention)
        heads = np.einsum("bhqs,bshk->bqhk", attention, v)
        z = (
            z
            + np.einsum("bqhk,hkd->bqd", heads, w["self_attention_layer/attention_output/kernel"])
            + w["self_attention_layer/attention_output/bias"]
        )
        h = _layer_norm(z, w["feedforward_layer_norm/gamma"], w["feedforward_layer_norm/beta"])
        h = _gelu(
            h @ w["feedforward_intermediate_dense/kernel"]
            + w["feedforward_intermediate_dense/bias"]
        )
        z = z + h @ w["feedforward_output_dense/kernel"] + w["feedforward_output_dense/bias"]
    z = _layer_norm(z, weights["final_norm/gamma"], weights["final_norm/beta"])
    pooled = z[:, 0] if pooling == "token" else z.mean(axis=1)
    logits = pooled @ weights["head/kernel"] + weights["head/bias"]
    return logits, attention_maps


def _weights_by_path(model):
    return {w.path: np.asarray(w.numpy(), dtype="float64") for w in model.weights}


# ---------------------------------------------------------------- parameter counts


def _paper_parameter_count(image_size, patch_size, hidden_dim, num_layers, mlp_dim, num_classes):
    """Counted by hand from the architecture (class token pooling, 3 channels)."""
    d, tokens = hidden_dim, (image_size // patch_size) ** 2 + 1
    patch_projection = patch_size * patch_size * 3 * d + d
    block = 2 * (2 * d) + 4 * (d * d + d) + (d * mlp_dim + mlp_dim) + (mlp_dim * d + d)
    return (
        patch_projection
        + d
        + tokens * d
        + num_layers * block
        + 2 * d
        + d * num_classes
        + num_classes
    )


@pytest.mark.parametrize(
    "preset, published_millions",
    [("B/16", 86.6), ("S/16", 22.1), ("Ti/16", 5.7)],  # ViT Table 1; DeiT Table 1 (22M, 5.7M)
)
def test_preset_parameter_count_matches_papers(preset, published_millions):
    model = vision_transformer_from_preset(preset, image_size=224, num_classes=1000)
    arch = vision_transformer_preset(preset)
    expected = _paper_parameter_count(
        224, arch["patch_size"], arch["hidden_dim"], arch["num_layers"], arch["mlp_dim"], 1000
    )
    assert model.count_params() == expected
    assert round(model.count_params() / 1e6, 1) == published_millions


def test_preset_table_holds_paper_sizes():
    assert vision_transformer_preset("B/16") == dict(
        patch_size=16, hidden_dim=768, num_layers=12, num_heads=12, mlp_dim=3072
    )
    assert vision_transformer_preset("L/32") == dict(
        patch_size=32, hidden_dim=1024, num_layers=24, num_heads=16, mlp_dim=4096
    )
    assert vision_transformer_preset("Ti/8") == dict(
        patch_size=8, hidden_dim=192, num_layers=12, num_heads=3, mlp_dim=768
    )
    assert vision_transformer_preset("S/16")["hidden_dim"] == 384
    for size in ("Ti", "S", "B", "L"):
        for patch in (8, 16, 32):
            assert f"{size}/{patch}" in vit_sizes.VIT_PRESETS


def test_unknown_preset_lists_presets():
    with pytest.raises(
        ValueError, match=r"`preset` must be one of .*'B/16'.*Received: preset='X/16'"
    ):
        vision_transformer_from_preset("X/16")


def test_preset_overrides():
    model = vision_transformer_from_preset(
        "Ti/16", image_size=32, num_classes=4, patch_size=8, num_layers=1, pooling="gap"
    )
    assert vision_transformer_token_layout(model) == ((4, 4), False)
    assert model.output_shape == (None, 4)


# ---------------------------------------------------------------- forward pass


@pytest.mark.parametrize("pooling", ["token", "gap"])
def test_forward_matches_numpy_reference(pooling):
    model = _randomize(vision_transformer(**TINY, pooling=pooling))
    images = _images(2, 8, 8)
    logits = np.asarray(model(images))
    expected, expected_maps = _numpy_vit(
        _weights_by_path(model), images.astype("float64"), 4, 2, pooling
    )
    assert logits.shape == (2, 3)
    np.testing.assert_allclose(logits, expected, rtol=1e-4, atol=1e-4)
    maps = get_attention_scores(model, images)
    tokens = 5 if pooling == "token" else 4
    assert [m.shape for m in maps] == [(2, 2, tokens, tokens)] * 2
    for got, want in zip(maps, expected_maps):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_symbolic_shapes_and_layout():
    model = vision_transformer(**TINY)
    assert model.input_shape == (None, None, None, 3)
    assert model.output_shape == (None, 3)
    assert vision_transformer_token_layout(model) == ((2, 2), True)
    logits, maps = model.forward(keras.Input((None, None, 3)), return_attention_scores=True)
    assert tuple(logits.shape) == (None, 3)
    assert [tuple(m.shape) for m in maps] == [(None, 2, 5, 5)] * 2


def test_model_keeps_its_name():
    assert vision_transformer(**TINY).name == "vision_transformer"
    assert vision_transformer(**TINY, name="glyph_vit").name == "glyph_vit"


def test_other_image_size_is_resized_inside():
    model = _randomize(vision_transformer(**TINY))
    images = _images(2, 8, 8)
    # Bilinear 2x downsampling with half-pixel centres averages each 2x2
    # block: of a pixel-repeated image it gives back the original.
    doubled = np.repeat(np.repeat(images, 2, axis=1), 2, axis=2)
    np.testing.assert_allclose(np.asarray(model(doubled)), np.asarray(model(images)), atol=1e-4)
    assert model(_images(3, 13, 21)).shape == (3, 3)


def test_non_square_image_size_gives_non_square_grid():
    model = _randomize(vision_transformer(**{**TINY, "image_size": (8, 12)}))
    assert vision_transformer_token_layout(model) == ((2, 3), True)
    assert tuple(model.get_layer("position_embedding").grid_embeddings.shape) == (2, 3, 8)
    images = _images(2, 8, 12)
    maps = get_attention_scores(model, images)
    assert [m.shape for m in maps] == [(2, 2, 7, 7)] * 2  # class token + 2 x 3 patches
    # The image is not squashed: a 2x larger image of the same aspect gives
    # the same logits (bilinear halving of a pixel-repeated image).
    doubled = np.repeat(np.repeat(images, 2, axis=1), 2, axis=2)
    np.testing.assert_allclose(np.asarray(model(doubled)), np.asarray(model(images)), atol=1e-4)
    # Rows of patches stay rows: swapping the image's axes is another input.
    tall = vision_transformer(**{**TINY, "image_size": (12, 8)})
    assert vision_transformer_token_layout(tall) == ((3, 2), True)


def _resize_ops(model, spec):
    graph = tf.function(lambda images: model(images)).get_concrete_function(spec).graph
    return [op.type for op in graph.get_operations() if op.type.startswith("Resize")]


def test_resize_skipped_at_native_size():
    model = vision_transformer(**{**TINY, "image_size": (8, 12)})
    assert _resize_ops(model, tf.TensorSpec((None, 8, 12, 3), tf.float32)) == []
    assert _resize_ops(model, tf.TensorSpec((None, 16, 12, 3), tf.float32)) == ["ResizeBilinear"]
    assert _resize_ops(model, tf.TensorSpec((None, None, None, 3), tf.float32)) == [
        "ResizeBilinear"
    ]
    # Skipping changes no number: a bilinear resize to the same size is the identity.
    images = _images(2, 8, 12)
    np.testing.assert_array_equal(np.asarray(ops_resize(images, (8, 12))), images)
    layer = ResizeToModelSize((8, 12))
    np.testing.assert_array_equal(np.asarray(layer(images)), images)
    assert tuple(layer(_images(1, 5, 7)).shape) == (1, 8, 12, 3)
    assert ResizeToModelSize.from_config(layer.get_config()).size == (8, 12)
    with pytest.raises(
        ValueError,
        match=r"`image_size` must be a positive integer or a \(height, width\) pair of them. Received: image_size=\(8, -1\)",
    ):
        ResizeToModelSize((8, -1))


def ops_resize(images, size):
    return keras.ops.image.resize(images, size, interpolation="bilinear")


@pytest.mark.parametrize("rescaling, low, high", [("symmetric", -1.0, 1.0), ("unit", 0.0, 1.0)])
def test_pixels_rescaled_inside(rescaling, low, high):
    model = vision_transformer(**TINY, rescaling=rescaling)
    rescaled = keras.Model(model.input, model.get_layer("rescale").output)
    images = np.stack([np.zeros((8, 8, 3)), np.full((8, 8, 3), 255.0)]).astype("float32")
    values = np.asarray(rescaled(images))
    np.testing.assert_allclose(values[0], low, atol=1e-6)
    np.testing.assert_allclose(values[1], high, atol=1e-6)


def test_wrong_channel_count_raises():
    model = vision_transformer(**TINY)
    with pytest.raises(ValueError, match="expected axis -1 of input shape to have value 3"):
        model(np.zeros((1, 8, 8, 1), "float32"))
    with pytest.raises(
        ValueError,
        match=r"'images' .* expected shape=\(None, None, None, 3\), found shape=\(None, None, None, 4\)",
    ):
        model(keras.Input((None, None, 4)))
    gray = vision_transformer(**TINY, channels=1)
    assert gray(np.zeros((1, 8, 8, 1), "float32")).shape == (1, 3)


def test_augmentation_only_while_training():
    flip = keras.layers.RandomFlip("vertical", seed=1)
    model = _randomize(vision_transformer(**TINY, augmentation=[flip]))
    images = _images(8, 8, 8)
    plain = np.asarray(model(images, training=False))
    np.testing.assert_array_equal(
        np.asarray(model(images)), plain
    )  # no training flag: no augmentation
    flipped = np.asarray(model(images[:, ::-1], training=False))
    trained = np.asarray(model(images, training=True))
    np.testing.assert_allclose(np.asarray(model.predict(images, verbose=0)), plain, atol=1e-5)
    # Each example is either left as is or flipped upside down.
    as_is = np.all(np.isclose(trained, plain, atol=1e-4), axis=-1)
    upside_down = np.all(np.isclose(trained, flipped, atol=1e-4), axis=-1)
    assert np.all(as_is | upside_down)


SPECS = [
    LayerSpec(
        "training_augmentation",
        TrainingAugmentation,
        {"augmentation": keras.layers.RandomFlip("vertical", seed=1)},
        inputs=[np.random.default_rng(0).uniform(0, 255, (2, 6, 6, 3)).astype("float32")],
        trainable=False,
    )
]


test_harness = harness_test(SPECS)


def test_training_augmentation_flips_only_in_training():
    layer = TrainingAugmentation([keras.layers.RandomFlip("vertical", seed=3)])
    images = _images(16, 4, 4)
    np.testing.assert_array_equal(np.asarray(layer(images, training=False)), images)
    augmented = np.asarray(layer(images, training=True))
    as_is = np.all(augmented == images, axis=(1, 2, 3))
    upside_down = np.all(np.isclose(augmented, images[:, ::-1]), axis=(1, 2, 3))
    assert np.all(as_is | upside_down) and np.any(upside_down) and np.any(as_is)


def test_stochastic_depth_grows_linearly_with_depth():
    model = vision_transformer(**{**TINY, "num_layers": 3}, stochastic_depth_rate=0.2)
    rates = [model.get_layer(f"encoder_block_{i}").stochastic_depth_rate for i in range(3)]
    np.testing.assert_allclose(rates, [0.0, 0.1, 0.2])


def test_no_decay_variables():
    model = vision_transformer(**TINY)
    excluded = {v.path for v in vision_transformer_no_decay_variables(model)}
    for variable in model.trainable_variables:
        is_kernel = variable.path.endswith("kernel")
        positional = variable.path.startswith(("position_embedding/", "class_token/"))
        assert (variable.path in excluded) == (positional or not is_kernel), variable.path
    assert "position_embedding/grid_embeddings" in excluded
    assert "encoder_block_0/self_attention_layer/query/bias" in excluded  # a (heads, key_dim) bias
    assert "head/kernel" not in excluded


def test_class_names_attribute_is_saved_and_classify_uses_it(tmp_path):
    model = _randomize(vision_transformer(**TINY, class_names=["a", "b", "c"]))
    assert model.class_names == ["a", "b", "c"]
    model.save(tmp_path / "named.keras")
    loaded = keras.saving.load_model(tmp_path / "named.keras")
    assert type(loaded).__name__ == "VisionTransformer" and loaded.class_names == ["a", "b", "c"]
    images = _images(5, 8, 8)
    logits = np.asarray(model(images))
    labels, probabilities, maps = loaded.classify(images, batch_size=2, return_attention=True)
    np.testing.assert_array_equal(labels, np.array(["a", "b", "c"])[logits.argmax(-1)])
    reference = np.exp(logits - logits.max(-1, keepdims=True))
    np.testing.assert_allclose(
        probabilities, reference / reference.sum(-1, keepdims=True), atol=1e-5
    )
    for got, want in zip(maps, get_attention_scores(model, images)):
        np.testing.assert_allclose(got, want, atol=1e-6)
    unnamed = vision_transformer(**TINY)
    np.testing.assert_array_equal(unnamed.classify(images), np.asarray(unnamed(images)).argmax(-1))


# ---------------------------------------------------------------- position interpolation


def _numpy_bilinear(table, rows, cols):
    """Half-pixel-centre bilinear resize of (r, c, E), edges clamped."""

    def weights(size_in, size_out):
        centres = np.clip((np.arange(size_out) + 0.5) * size_in / size_out - 0.5, 0, size_in - 1)
        lower = np.floor(centres).astype(int)
        upper = np.minimum(lower + 1, size_in - 1)
        matrix = np.zeros((size_out, size_in))
        matrix[np.arange(size_out), lower] += 1 - (centres - lower)
        matrix[np.arange(size_out), upper] += centres - lower
        return matrix

    return np.einsum(
        "hr,wc,rce->hwe", weights(table.shape[0], rows), weights(table.shape[1], cols), table
    )


def test_copy_weights_interpolates_positions():
    source = _randomize(vision_transformer(**{**TINY, "image_size": 12}))  # 3 x 3 grid
    target = vision_transformer(**{**TINY, "image_size": 20})  # 5 x 5 grid
    copy_vision_transformer_weights(source, target)
    old, new = _weights_by_path(source), _weights_by_path(target)
    for path, value in old.items():
        if path != "position_embedding/grid_embeddings":
            np.testing.assert_array_equal(new[path], value)
    np.testing.assert_allclose(
        new["position_embedding/grid_embeddings"],
        _numpy_bilinear(old["position_embedding/grid_embeddings"], 5, 5),
        rtol=1e-5,
        atol=1e-6,
    )
    logits = np.asarray(target(_images(2, 20, 20)))
    assert logits.shape == (2, 3) and np.all(np.isfinite(logits))


def test_copy_weights_same_size_reproduces_outputs():
    source = _randomize(vision_transformer(**TINY))
    target = copy_vision_transformer_weights(source, vision_transformer(**TINY))
    images = _images(2, 8, 8)
    np.testing.assert_array_equal(np.asarray(target(images)), np.asarray(source(images)))


def test_copy_weights_without_head():
    source = _randomize(vision_transformer(**TINY))
    target = vision_transformer(**{**TINY, "num_classes": 5})
    copy_vision_transformer_weights(source, target, include_head=False)
    np.testing.assert_array_equal(target.get_layer("head").kernel.numpy(), 0.0)
    np.testing.assert_array_equal(
        target.get_layer("final_norm").gamma.numpy(), source.get_layer("final_norm").gamma.numpy()
    )
    with pytest.raises(
        ValueError,
        match=r"Received: head with weight 'head/kernel'.*\(8, 3\) in `source` and \(8, 5\)",
    ):
        copy_vision_transformer_weights(source, target)


def test_copy_weights_rejects_other_architectures():
    source = vision_transformer(**TINY)
    with pytest.raises(ValueError, match=r"Received: class_token of `target` is missing"):
        copy_vision_transformer_weights(vision_transformer(**TINY, pooling="gap"), source)
    with pytest.raises(ValueError, match=r"`source` with 2 encoder blocks.*`target` with 1"):
        copy_vision_transformer_weights(source, vision_transformer(**{**TINY, "num_layers": 1}))
    with pytest.raises(
        ValueError, match=r"`source` must be a `VisionTransformer`.*Received: source="
    ):
        copy_vision_transformer_weights(keras.Sequential([keras.layers.Dense(2)]), source)


# ---------------------------------------------------------------- training, precision, saving


def _compiled(model, **compile_kwargs):
    model.compile(
        optimizer=keras.optimizers.Adam(1e-2),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        **compile_kwargs,
    )
    return model


def test_fit_step_with_jit_compile():
    model = _compiled(
        vision_transformer(**{**TINY, "num_layers": 1}, stochastic_depth_rate=0.1, dropout=0.1),
        jit_compile=True,
    )
    assert model.jit_compile is True
    before = [w.copy() for w in model.get_weights()]
    # Two steps: the head starts at zero, so only the head learns in the first.
    history = model.fit(
        _images(4, 10, 10), np.array([0, 1, 2, 0]), batch_size=2, epochs=1, verbose=0
    )
    assert np.isfinite(history.history["loss"][0])
    changed = [not np.array_equal(a, b) for a, b in zip(before, model.get_weights())]
    assert all(changed)


def test_mixed_bfloat16_forward():
    reference = _randomize(vision_transformer(**TINY))
    keras.config.set_dtype_policy("mixed_bfloat16")
    model = vision_transformer(**TINY)
    model.set_weights(reference.get_weights())
    images = _images(2, 8, 8)
    logits = model(images)
    assert all(w.dtype == "float32" for w in model.weights)
    assert logits.dtype == "float32"
    assert np.all(np.isfinite(np.asarray(logits)))
    np.testing.assert_allclose(
        np.asarray(logits), np.asarray(reference(images)), atol=0.3, rtol=0.1
    )
    maps = get_attention_scores(model, images)
    assert all(np.all(np.isfinite(m)) for m in maps)


def test_mirrored_strategy_fit():
    # One reduction path for every MirroredStrategy of the test process: two
    # default (collective) strategies in one process trip over each other.
    strategy = tf.distribute.MirroredStrategy(
        ["/cpu:0", "/cpu:1"], cross_device_ops=tf.distribute.ReductionToOneDevice()
    )
    with strategy.scope():
        model = _compiled(vision_transformer(**TINY))
    history = model.fit(_images(4, 8, 8), np.array([0, 1, 2, 0]), batch_size=4, epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    assert not np.all(model.get_layer("head").kernel.numpy() == 0.0)


def test_keras_file_round_trip(tmp_path):
    model = _randomize(
        vision_transformer(**TINY, augmentation=[keras.layers.RandomFlip("vertical")])
    )
    path = tmp_path / "vit.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    images = _images(2, 11, 9)
    np.testing.assert_allclose(np.asarray(loaded(images)), np.asarray(model(images)), atol=1e-6)
    for got, want in zip(get_attention_scores(loaded, images), get_attention_scores(model, images)):
        np.testing.assert_allclose(got, want, atol=1e-6)
    assert vision_transformer_token_layout(loaded) == ((2, 2), True)
    wide = _randomize(vision_transformer(**{**TINY, "image_size": (8, 12)}))
    wide.save(tmp_path / "wide.keras")
    loaded = keras.saving.load_model(tmp_path / "wide.keras")
    np.testing.assert_allclose(np.asarray(loaded(images)), np.asarray(wide(images)), atol=1e-6)
    assert vision_transformer_token_layout(loaded) == ((2, 3), True)


# ---------------------------------------------------------------- argument errors


@pytest.mark.parametrize(
    "overrides, message",
    [
        (
            {"image_size": 10},
            r"`image_size` must be a multiple of `patch_size`. Received: image_size=10, patch_size=4",
        ),
        (
            {"image_size": 0},
            r"`image_size` must be a positive integer or a \(height, width\) pair of them. Received: image_size=0",
        ),
        (
            {"image_size": (8, 6)},
            r"`image_size` must be a multiple of `patch_size`. Received: image_size=\(8, 6\), patch_size=4",
        ),
        (
            {"image_size": (8, 0)},
            r"`image_size` must be a positive integer or a \(height, width\) pair of them. Received: image_size=\(8, 0\)",
        ),
        ({"patch_size": 2.5}, r"`patch_size` must be a positive integer. Received: patch_size=2.5"),
        (
            {"num_classes": -1},
            r"`num_classes` must be a positive integer. Received: num_classes=-1",
        ),
        ({"num_layers": 0}, r"`num_layers` must be a positive integer. Received: num_layers=0"),
        ({"channels": True}, r"`channels` must be a positive integer. Received: channels=True"),
        (
            {"num_heads": 3},
            r"`hidden_dim` must be a multiple of `num_heads`. Received: hidden_dim=8, num_heads=3",
        ),
        ({"dropout": 1.0}, r"`dropout` must be a float in \[0, 1\). Received: dropout=1.0"),
        (
            {"stochastic_depth_rate": -0.1},
            r"`stochastic_depth_rate` must be a float in \[0, 1\). Received: stochastic_depth_rate=-0.1",
        ),
        (
            {"pooling": "max"},
            r"`pooling` must be one of \('token', 'gap'\). Received: pooling='max'",
        ),
        (
            {"rescaling": "imagenet"},
            r"`rescaling` must be one of \('symmetric', 'unit'\) or a dict of per-channel 'mean' and 'std' .*Received: rescaling='imagenet'",
        ),
        (
            {"class_names": ["a"]},
            r"one name per class .* Received: len\(class_names\)=1, num_classes=3",
        ),
        (
            {"augmentation": ["flip"]},
            r"`augmentation` must be a list of Keras layers .* Received: augmentation containing 'flip'",
        ),
    ],
)
def test_bad_arguments(overrides, message):
    with pytest.raises(ValueError, match=message):
        vision_transformer(**{**TINY, **overrides})


def test_builder_is_keyword_only():
    with pytest.raises(TypeError):
        vision_transformer(8, 4, 3, 8, 1, 2, 8)


def test_attention_scores_bad_arguments():
    model = vision_transformer(**TINY)
    with pytest.raises(ValueError, match=r"at least one image. Received: images.shape=\(8, 8, 3\)"):
        get_attention_scores(model, np.zeros((8, 8, 3)))
    with pytest.raises(ValueError, match=r"Received: images.shape=\(0, 8, 8, 3\)"):
        get_attention_scores(model, np.zeros((0, 8, 8, 3)))
    with pytest.raises(
        ValueError, match=r"`batch_size` must be a positive integer. Received: batch_size=0"
    ):
        get_attention_scores(model, np.zeros((1, 8, 8, 3)), batch_size=0)


def test_attention_scores_in_batches():
    model = _randomize(vision_transformer(**TINY))
    images = _images(5, 8, 8)
    whole = get_attention_scores(model, images)
    for got, want in zip(get_attention_scores(model, images, batch_size=2), whole):
        np.testing.assert_allclose(got, want, atol=1e-6)


def test_attention_helpers_reject_other_models():
    other = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
    with pytest.raises(
        ValueError, match=r"`model` must be a `VisionTransformer`.*Received: model="
    ):
        get_attention_scores(other, np.zeros((1, 8, 8, 3)))
    with pytest.raises(ValueError, match=r"`model` must be a `VisionTransformer`"):
        vision_transformer_token_layout(other)


@pytest.mark.parametrize("module", [vit_module, vit_sizes])
def test_docstring_examples(module):
    results = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert results.attempted > 0
    assert results.failed == 0
