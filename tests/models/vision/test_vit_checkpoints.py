"""`VisionTransformer.from_preset(folder)` on Hugging Face ViT checkpoints made in the test.

Two references: transformers' PyTorch `ViTForImageClassification` where it is
installed (the `references` extra), and, always, a NumPy forward pass of the
published ViT (Dosovitskiy et al. 2021) on a checkpoint folder written here
with `safetensors` in the Hugging Face layout.
"""

import json

import numpy as np
import pytest
import tensorflow as tf
from safetensors.numpy import save_file

from keras_attention.models.vision.vision_transformer import VisionTransformer
from keras_attention.serving.image_classifier_export import export_image_classifier

HIDDEN, HEADS, LAYERS, MLP, PATCH, SIDE, CLASSES = 16, 2, 2, 32, 8, 32, 3
LABELS = {0: "cat", 1: "dog", 2: "fox"}


def _layer_norm(x, weight, bias, epsilon=1e-12):
    mean = x.mean(-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + epsilon) * weight + bias


def _gelu(x):
    from math import erf

    return 0.5 * x * (1 + np.vectorize(erf)(x / np.sqrt(2)))


def _softmax(x):
    x = x - x.max(-1, keepdims=True)
    return np.exp(x) / np.exp(x).sum(-1, keepdims=True)


def numpy_vit_logits(weights, pixels):
    """The ViT of the paper in NumPy, on pixel values already normalised `(B, H, W, C)`."""
    w = weights
    batch = pixels.shape[0]
    grid = SIDE // PATCH
    # (B, H, W, C) -> (B, grid, P, grid, P, C) -> (B, grid * grid, C * P * P), channel first
    patches = pixels.reshape(batch, grid, PATCH, grid, PATCH, 3).transpose(0, 1, 3, 5, 2, 4)
    patches = patches.reshape(batch, grid * grid, 3 * PATCH * PATCH)
    kernel = w["vit.embeddings.patch_embeddings.projection.weight"].reshape(HIDDEN, -1)
    x = patches @ kernel.T + w["vit.embeddings.patch_embeddings.projection.bias"]
    cls = np.broadcast_to(w["vit.embeddings.cls_token"], (batch, 1, HIDDEN))
    x = np.concatenate([cls, x], 1) + w["vit.embeddings.position_embeddings"]
    head_dim = HIDDEN // HEADS
    for i in range(LAYERS):
        p = f"vit.encoder.layer.{i}."
        h = _layer_norm(x, w[p + "layernorm_before.weight"], w[p + "layernorm_before.bias"])

        def project(name, h=h, p=p):
            y = h @ w[p + f"attention.attention.{name}.weight"].T
            y = y + w[p + f"attention.attention.{name}.bias"]
            return y.reshape(batch, -1, HEADS, head_dim).transpose(0, 2, 1, 3)  # (B, N, T, H)

        q, k, v = project("query"), project("key"), project("value")
        attention = _softmax(q @ k.transpose(0, 1, 3, 2) / np.sqrt(head_dim)) @ v
        attention = attention.transpose(0, 2, 1, 3).reshape(batch, -1, HIDDEN)
        x = x + attention @ w[p + "attention.output.dense.weight"].T
        x = x + w[p + "attention.output.dense.bias"]
        h = _layer_norm(x, w[p + "layernorm_after.weight"], w[p + "layernorm_after.bias"])
        h = _gelu(h @ w[p + "intermediate.dense.weight"].T + w[p + "intermediate.dense.bias"])
        x = x + h @ w[p + "output.dense.weight"].T + w[p + "output.dense.bias"]
    x = _layer_norm(x, w["vit.layernorm.weight"], w["vit.layernorm.bias"])
    return x[:, 0] @ w["classifier.weight"].T + w["classifier.bias"]


def _write_checkpoint(folder, mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5)):
    """A random ViTForImageClassification checkpoint in the Hugging Face layout."""
    rng = np.random.default_rng(0)

    def random(*shape, scale=0.2):
        return (rng.standard_normal(shape) * scale).astype("float32")

    weights = {
        "vit.embeddings.cls_token": random(1, 1, HIDDEN),
        "vit.embeddings.position_embeddings": random(1, 1 + (SIDE // PATCH) ** 2, HIDDEN),
        "vit.embeddings.patch_embeddings.projection.weight": random(HIDDEN, 3, PATCH, PATCH),
        "vit.embeddings.patch_embeddings.projection.bias": random(HIDDEN),
        "vit.layernorm.weight": 1 + random(HIDDEN),
        "vit.layernorm.bias": random(HIDDEN),
        "classifier.weight": random(CLASSES, HIDDEN),
        "classifier.bias": random(CLASSES),
    }
    for i in range(LAYERS):
        p = f"vit.encoder.layer.{i}."
        for name in ("query", "key", "value"):
            weights[p + f"attention.attention.{name}.weight"] = random(HIDDEN, HIDDEN)
            weights[p + f"attention.attention.{name}.bias"] = random(HIDDEN)
        weights[p + "attention.output.dense.weight"] = random(HIDDEN, HIDDEN)
        weights[p + "attention.output.dense.bias"] = random(HIDDEN)
        weights[p + "intermediate.dense.weight"] = random(MLP, HIDDEN)
        weights[p + "intermediate.dense.bias"] = random(MLP)
        weights[p + "output.dense.weight"] = random(HIDDEN, MLP)
        weights[p + "output.dense.bias"] = random(HIDDEN)
        for norm in ("layernorm_before", "layernorm_after"):
            weights[p + f"{norm}.weight"] = 1 + random(HIDDEN)
            weights[p + f"{norm}.bias"] = random(HIDDEN)
    config = {
        "model_type": "vit",
        "architectures": ["ViTForImageClassification"],
        "image_size": SIDE,
        "patch_size": PATCH,
        "num_channels": 3,
        "hidden_size": HIDDEN,
        "num_hidden_layers": LAYERS,
        "num_attention_heads": HEADS,
        "intermediate_size": MLP,
        "hidden_act": "gelu",
        "layer_norm_eps": 1e-12,
        "qkv_bias": True,
        "id2label": {str(k): v for k, v in LABELS.items()},
    }
    processor = {
        "do_normalize": True,
        "do_rescale": True,
        "rescale_factor": 1 / 255,
        "image_mean": list(mean),
        "image_std": list(std),
        "size": {"height": SIDE, "width": SIDE},
    }
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "preprocessor_config.json").write_text(json.dumps(processor))
    save_file(weights, str(folder / "model.safetensors"))
    return weights


def _pixels(batch=2):
    return np.random.default_rng(1).uniform(0, 255, (batch, SIDE, SIDE, 3)).astype("float32")


@pytest.mark.parametrize(
    "mean, std", [((0.5,) * 3, (0.5,) * 3), ((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))]
)
def test_logits_match_a_numpy_vit_on_the_same_checkpoint(tmp_path, mean, std):
    weights = _write_checkpoint(tmp_path / "vit", mean, std)
    model = VisionTransformer.from_preset(str(tmp_path / "vit"))
    assert model.class_names == ["cat", "dog", "fox"]
    pixels = _pixels()
    normalised = (pixels / 255 - np.asarray(mean)) / np.asarray(std)
    expected = numpy_vit_logits(weights, normalised.astype("float64"))
    np.testing.assert_allclose(np.asarray(model(pixels)), expected, atol=1e-4)


def test_the_exported_classifier_answers_as_the_checkpoint(tmp_path):
    weights = _write_checkpoint(tmp_path / "vit")
    model = VisionTransformer.from_preset(str(tmp_path / "vit"))
    path = export_image_classifier(model, str(tmp_path / "served"), model.class_names)
    serve = tf.saved_model.load(path).signatures["serving_uint8"]
    pixels = _pixels().round().astype("uint8")
    outputs = serve(images=tf.constant(pixels))
    logits = numpy_vit_logits(weights, pixels.astype("float64") / 127.5 - 1)
    np.testing.assert_allclose(outputs["probabilities"].numpy(), _softmax(logits), atol=1e-4)
    labels = [label.decode() for label in outputs["labels"].numpy()]
    assert labels == [LABELS[index] for index in logits.argmax(-1)]


def test_other_classes_get_a_new_head_and_the_encoder_is_kept(tmp_path):
    _write_checkpoint(tmp_path / "vit")
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
    with pytest.raises(ValueError, match=r"model_type 'vit'.*Received: model_type='swin'"):
        VisionTransformer.from_preset(str(tmp_path))
    _write_checkpoint(tmp_path / "relu")
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
    pixels = _pixels()
    normalised = torch.tensor((pixels / 127.5 - 1).transpose(0, 3, 1, 2))
    with torch.no_grad():
        expected = reference(pixel_values=normalised).logits.numpy()
    np.testing.assert_allclose(np.asarray(model(pixels)), expected, atol=1e-4)
