"""The ViT captioner: patches through Transformer encoder blocks, the Transformer captioner's decoder."""

import keras
import numpy as np
import pytest
import tensorflow as tf
from full_pass_greedy import greedy_by_full_passes
from model_checks import assert_keras_file_round_trip
from model_checks import fit_with_xla

from keras_attention.generation.greedy_search import greedy_search
from keras_attention.layers.position.alibi_bias_2d import AlibiBias2D
from keras_attention.layers.position.sinusoidal_position_encoding_2d import sinusoidal_table_2d
from keras_attention.models.captioning.vit_captioner import ViTCaptioner
from keras_attention.models.captioning.vit_captioner import default_patch_size
from keras_attention.models.captioning.vit_captioner import vit_captioner
from keras_attention.serving.captioning_export import export_captioner

RNG = np.random.default_rng(0)
VOCABULARY = ["[PAD]", "[UNK]", "[START]", "[END]", "a", "red", "blue", "circle", "square"]
START, END, MAX_LENGTH = 2, 3, 6
SIZES = dict(
    vocabulary_size=len(VOCABULARY),
    max_caption_length=MAX_LENGTH,
    hidden_dim=16,
    num_layers=2,
    num_heads=2,
    intermediate_dim=16,
    encoder_layers=1,
    dropout=0.0,
)
# 16 x 24 images in 4-pixel patches: a 4 x 6 grid.
IMAGES = RNG.uniform(0, 255, (3, 16, 24, 3)).astype("float32")
PREFIX = np.array([[START, 4, 5, 6, 7], [START, 8, 4, 0, 0], [START, 6, 6, 5, 4]])


def _model(**overrides):
    model = vit_captioner(**{**SIZES, "image_size": (16, 24), "patch_size": 4, **overrides})
    # Larger logits, so that captions differ between images and END comes up.
    kernel, bias = model.logits_layer.get_weights()
    bias[END] = 0.5
    model.logits_layer.set_weights([kernel * 6.0, bias])
    return model


def test_patch_tokens_are_the_normalised_projected_patches_plus_sinusoids():
    model = _model(encoder_layers=0)
    tokens = np.asarray(model.image_encoder(IMAGES))  # (B, 24, 16)
    assert tokens.shape == (3, 4 * 6, 16)
    (projection,) = [w for w in model.image_encoder.weights if "kernel" in w.path]
    (bias,) = [w for w in model.image_encoder.weights if w.path.endswith("projection/bias")]
    kernel = np.asarray(projection).reshape(4 * 4 * 3, 16)  # (p, p, C, D) -> (p * p * C, D)
    # Patch (i, j) of the image scaled to [0, 1], flattened in (row, column, channel) order.
    patches = (IMAGES / 255.0).reshape(3, 4, 4, 6, 4, 3).transpose(0, 1, 3, 2, 4, 5)
    patches = patches.reshape(3, 4 * 6, 4 * 4 * 3)
    positions = np.asarray(sinusoidal_table_2d((4, 6), 16)).reshape(4 * 6, 16)

    def normalised(x):  # LayerNorm at its initial scale 1 and offset 0
        return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-6)

    # The projections are normalised before the positions are added, and once more after.
    expected = normalised(normalised(patches @ kernel + np.asarray(bias)) + positions)
    np.testing.assert_allclose(tokens, expected, atol=1e-4)


def test_convolutional_stem_token_sees_its_patch_and_three_pixels_around():
    # Two 4x4 stride-2 convolutions with "same" padding (one pixel before, one after):
    # a first-layer output r reads pixels 2r - 1 .. 2r + 2, a second-layer output i reads
    # first-layer outputs 2i - 1 .. 2i + 2, so pixels 4i - 3 .. 4i + 6: its 4-pixel patch
    # 4i .. 4i + 3 and 3 pixels on each side.
    model = _model(patch_stem="convolutional", encoder_layers=0)
    stem = model.image_encoder.get_layer("patch_embedding")
    assert [layer.name for layer in stem.layers if "conv" in layer.name] == [
        "stem_conv_0",
        "stem_conv_1",
    ]
    images = RNG.uniform(0, 255, (1, 16, 24, 3)).astype("float32")
    base = np.asarray(stem(images / 255.0))  # (1, 4, 6, 16)
    assert base.shape == (1, 4, 6, 16)
    reached = np.zeros((16, 4), bool)  # pixel row -> token rows it changes
    for row in range(16):
        changed = images.copy()
        changed[0, row, 9] += 60.0
        delta = np.abs(np.asarray(stem(changed / 255.0)) - base).max(axis=(0, 2, 3))  # (4,)
        reached[row] = delta > 1e-6
    expected = np.array([[4 * i - 3 <= row <= 4 * i + 6 for i in range(4)] for row in range(16)])
    np.testing.assert_array_equal(reached, expected)


@pytest.mark.parametrize(
    "options",
    [
        dict(positions="sinusoidal"),
        dict(positions="learned", num_key_value_heads=1),
        dict(patch_stem="convolutional"),
    ],
)
def test_cached_greedy_search_equals_full_passes_over_the_patch_grid(options):
    model = _model(**options)
    tokens, attention = greedy_search(model, IMAGES, START, END, MAX_LENGTH, jit_compile=False)
    tokens, attention = np.asarray(tokens), np.asarray(attention)
    expected = greedy_by_full_passes(model, {"image": IMAGES}, "caption", START, END, MAX_LENGTH)
    np.testing.assert_array_equal(tokens, expected)
    assert attention.shape == (3, MAX_LENGTH, 4, 6)  # (B, T, h, w) of the patch grid
    live = tokens != 0
    np.testing.assert_allclose(attention.sum(axis=(2, 3))[live], 1.0, atol=1e-5)
    # The cached steps' attention is the teacher-forced one on the same prefix.
    state = model.encode(IMAGES)
    cache = model.initial_cache(state, 3, MAX_LENGTH)
    logits, attention = [], []
    for index in range(PREFIX.shape[1]):
        step_logits, cache, step_attention = model.step(PREFIX[:, index], index, cache, state)
        logits.append(np.asarray(step_logits))
        attention.append(np.asarray(step_attention))
    full_logits, full_attention = model.caption_attention({"image": IMAGES, "caption": PREFIX})
    real = PREFIX != 0
    np.testing.assert_allclose(np.stack(logits, 1)[real], np.asarray(full_logits)[real], atol=1e-4)
    np.testing.assert_allclose(
        np.stack(attention, 1)[real], np.asarray(full_attention)[real], atol=1e-5
    )


@pytest.mark.parametrize("patch_stem", ["linear", "convolutional"])
def test_keras_file_round_trip_gives_the_same_captions(tmp_path, patch_stem):
    model = _model(positions="learned", dropout=0.2, patch_stem=patch_stem)
    inputs = {"image": IMAGES, "caption": PREFIX}
    restored = assert_keras_file_round_trip(model, inputs, tmp_path, ViTCaptioner)
    assert (restored.patch_size, restored.grid_size, restored.image_shape) == (4, (4, 6), (16, 24))
    captions, attention, _ = model.caption(
        IMAGES, VOCABULARY, return_attention=True, decode_batch_size=3
    )
    again, restored_attention, _ = restored.caption(
        IMAGES, VOCABULARY, return_attention=True, decode_batch_size=3
    )
    assert again == captions
    np.testing.assert_allclose(restored_attention, attention, atol=1e-5)


@pytest.mark.parametrize("patch_stem", ["linear", "convolutional"])
def test_trains_with_xla(patch_stem):
    sizes = {**SIZES, "image_size": 8, "patch_size": 4, "hidden_dim": 8}
    model = vit_captioner(**sizes, patch_stem=patch_stem)
    images = RNG.uniform(0, 255, (8, 8, 8, 3)).astype("float32")
    captions = np.tile([[2, 4, 5, 6, 3]], (8, 1))
    x = {"image": images, "caption": captions[:, :-1]}
    losses = fit_with_xla(model, x, captions[:, 1:], 0.02, epochs=12, batch_size=8)["loss"]
    assert np.all(np.isfinite(losses)) and losses[-1] < 0.5 * losses[0]


@pytest.mark.parametrize(
    "image_size, grid, patch_stem",
    [((32, 96), (8, 24), "linear"), ((80, 60), (20, 15), "convolutional")],
)
def test_non_square_images_keep_their_grid_into_the_export(tmp_path, image_size, grid, patch_stem):
    model = _model(image_size=image_size, encoder_layers=1, num_layers=1, patch_stem=patch_stem)
    assert (model.image_shape, model.grid_size) == (image_size, grid)
    images = RNG.uniform(0, 255, (2, 50, 40, 3)).astype("float32")  # resized inside
    path = export_captioner(model, tmp_path / "served", VOCABULARY, 5, decode_batch_size=2)
    serve = tf.saved_model.load(str(path)).signatures["serving_default"]
    outputs = serve(images=tf.constant(images))
    assert outputs["attention"].shape == (2, 5, *grid)
    served = [text.decode("utf-8") for text in outputs["caption"].numpy()]
    captions, attention, words = model.caption(
        images, VOCABULARY, max_length=5, return_attention=True, decode_batch_size=2
    )
    assert served == captions and attention.shape == (2, 5, *grid)
    assert len(words) == 2


def test_default_patch_size_keeps_the_grid_affordable():
    assert [default_patch_size(size) for size in (48, (64, 96), (80, 60), 224, 512)] == [
        4,
        4,
        4,
        16,
        32,
    ]
    assert vit_captioner(**SIZES, image_size=(40, 128)).grid_size == (5, 16)  # 8-pixel patches
    with pytest.raises(ValueError, match=r"pass `patch_size`. Received: image_size=\(36, 100\)"):
        default_patch_size((36, 100))


@pytest.mark.parametrize(
    "overrides, message",
    [
        (
            dict(image_size=(16, 30)),
            r"`image_size` must be a multiple of `patch_size` .* "
            r"Received: image_size=\(16, 30\), patch_size=4",
        ),
        (dict(patch_size=0), r"`patch_size` must be a positive integer. Received: patch_size=0"),
        (dict(positions="rotary"), r"`positions` must be one of .* positions='rotary'"),
        (dict(hidden_dim=18), r"multiple of 4 with sinusoidal 2D positions. .*hidden_dim=18"),
        (dict(num_heads=3), r"`hidden_dim` must be a multiple of `num_heads`"),
        (dict(encoder_layers=0.5), r"`encoder_layers` must be an integer >= 0"),
        (dict(alibi_2d="yes"), r"`alibi_2d` must be True or False. Received: alibi_2d='yes'"),
        (dict(image_size=4), r"`image_size` must be an integer >= 8"),
        (
            dict(patch_stem="resnet"),
            r"`patch_stem` must be one of \('linear', 'convolutional'\). "
            r"Received: patch_stem='resnet'",
        ),
        (
            dict(patch_stem="convolutional", image_size=(12, 24), patch_size=6),
            r"`patch_size` must be a power of 2 .* convolutional patch stem. "
            r"Received: patch_size=6",
        ),
    ],
)
def test_bad_arguments_name_themselves(overrides, message):
    with pytest.raises(ValueError, match=message):
        vit_captioner(**{**SIZES, "image_size": 16, "patch_size": 4, **overrides})


def test_bad_images_are_refused():
    with pytest.raises(ValueError, match=r"name 'image' .* found shape=\(2, 16, 24, 4\)"):
        _model()({"image": np.zeros((2, 16, 24, 4), "float32"), "caption": PREFIX[:2]})


def test_summary_and_config():
    model = _model(encoder_layers=2)
    config = model.get_config()
    assert (
        config["patch_size"],
        config["encoder_layers"],
        config["positions"],
        config["alibi_2d"],
        config["patch_stem"],
    ) == (4, 2, "sinusoidal", True, "linear")
    names = [layer.name for layer in model.image_encoder.layers]
    assert names[1:5] == ["image_resizing", "preprocessing", "patch_embedding", "patch_norm"]
    assert [name for name in names if "encoder_block" in name] == [
        "encoder_block_0",
        "encoder_block_1",
    ]
    assert ViTCaptioner.from_config(config).count_params() == model.count_params()
    assert keras.saving.get_registered_name(ViTCaptioner) == "keras_attention>ViTCaptioner"


@pytest.mark.parametrize("alibi_2d", [True, False])
def test_encoder_blocks_see_the_2d_alibi_bias_of_the_patch_grid(alibi_2d):
    # The image tokens are the last block's output on the block input with the bias of
    # AlibiBias2D over the 4 x 6 grid (or none): run the block by hand on its input.
    model = _model(encoder_layers=1, alibi_2d=alibi_2d)
    encoder = model.image_encoder
    block = encoder.get_layer("encoder_block_0")
    before_blocks = keras.Model(encoder.input, encoder.get_layer("image_token_dropout").output)
    tokens = before_blocks(IMAGES)  # (3, 24, 16)
    bias = AlibiBias2D((4, 6)).bias(2) if alibi_2d else None
    expected = encoder.get_layer("encoder_norm")(block(tokens, attention_bias=bias))
    np.testing.assert_allclose(np.asarray(encoder(IMAGES)), np.asarray(expected), atol=1e-5)
    unbiased = encoder.get_layer("encoder_norm")(block(tokens))
    assert np.allclose(np.asarray(encoder(IMAGES)), np.asarray(unbiased)) != alibi_2d
