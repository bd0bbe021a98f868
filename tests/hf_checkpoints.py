"""Hugging Face ViT checkpoint folders written by tests, and a NumPy ViT to check them against.

`write_vit_checkpoint(folder)` writes a random `ViTForImageClassification`
folder in the Hugging Face layout (`config.json`, `preprocessor_config.json`,
`model.safetensors`) with `safetensors` alone; `numpy_vit_logits` is the ViT
of Dosovitskiy et al. 2021 in NumPy, on those weights.
"""

import json
import pathlib

import numpy as np
from safetensors.numpy import save_file

HIDDEN, HEADS, LAYERS, MLP, PATCH, SIDE, CLASSES = 16, 2, 2, 32, 8, 32, 3
LABELS = {0: "cat", 1: "dog", 2: "fox"}


def _layer_norm(x, weight, bias, epsilon=1e-12):
    mean = x.mean(-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + epsilon) * weight + bias


def _gelu(x):
    from math import erf

    return 0.5 * x * (1 + np.vectorize(erf)(x / np.sqrt(2)))


def softmax(x):
    x = x - x.max(-1, keepdims=True)
    return np.exp(x) / np.exp(x).sum(-1, keepdims=True)


def numpy_vit_logits(weights, pixels):
    """The ViT of the paper in NumPy, on pixel values already normalised `(B, H, W, C)`."""
    x = numpy_vit_tokens(weights, pixels)
    return x[:, 0] @ weights["classifier.weight"].T + weights["classifier.bias"]


def numpy_vit_tokens(weights, pixels):
    """The ViT's final-normed tokens `(B, 1 + N, D)`, class token first, in NumPy."""
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
        attention = softmax(q @ k.transpose(0, 1, 3, 2) / np.sqrt(head_dim)) @ v
        attention = attention.transpose(0, 2, 1, 3).reshape(batch, -1, HIDDEN)
        x = x + attention @ w[p + "attention.output.dense.weight"].T
        x = x + w[p + "attention.output.dense.bias"]
        h = _layer_norm(x, w[p + "layernorm_after.weight"], w[p + "layernorm_after.bias"])
        h = _gelu(h @ w[p + "intermediate.dense.weight"].T + w[p + "intermediate.dense.bias"])
        x = x + h @ w[p + "output.dense.weight"].T + w[p + "output.dense.bias"]
    return _layer_norm(x, w["vit.layernorm.weight"], w["vit.layernorm.bias"])


def write_vit_checkpoint(folder, mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5)):
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


def random_pixels(batch=2):
    return np.random.default_rng(1).uniform(0, 255, (batch, SIDE, SIDE, 3)).astype("float32")


# --- Swin: a folder in the Hugging Face layout, written from a model of ours ---

SWIN_CONFIG = dict(
    image_size=32, patch_size=4, embed_dim=8, depths=[2, 2], num_heads=[2, 4], window_size=4
)
SWIN_MEAN, SWIN_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def write_swin_preprocessor(folder):
    """`preprocessor_config.json`: ImageNet's mean and std, 32x32 images."""
    processor = {
        "image_mean": list(SWIN_MEAN),
        "image_std": list(SWIN_STD),
        "size": {"height": 32, "width": 32},
    }
    (folder / "preprocessor_config.json").write_text(json.dumps(processor))


def _swin_huggingface_layout(model):
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
    for stage, depth in enumerate(SWIN_CONFIG["depths"]):
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
        if stage + 1 < len(SWIN_CONFIG["depths"]):
            merging, downsample = (
                f"patch_merging_{stage + 1}/",
                f"swin.encoder.layers.{stage}.downsample.",
            )
            out[downsample + "reduction.weight"] = w[merging + "reduction/kernel"].T
            out[downsample + "norm.weight"] = w[merging + "norm/gamma"]
            out[downsample + "norm.bias"] = w[merging + "norm/beta"]
    return out


def write_swin_checkpoint(folder):
    """A Swin classifier folder of 3 classes from a randomised model of ours; `(model, config)`."""
    from safetensors.numpy import save_file

    from keras_attention.models.image_classification.swin_transformer import SwinTransformer

    source = SwinTransformer(
        num_classes=3,
        rescaling={"mean": list(SWIN_MEAN), "std": list(SWIN_STD)},
        stochastic_depth_rate=0.0,
        **{**SWIN_CONFIG, "depths": (2, 2), "num_heads": (2, 4)},
    )
    rng = np.random.default_rng(0)
    for weight in source.weights:
        weight.assign(np.asarray(weight) + rng.normal(0, 0.2, weight.shape).astype("float32"))
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    config = {"model_type": "swin", **SWIN_CONFIG, "hidden_act": "gelu", "layer_norm_eps": 1e-5}
    (folder / "config.json").write_text(json.dumps(config))
    write_swin_preprocessor(folder)
    # Contiguous copies: safetensors writes an array's buffer as it lies in memory.
    layout = {
        name: np.ascontiguousarray(value)
        for name, value in _swin_huggingface_layout(source).items()
    }
    save_file(layout, str(folder / "model.safetensors"))
    return source, config
