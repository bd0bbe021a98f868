"""A `VisionTransformer` written as a Hugging Face ViT folder reads back with the same logits.

Two checks of the folder: `VisionTransformer.from_preset(folder)` gives the
written model's logits, and the NumPy ViT of tests/hf_checkpoints.py on the
folder's tensors (pixels normalised as its `preprocessor_config.json` says)
gives them too.
"""

import json
import pathlib
import sys

import numpy as np
import pytest
from hf_checkpoints import CLASSES
from hf_checkpoints import HEADS
from hf_checkpoints import HIDDEN
from hf_checkpoints import LAYERS
from hf_checkpoints import MLP
from hf_checkpoints import PATCH
from hf_checkpoints import SIDE
from hf_checkpoints import numpy_vit_logits
from hf_checkpoints import random_pixels
from safetensors.numpy import load_file

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.huggingface_vit_folders import write_huggingface_vit_folder  # noqa: E402
from keras_attention.models import VisionTransformer  # noqa: E402

NAMES = ["ant", "bee", "cow"]


def _random_model(rescaling="symmetric", layer_norm_epsilon=1e-6, pooling="token"):
    """A ViT of the NumPy reference's sizes, every weight random (the head too)."""
    model = VisionTransformer(
        image_size=SIDE,
        patch_size=PATCH,
        num_classes=CLASSES,
        hidden_dim=HIDDEN,
        num_layers=LAYERS,
        num_heads=HEADS,
        mlp_dim=MLP,
        rescaling=rescaling,
        layer_norm_epsilon=layer_norm_epsilon,
        pooling=pooling,
        class_names=NAMES,
    )
    rng = np.random.default_rng(0)
    for weight in model.weights:
        noise = rng.normal(0.0, 0.2, weight.shape).astype("float32")
        weight.assign(np.asarray(weight) + noise)
    return model


@pytest.mark.parametrize(
    "rescaling", ["symmetric", {"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}]
)
def test_the_folder_reads_back_with_equal_logits_and_matches_the_numpy_vit(tmp_path, rescaling):
    # The NumPy reference's LayerNorms use 1e-12, as Hugging Face's ViT does.
    model = _random_model(rescaling, layer_norm_epsilon=1e-12)
    folder = write_huggingface_vit_folder(model, tmp_path / "vit")
    pixels = random_pixels()
    expected = np.asarray(model(pixels))

    loaded = VisionTransformer.from_preset(str(folder))
    assert loaded.class_names == NAMES
    assert loaded.rescaling == model.rescaling
    np.testing.assert_allclose(np.asarray(loaded(pixels)), expected, atol=1e-4)

    # The NumPy ViT takes pixels already normalised: `preprocessor_config.json`'s convention.
    processor = json.loads((tmp_path / "vit" / "preprocessor_config.json").read_text())
    mean, std = np.asarray(processor["image_mean"]), np.asarray(processor["image_std"])
    normalised = (pixels * processor["rescale_factor"] - mean) / std
    weights = {
        name: value.astype("float64")
        for name, value in load_file(str(tmp_path / "vit" / "model.safetensors")).items()
    }
    np.testing.assert_allclose(numpy_vit_logits(weights, normalised), expected, atol=1e-4)


def test_the_config_names_the_sizes_and_the_classes(tmp_path):
    model = _random_model("unit")
    write_huggingface_vit_folder(model, tmp_path / "vit")
    config = json.loads((tmp_path / "vit" / "config.json").read_text())
    assert config["model_type"] == "vit"
    assert (config["hidden_size"], config["num_hidden_layers"]) == (HIDDEN, LAYERS)
    assert (config["num_attention_heads"], config["intermediate_size"]) == (HEADS, MLP)
    assert (config["image_size"], config["patch_size"]) == (SIDE, PATCH)
    assert config["layer_norm_eps"] == pytest.approx(1e-6)
    assert config["id2label"] == {"0": "ant", "1": "bee", "2": "cow"}
    processor = json.loads((tmp_path / "vit" / "preprocessor_config.json").read_text())
    assert processor["do_normalize"] is False  # "unit": pixels / 255 only
    loaded = VisionTransformer.from_preset(str(tmp_path / "vit"))
    assert loaded.rescaling == "unit"
    pixels = random_pixels()
    np.testing.assert_allclose(np.asarray(loaded(pixels)), np.asarray(model(pixels)), atol=1e-4)


def test_a_model_without_a_class_token_is_refused(tmp_path):
    with pytest.raises(ValueError, match="pooling='token'"):
        write_huggingface_vit_folder(_random_model(pooling="gap"), tmp_path / "vit")
