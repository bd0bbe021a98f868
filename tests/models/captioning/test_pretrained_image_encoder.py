"""`ViTCaptioner` on a pretrained image encoder: a Hugging Face ViT or Swin checkpoint's tokens.

The tokens the decoder reads are checked against the NumPy ViT of
tests/hf_checkpoints.py on the checkpoint's own weights.
"""

import keras
import numpy as np
import pytest
from hf_checkpoints import HIDDEN
from hf_checkpoints import PATCH
from hf_checkpoints import SIDE
from hf_checkpoints import numpy_vit_tokens
from hf_checkpoints import random_pixels
from hf_checkpoints import write_swin_checkpoint
from hf_checkpoints import write_vit_checkpoint

from keras_attention.models import SwinTransformer
from keras_attention.models import VisionTransformer
from keras_attention.models import ViTCaptioner

# A WordPiece vocabulary of 20 ids: the four reserved tokens, then words.
VOCABULARY = ["[PAD]", "[UNK]", "[START]", "[END]"] + [f"w{index}" for index in range(16)]
DECODER = dict(vocabulary_size=20, max_caption_length=8, num_layers=1, num_heads=2)


def _inputs(batch=2):
    captions = np.array([[2, 5, 6, 0], [2, 7, 8, 9]])[:batch]
    return {"image": random_pixels(batch), "caption": captions}


@pytest.fixture
def vit_folder(tmp_path):
    weights = write_vit_checkpoint(tmp_path / "vit")
    return tmp_path / "vit", weights


def test_the_decoder_reads_the_checkpoints_patch_tokens(vit_folder):
    folder, weights = vit_folder
    model = ViTCaptioner.from_preset(str(folder), hidden_dim=HIDDEN, intermediate_dim=32, **DECODER)
    grid = SIDE // PATCH
    assert model.grid_size == (grid, grid) and model.patch_size == PATCH
    assert model.image_size == [SIDE, SIDE] and model.encoder_layers == 0
    pixels = random_pixels()
    tokens = np.asarray(model.image_encoder(pixels))  # (B, h * w, D)
    expected = numpy_vit_tokens(weights, (pixels / 255 - 0.5) / 0.5)[:, 1:]
    np.testing.assert_allclose(tokens, expected, atol=1e-4)


def test_by_default_only_the_new_parts_train(vit_folder):
    encoder = VisionTransformer.from_preset(str(vit_folder[0]))
    model = ViTCaptioner(
        pretrained_encoder=encoder, hidden_dim=24, intermediate_dim=32, encoder_layers=1, **DECODER
    )
    trainable = {weight.path.split("/")[0] for weight in model.trainable_weights}
    frozen = {weight.path.split("/")[0] for weight in model.non_trainable_weights}
    assert {"patch_embedding", "encoder_block_0", "final_norm"} <= frozen
    assert {"encoder_projection", "top_encoder_block_0"} <= trainable
    assert not trainable & {"patch_embedding", "encoder_block_0", "position_embedding"}
    before = [np.array(w) for w in encoder.weights]
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    inputs = _inputs()
    model.fit(inputs, inputs["caption"], epochs=1, verbose=0)
    for old, weight in zip(before, encoder.weights):
        np.testing.assert_array_equal(old, np.asarray(weight))
    tuned = ViTCaptioner(pretrained_encoder=encoder, trainable_encoder=True, **DECODER)
    assert any(w.path.startswith("encoder_block_0") for w in tuned.trainable_weights)


def test_a_saved_captioner_loads_with_its_encoder_weights(vit_folder, tmp_path):
    model = ViTCaptioner.from_preset(
        str(vit_folder[0]), image_size=(32, 48), hidden_dim=HIDDEN, intermediate_dim=32, **DECODER
    )
    assert model.grid_size == (4, 6)
    inputs = _inputs()
    inputs["image"] = np.random.default_rng(3).uniform(0, 255, (2, 32, 48, 3)).astype("float32")
    model.save(tmp_path / "captioner.keras")
    loaded = keras.saving.load_model(tmp_path / "captioner.keras")
    np.testing.assert_allclose(np.asarray(loaded(inputs)), np.asarray(model(inputs)), atol=1e-6)
    assert loaded.get_config()["pretrained_encoder"]["class_name"] == "VisionTransformer"
    captions = model.caption(inputs["image"], VOCABULARY, max_length=5)
    assert captions == loaded.caption(inputs["image"], VOCABULARY, max_length=5)


def test_a_swin_checkpoint_hands_its_last_stage_tokens(tmp_path):
    write_swin_checkpoint(tmp_path / "swin")
    encoder = SwinTransformer.from_preset(str(tmp_path / "swin"))
    model = ViTCaptioner(pretrained_encoder=encoder, hidden_dim=16, intermediate_dim=32, **DECODER)
    rows, cols = encoder.token_grid
    assert model.grid_size == (rows, cols)
    pixels = random_pixels()
    tokens = np.asarray(model.image_encoder(pixels))
    assert tokens.shape[1] == rows * cols


@pytest.mark.parametrize(
    "argument, value, message",
    [
        ("image_size", 64, r"`image_size` must be the pretrained encoder's \(or None\)"),
        ("patch_size", 4, r"`patch_size` must be the pretrained encoder's \(8\)"),
        ("positions", "learned", r"`positions` belongs to the captioner's own patch encoder"),
        ("alibi_2d", False, r"`alibi_2d` belongs to the captioner's own patch encoder"),
    ],
)
def test_arguments_that_contradict_the_encoder_are_refused(vit_folder, argument, value, message):
    encoder = VisionTransformer.from_preset(str(vit_folder[0]))
    with pytest.raises(ValueError, match=message):
        ViTCaptioner(pretrained_encoder=encoder, **{argument: value}, **DECODER)


def test_something_else_as_encoder_is_refused():
    with pytest.raises(ValueError, match="`pretrained_encoder` must be an image classifier"):
        ViTCaptioner(pretrained_encoder=keras.Sequential([keras.layers.Dense(2)]), **DECODER)
