"""A trained `VisionTransformer` written as a Hugging Face `ViTForImageClassification` folder.

The inverse of `keras_attention.models.checkpoints.vit_checkpoints`: the
folder holds what `save_pretrained` writes and what
`VisionTransformer.from_preset(folder)` (and transformers'
`ViTForImageClassification.from_pretrained`) reads back:

- `config.json`: `model_type` "vit", the sizes, `layer_norm_eps`,
  `image_size`, `patch_size` and `id2label` from the model's `class_names`;
- `preprocessor_config.json`: the resize and the normalisation that match
  the model's `rescaling` ("symmetric": mean and std 0.5; "unit": no
  normalisation; per-channel mean and std as given);
- `model.safetensors`: the weights in PyTorch layouts (Linear weights
  `(out, in)`, the patch projection a `Conv2d` `(D, C, P, P)`), written with
  `safetensors.numpy`.

It lets a ViT pretrained here with `examples/train_vit.py` start another
training that reads Hugging Face folders (`--init-from`).

Example:

>>> import tempfile
>>> from keras_attention.models import VisionTransformer
>>> from benchmarks.huggingface_vit_folders import write_huggingface_vit_folder
>>> model = VisionTransformer(image_size=16, patch_size=8, num_classes=2, hidden_dim=8,
...     num_layers=1, num_heads=2, mlp_dim=16, class_names=["a", "b"])
>>> with tempfile.TemporaryDirectory() as folder:
...     _ = write_huggingface_vit_folder(model, folder)
...     VisionTransformer.from_preset(folder).class_names
['a', 'b']
"""

import json
import os

import numpy as np

CONFIG_FILE = "config.json"
PREPROCESSOR_FILE = "preprocessor_config.json"
WEIGHTS_FILE = "model.safetensors"
QKV = ("query", "key", "value")


def _check_model(model):
    """Raises a ValueError for a model a Hugging Face ViT cannot hold."""
    from keras_attention.models.image_classification.vision_transformer import (
        check_vision_transformer,
    )

    check_vision_transformer(model)
    if model.class_token is None:
        raise ValueError(
            "`model` must pool its class token (pooling='token'): a Hugging Face ViT "
            f"classifies the class token. Received: pooling={model.pooling!r}"
        )
    if tuple(model.position_embedding.grid_size) != tuple(
        side // model.patch_size for side in model.image_size
    ):
        raise ValueError(
            "`model`'s position table must cover its image_size's patch grid. Received: "
            f"grid {model.position_embedding.grid_size}, image_size {model.image_size}"
        )


def huggingface_vit_config(model):
    """The `config.json` of a `ViTForImageClassification` with `model`'s architecture.

    Args:
        model: a `VisionTransformer` with a class token.

    Returns:
        dict: `model_type` "vit", the sizes, `layer_norm_eps`, `image_size`
        (one side when square, else `[height, width]`), `patch_size` and the
        labels (`id2label`, `label2id`): the model's `class_names`, or
        "LABEL_i" as transformers names unnamed classes.
    """
    height, width = model.image_size
    names = model.class_names or [f"LABEL_{index}" for index in range(model.num_classes)]
    return {
        "model_type": "vit",
        "architectures": ["ViTForImageClassification"],
        "image_size": height if height == width else [height, width],
        "patch_size": model.patch_size,
        "num_channels": model.channels,
        "hidden_size": model.hidden_dim,
        "num_hidden_layers": model.num_layers,
        "num_attention_heads": model.num_heads,
        "intermediate_size": model.mlp_dim,
        "hidden_act": "gelu",
        "layer_norm_eps": float(model.layer_norm_epsilon),
        "qkv_bias": True,
        "hidden_dropout_prob": 0.0,
        "attention_probs_dropout_prob": 0.0,
        "initializer_range": 0.02,
        "id2label": {str(index): str(name) for index, name in enumerate(names)},
        "label2id": {str(name): index for index, name in enumerate(names)},
    }


def huggingface_vit_preprocessor(model):
    """The `preprocessor_config.json` that feeds `model`'s pixels as its `rescaling` does.

    Pixels in 0..255 are multiplied by `1 / 255`, then normalised with
    `image_mean` and `image_std`: 0.5 and 0.5 give the "symmetric" [-1, 1]
    of the model; "unit" leaves the normalisation out.
    """
    height, width = model.image_size
    channels = model.channels
    processor = {
        "image_processor_type": "ViTImageProcessor",
        "do_resize": True,
        "size": {"height": height, "width": width},
        "resample": 2,
        "do_rescale": True,
        "rescale_factor": 1 / 255,
        "do_normalize": True,
        "image_mean": [0.5] * channels,
        "image_std": [0.5] * channels,
    }
    rescaling = model.rescaling
    if rescaling == "unit":
        processor["do_normalize"] = False
    elif isinstance(rescaling, dict):
        processor["image_mean"] = [float(value) for value in rescaling["mean"]]
        processor["image_std"] = [float(value) for value in rescaling["std"]]
    elif rescaling != "symmetric":
        raise ValueError(
            "`model.rescaling` must be 'symmetric', 'unit' or a dict of 'mean' and 'std'. "
            f"Received: rescaling={rescaling!r}"
        )
    return processor


def huggingface_vit_weights(model):
    """`model`'s weights under the names and layouts of a `ViTForImageClassification`.

    Returns:
        `{tensor name: contiguous float32 NumPy array}`, e.g.
        "vit.encoder.layer.0.attention.attention.query.weight" `(D, D)`.
    """
    w = {weight.path: np.asarray(weight, dtype=np.float32) for weight in model.weights}
    hidden = model.hidden_dim
    grid = w["position_embedding/grid_embeddings"]  # (h, w, D), row-major patches
    positions = np.concatenate(
        [w["position_embedding/prefix_embeddings"], grid.reshape(-1, hidden)]
    )
    out = {
        # Keras (P, P, C, D) -> Conv2d (D, C, P, P)
        "vit.embeddings.patch_embeddings.projection.weight": w[
            "patch_embedding/projection/kernel"
        ].transpose(3, 2, 0, 1),
        "vit.embeddings.patch_embeddings.projection.bias": w["patch_embedding/projection/bias"],
        "vit.embeddings.cls_token": w["class_token/token"].reshape(1, 1, hidden),
        "vit.embeddings.position_embeddings": positions[None],
        "vit.layernorm.weight": w["final_norm/gamma"],
        "vit.layernorm.bias": w["final_norm/beta"],
        "classifier.weight": w["head/kernel"].T,
        "classifier.bias": w["head/bias"],
    }
    for index in range(model.num_layers):
        ours, theirs = f"encoder_block_{index}/", f"vit.encoder.layer.{index}."
        attention = ours + "self_attention_layer/"
        for name in QKV:
            kernel = w[f"{attention}{name}/kernel"]  # (D in, heads, head_dim)
            out[f"{theirs}attention.attention.{name}.weight"] = kernel.reshape(hidden, -1).T
            out[f"{theirs}attention.attention.{name}.bias"] = w[f"{attention}{name}/bias"].ravel()
        kernel = w[attention + "attention_output/kernel"]  # (heads, head_dim, D out)
        out[f"{theirs}attention.output.dense.weight"] = kernel.reshape(-1, hidden).T
        out[f"{theirs}attention.output.dense.bias"] = w[attention + "attention_output/bias"]
        for their, our in (
            ("layernorm_before", "self_attention_layer_norm"),
            ("layernorm_after", "feedforward_layer_norm"),
        ):
            out[f"{theirs}{their}.weight"] = w[f"{ours}{our}/gamma"]
            out[f"{theirs}{their}.bias"] = w[f"{ours}{our}/beta"]
        for their, our in (
            ("intermediate.dense", "feedforward_intermediate_dense"),
            ("output.dense", "feedforward_output_dense"),
        ):
            out[f"{theirs}{their}.weight"] = w[f"{ours}{our}/kernel"].T  # (in, out) -> (out, in)
            out[f"{theirs}{their}.bias"] = w[f"{ours}{our}/bias"]
    # safetensors writes an array's buffer as it lies in memory: transposes need copies.
    return {name: np.ascontiguousarray(value) for name, value in out.items()}


def write_huggingface_vit_folder(model, folder):
    """Writes `model` as a Hugging Face `ViTForImageClassification` folder.

    Args:
        model: a `VisionTransformer` with a class token (`pooling="token"`)
            and its position table at its `image_size`.
        folder: the folder to write (created if missing; the three files are
            replaced).

    Returns:
        the folder's path.

    Raises:
        ValueError: `model` is not such a `VisionTransformer`.
    """
    from safetensors.numpy import save_file

    _check_model(model)
    weights = huggingface_vit_weights(model)
    config = huggingface_vit_config(model)
    processor = huggingface_vit_preprocessor(model)
    folder = os.fspath(folder)
    os.makedirs(folder, exist_ok=True)
    save_file(weights, os.path.join(folder, WEIGHTS_FILE), metadata={"format": "pt"})
    for name, document in ((CONFIG_FILE, config), (PREPROCESSOR_FILE, processor)):
        with open(os.path.join(folder, name), "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=2)
            handle.write("\n")
    return folder
