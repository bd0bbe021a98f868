"""`VisionTransformer.from_preset(folder)` on Hugging Face ViT checkpoints made in the test.

Two references: transformers' PyTorch `ViTForImageClassification` where it is
installed (the `references` extra), and, always, a NumPy forward pass of the
published ViT on a checkpoint folder written with `safetensors` in the Hugging
Face layout (tests/hf_checkpoints.py).
"""

import json

import numpy as np
import pytest
import tensorflow as tf
from hf_checkpoints import CLASSES
from hf_checkpoints import HEADS
from hf_checkpoints import HIDDEN
from hf_checkpoints import LABELS
from hf_checkpoints import LAYERS
from hf_checkpoints import MLP
from hf_checkpoints import PATCH
from hf_checkpoints import SIDE
from hf_checkpoints import numpy_vit_logits
from hf_checkpoints import random_pixels
from hf_checkpoints import softmax
from hf_checkpoints import write_vit_checkpoint

from keras_attention.models.image_classification.vision_transformer import VisionTransformer
from keras_attention.serving.image_classification_export import export_image_classifier


@pytest.mark.parametrize(
    "mean, std", [((0.5,) * 3, (0.5,) * 3), ((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))]
)
def test_logits_match_a_numpy_vit_on_the_same_checkpoint(tmp_path, mean, std):
    weights = write_vit_checkpoint(tmp_path / "vit", mean, std)
    model = VisionTransformer.from_preset(str(tmp_path / "vit"))
    assert model.class_names == ["cat", "dog", "fox"]
    pixels = random_pixels()
    normalised = (pixels / 255 - np.asarray(mean)) / np.asarray(std)
    expected = numpy_vit_logits(weights, normalised.astype("float64"))
    np.testing.assert_allclose(np.asarray(model(pixels)), expected, atol=1e-4)


def test_the_exported_classifier_answers_as_the_checkpoint(tmp_path):
    weights = write_vit_checkpoint(tmp_path / "vit")
    model = VisionTransformer.from_preset(str(tmp_path / "vit"))
    path = export_image_classifier(model, str(tmp_path / "served"), model.class_names)
    serve = tf.saved_model.load(path).signatures["serving_uint8"]
    pixels = random_pixels().round().astype("uint8")
    outputs = serve(images=tf.constant(pixels))
    logits = numpy_vit_logits(weights, pixels.astype("float64") / 127.5 - 1)
    np.testing.assert_allclose(outputs["probabilities"].numpy(), softmax(logits), atol=1e-4)
    labels = [label.decode() for label in outputs["labels"].numpy()]
    assert labels == [LABELS[index] for index in logits.argmax(-1)]


def test_other_classes_get_a_new_head_and_the_encoder_is_kept(tmp_path):
    write_vit_checkpoint(tmp_path / "vit")
    original = VisionTransformer.from_preset(str(tmp_path / "vit"))
    model = VisionTransformer.from_preset(str(tmp_path / "vit"), num_classes=5, image_size=48)
    assert model.class_names is None and tuple(model.head.kernel.shape) == (HIDDEN, 5)
    assert not np.any(np.asarray(model.head.kernel))
    np.testing.assert_array_equal(
        np.asarray(model.encoder_blocks[1].weights[0]),
        np.asarray(original.encoder_blocks[1].weights[0]),
    )
    assert model.position_embedding.grid_size == (6, 6)  # the 4x4 table resized to 48 pixels


def test_folders_that_are_not_vit_checkpoints_are_refused(tmp_path):
    with pytest.raises(ValueError, match=r"`preset` must be a checkpoint folder.*not a folder"):
        VisionTransformer.from_preset(str(tmp_path / "missing"))
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "swin"}))
    with pytest.raises(ValueError, match=r"model_type 'vit'\. Received: .* with model_type 'swin'"):
        VisionTransformer.from_preset(str(tmp_path))
    write_vit_checkpoint(tmp_path / "relu")
    config = json.loads((tmp_path / "relu" / "config.json").read_text())
    (tmp_path / "relu" / "config.json").write_text(json.dumps({**config, "hidden_act": "relu"}))
    with pytest.raises(ValueError, match=r"hidden_act='relu' has no equivalent"):
        VisionTransformer.from_preset(str(tmp_path / "relu"))


def test_logits_match_transformers_vit(tmp_path):
    torch = pytest.importorskip("torch", reason="the PyTorch reference needs torch")
    transformers = pytest.importorskip("transformers", reason="the reference needs transformers")
    torch.manual_seed(0)
    config = transformers.ViTConfig(
        image_size=SIDE,
        patch_size=PATCH,
        hidden_size=HIDDEN,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        intermediate_size=MLP,
        num_labels=CLASSES,
        id2label=LABELS,
        label2id={name: index for index, name in LABELS.items()},
    )
    reference = transformers.ViTForImageClassification(config).eval()
    with torch.no_grad():  # the initial weights are tiny: larger ones exercise every path
        for parameter in reference.parameters():
            parameter.add_(torch.randn_like(parameter) * 0.2)
    reference.save_pretrained(tmp_path / "vit")
    model = VisionTransformer.from_preset(str(tmp_path / "vit"))
    pixels = random_pixels()
    normalised = torch.tensor((pixels / 127.5 - 1).transpose(0, 3, 1, 2))
    with torch.no_grad():
        expected = reference(pixel_values=normalised).logits.numpy()
    np.testing.assert_allclose(np.asarray(model(pixels)), expected, atol=1e-4)
