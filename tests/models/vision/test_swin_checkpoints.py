"""`SwinTransformer.from_preset(folder)` on Hugging Face Swin checkpoints made in the test.

The reference is transformers' PyTorch `SwinForImageClassification` where it
is installed (the `references` extra). Without it, a checkpoint folder written
in the Hugging Face layout from a model of ours must load back to the same
logits (the layout is then only checked against itself).
"""

import json

import numpy as np
import pytest
import tensorflow as tf
from safetensors.numpy import save_file

from keras_attention import convert
from keras_attention.models.vision.swin_transformer import SwinTransformer

CONFIG = dict(
    image_size=32, patch_size=4, embed_dim=8, depths=[2, 2], num_heads=[2, 4], window_size=4
)
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def _processor(folder):
    processor = {
        "image_mean": list(MEAN),
        "image_std": list(STD),
        "size": {"height": 32, "width": 32},
    }
    (folder / "preprocessor_config.json").write_text(json.dumps(processor))


def _pixels():
    return np.random.default_rng(1).uniform(0, 255, (2, 32, 32, 3)).astype("float32")


def test_logits_match_transformers_swin(tmp_path):
    torch = pytest.importorskip("torch", reason="the PyTorch reference needs torch")
    transformers = pytest.importorskip("transformers", reason="the reference needs transformers")
    torch.manual_seed(0)
    labels = {0: "cat", 1: "dog", 2: "fox"}
    config = transformers.SwinConfig(
        **CONFIG, num_labels=3, id2label=labels, label2id={v: k for k, v in labels.items()}
    )
    reference = transformers.SwinForImageClassification(config).eval()
    with torch.no_grad():  # larger weights than the initial ones exercise every path
        for parameter in reference.parameters():
            parameter.add_(torch.randn_like(parameter) * 0.2)
    reference.save_pretrained(tmp_path / "swin")
    _processor(tmp_path / "swin")
    model = SwinTransformer.from_preset(str(tmp_path / "swin"))
    assert model.class_names == ["cat", "dog", "fox"]
    pixels = _pixels()
    normalised = (pixels / 255 - np.asarray(MEAN)) / np.asarray(STD)
    with torch.no_grad():
        expected = reference(
            pixel_values=torch.tensor(normalised.transpose(0, 3, 1, 2), dtype=torch.float32)
        ).logits
    np.testing.assert_allclose(np.asarray(model(pixels)), expected.numpy(), atol=1e-4)


def _huggingface_layout(model):
    """Our model's weights under the Hugging Face names and layouts."""
    w = {weight.path: np.asarray(weight) for weight in model.weights}
    out = {
        "swin.embeddings.patch_embeddings.projection.weight": w[
            "patch_embedding/projection/kernel"
        ].transpose(3, 2, 0, 1),
        "swin.embeddings.patch_embeddings.projection.bias": w["patch_embedding/projection/bias"],
        "swin.embeddings.norm.weight": w["patch_norm/gamma"],
        "swin.embeddings.norm.bias": w["patch_norm/beta"],
        "swin.layernorm.weight": w["final_norm/gamma"],
        "swin.layernorm.bias": w["final_norm/beta"],
        "classifier.weight": w["head/kernel"].T,
        "classifier.bias": w["head/bias"],
    }
    for stage, depth in enumerate(CONFIG["depths"]):
        for index in range(depth):
            ours, theirs = (
                f"stage_{stage}_block_{index}/",
                f"swin.encoder.layers.{stage}.blocks.{index}.",
            )
            kernels = np.split(w[ours + "window_attention/qkv/kernel"], 3, axis=1)
            biases = np.split(w[ours + "window_attention/qkv/bias"], 3)
            for name, kernel, bias in zip(("query", "key", "value"), kernels, biases, strict=True):
                out[f"{theirs}attention.self.{name}.weight"] = kernel.T
                out[f"{theirs}attention.self.{name}.bias"] = bias
            output = ours + "window_attention/output_projection/"
            out[f"{theirs}attention.output.dense.weight"] = w[output + "kernel"].T
            out[f"{theirs}attention.output.dense.bias"] = w[output + "bias"]
            out[f"{theirs}attention.self.relative_position_bias_table"] = w[
                ours + "window_attention/relative_position_bias"
            ]
            for their, our in (
                ("layernorm_before", "attention_norm"),
                ("layernorm_after", "feedforward_norm"),
            ):
                out[f"{theirs}{their}.weight"], out[f"{theirs}{their}.bias"] = (
                    w[f"{ours}{our}/gamma"],
                    w[f"{ours}{our}/beta"],
                )
            for their, our in (
                ("intermediate.dense", "intermediate_dense"),
                ("output.dense", "output_dense"),
            ):
                out[f"{theirs}{their}.weight"] = w[f"{ours}{our}/kernel"].T
                out[f"{theirs}{their}.bias"] = w[f"{ours}{our}/bias"]
        if stage + 1 < len(CONFIG["depths"]):
            merging, downsample = (
                f"patch_merging_{stage + 1}/",
                f"swin.encoder.layers.{stage}.downsample.",
            )
            out[downsample + "reduction.weight"] = w[merging + "reduction/kernel"].T
            out[downsample + "norm.weight"] = w[merging + "norm/gamma"]
            out[downsample + "norm.bias"] = w[merging + "norm/beta"]
    return out


def test_a_checkpoint_in_the_huggingface_layout_loads_back_to_the_same_logits(tmp_path):
    source = SwinTransformer(
        num_classes=3,
        rescaling={"mean": list(MEAN), "std": list(STD)},
        stochastic_depth_rate=0.0,
        **{**CONFIG, "depths": (2, 2), "num_heads": (2, 4)},
    )
    rng = np.random.default_rng(0)
    for weight in source.weights:
        weight.assign(np.asarray(weight) + rng.normal(0, 0.2, weight.shape).astype("float32"))
    folder = tmp_path / "swin"
    folder.mkdir()
    config = {"model_type": "swin", **CONFIG, "hidden_act": "gelu", "layer_norm_eps": 1e-5}
    (folder / "config.json").write_text(json.dumps(config))
    _processor(folder)
    # Contiguous copies: safetensors writes an array's buffer as it lies in memory.
    layout = {
        name: np.ascontiguousarray(value) for name, value in _huggingface_layout(source).items()
    }
    save_file(layout, str(folder / "model.safetensors"))
    model = SwinTransformer.from_preset(str(folder))
    np.testing.assert_allclose(
        np.asarray(model(_pixels())), np.asarray(source(_pixels())), atol=1e-5
    )
    # ... and the converter serves it: pixels in, the same probabilities out.
    served = tf.saved_model.load(convert.main([str(folder), "--export", str(tmp_path / "out")]))
    probabilities = served.signatures["serving_default"](images=tf.constant(_pixels()))
    logits = np.asarray(source(_pixels()))
    expected = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    np.testing.assert_allclose(probabilities["probabilities"].numpy(), expected, atol=1e-5)
    new_head = SwinTransformer.from_preset(str(folder), num_classes=5)
    assert not np.any(np.asarray(new_head.head.kernel))
    (folder / "config.json").write_text(json.dumps({**config, "use_absolute_embeddings": True}))
    with pytest.raises(ValueError, match=r"use_absolute_embeddings=True has no equivalent"):
        SwinTransformer.from_preset(str(folder))
