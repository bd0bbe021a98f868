import keras
import numpy as np
import pytest
from model_checks import assert_keras_file_round_trip
from model_checks import assert_summary_lists
from tiny_models import tiny_transformer_captioner

from keras_attention.models.captioning.transformer_captioner import TransformerCaptioner

RNG = np.random.default_rng(0)
IMAGES = RNG.uniform(0, 255, (2, 16, 16, 3)).astype("float32")
CAPTIONS = np.array([[2, 5, 6, 7, 0], [2, 8, 0, 0, 0]])


def test_logits_shape_dtype_and_layout():
    model = tiny_transformer_captioner(num_layers=2, encoder_layers=2)
    logits = model({"image": IMAGES, "caption": CAPTIONS})
    assert tuple(logits.shape) == (2, 5, 10)
    assert keras.backend.standardize_dtype(logits.dtype) == "float32"
    encoder = model.image_encoder
    assert len(model.decoder_blocks) == 2
    assert encoder.output_shape == (None, 16, 16)  # a 4x4 grid of 16-wide image tokens
    assert [layer.name for layer in encoder.layers if "encoder_block" in layer.name] == [
        "encoder_block_0",
        "encoder_block_1",
    ]
    without = tiny_transformer_captioner(encoder_layers=0).image_encoder
    assert not [layer for layer in without.layers if "encoder_block" in layer.name]


def test_real_positions_ignore_padding_and_the_future():
    model = tiny_transformer_captioner(num_layers=2)
    full = np.asarray(model({"image": IMAGES, "caption": CAPTIONS}))
    # Other ids in the padded tail and after position 1 change nothing before them.
    changed = CAPTIONS.copy()
    changed[1, 2:] = [4, 4, 4]
    changed[0, 2:] = [9, 9, 9]
    other = np.asarray(model({"image": IMAGES, "caption": changed}))
    np.testing.assert_allclose(other[1, :2], full[1, :2], atol=1e-5)
    np.testing.assert_allclose(other[0, :2], full[0, :2], atol=1e-5)
    # The image matters.
    assert not np.allclose(
        np.asarray(model({"image": IMAGES[::-1], "caption": CAPTIONS}))[0], full[0]
    )


def test_keras_file_round_trip(tmp_path):
    model = tiny_transformer_captioner(dropout=0.3, encoder_layers=1)
    inputs = {"image": IMAGES, "caption": CAPTIONS}
    restored = assert_keras_file_round_trip(model, inputs, tmp_path, TransformerCaptioner)
    assert len(restored.decoder_blocks) == 1 and restored.max_length == 6


def test_the_builder_is_the_class_and_summary_lists_the_parts():
    model = tiny_transformer_captioner(image_size=(16, 32))
    assert type(model) is TransformerCaptioner
    config = model.get_config()
    assert config["hidden_dim"] == 16 and tuple(config["image_size"]) == (16, 32)
    assert TransformerCaptioner.from_config(config).count_params() == model.count_params()
    assert_summary_lists(model, ("image_encoder", "caption_embedding", "decoder_block_0", "logits"))
    assert (model.vocabulary_size, model.max_length) == (10, 6)
    assert (model.image_shape, model.grid_size) == ((16, 32), (4, 8))


def test_bad_inputs():
    with pytest.raises(
        ValueError,
        match=r"name 'image' .* expected shape=\(None, None, None, 3\), found shape=\(2, 32, 32, 4\)",
    ):
        tiny_transformer_captioner()(
            {"image": np.zeros((2, 32, 32, 4), "float32"), "caption": CAPTIONS}
        )


def test_wide_images_keep_their_aspect_ratio_into_the_attention():
    model = tiny_transformer_captioner(image_size=(16, 48))
    strips = RNG.uniform(0, 255, (2, 16, 48, 3)).astype("float32")
    assert model.image_encoder.output_shape == (None, 4 * 12, 16)
    decoder = model
    assert (decoder.grid_size, decoder.image_shape) == ((4, 12), (16, 48))
    state = decoder.encode(strips)
    cache = decoder.initial_cache(state, batch_size=2, max_length=6)
    _, _, attention = decoder.step(np.array([2, 2]), 0, cache, state)
    assert tuple(attention.shape) == (2, 4, 12)  # (B, h, w), h != w
    np.testing.assert_allclose(np.asarray(attention).sum(axis=(1, 2)), 1.0, atol=1e-5)


def test_caption_checks_its_arguments():
    model = tiny_transformer_captioner()
    vocabulary = ["[PAD]", "[UNK]", "[START]", "[END]"] + [f"w{index}" for index in range(6)]
    with pytest.raises(
        ValueError, match=r"`beam_width` must be a positive integer. Received: beam_width=0"
    ):
        model.caption(IMAGES, vocabulary, beam_width=0)
    with pytest.raises(
        ValueError, match=r"`max_length` must be at most 6, .* Received: max_length=7"
    ):
        model.caption(IMAGES, vocabulary, max_length=7)
    with pytest.raises(
        ValueError,
        match=r"`decode_batch_size` must be a positive integer. Received: decode_batch_size=0",
    ):
        model.caption(IMAGES, vocabulary, decode_batch_size=0)
    with pytest.raises(
        ValueError,
        match=r"`encoder` must have one token per model output \(10\). Received: encoder with 4 tokens",
    ):
        model.caption(IMAGES, vocabulary[:4])
    # Defaults: greedy search up to max_caption_length tokens.
    captions, attention, words = model.caption(IMAGES, vocabulary, return_attention=True)
    assert len(captions) == 2 and attention.shape == (2, 6, 4, 4) and len(words) == 2
