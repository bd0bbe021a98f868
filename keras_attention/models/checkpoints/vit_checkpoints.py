"""A Vision Transformer from a pretrained Hugging Face ViT checkpoint folder.

`ViTForImageClassification` and `ViTModel` folders (as `save_pretrained`
writes them) map one to one onto our Vision Transformer: a pre-norm
encoder with exact GELU, a class token, a learned position table and
token pooling. `VisionTransformer.from_preset(folder)` reads the
architecture from `config.json`, the pixel normalisation and input size
from `preprocessor_config.json`, the class names from `id2label`, and the
weights from `model.safetensors`, after checking them against the config
(`checkpoint_consistency`).
"""

import numpy as np

from keras_attention.models.checkpoints.checkpoint_consistency import NumberedParts
from keras_attention.models.checkpoints.checkpoint_consistency import Size
from keras_attention.models.checkpoints.checkpoint_consistency import TensorLayout
from keras_attention.models.checkpoints.checkpoint_folders import attention_values
from keras_attention.models.checkpoints.checkpoint_folders import checkpoint_kind
from keras_attention.models.checkpoints.checkpoint_folders import norm_and_dense_values
from keras_attention.models.checkpoints.checkpoint_folders import read_json
from keras_attention.models.checkpoints.hf_image_checkpoints import CheckpointFamily
from keras_attention.models.checkpoints.hf_image_checkpoints import checkpoint_input
from keras_attention.models.checkpoints.hf_image_checkpoints import pair

QKV = ("query", "key", "value")
# Config options of a Hugging Face ViT, and the value our VisionTransformer has.
_OPTIONS = {"hidden_act": "gelu", "qkv_bias": True}


def vit_checkpoint_input(folder):
    """`(patch_size, (height, width))` a ViT checkpoint folder's model reads its images at.

    A Hugging Face ViT folder (its image processor's size) or a keras-hub
    ViT preset folder (its backbone's `image_shape`).

    Raises:
        ValueError: the folder is neither.
    """
    if checkpoint_kind(folder) == "keras_hub":
        settings = read_json(folder, "config.json").get("config", {})
        if "image_shape" not in settings or "patch_size" not in settings:
            raise ValueError(f"`folder` must hold a keras-hub ViT preset. Received: {folder!r}")
        return pair(settings["patch_size"])[0], tuple(settings["image_shape"][:2])
    return checkpoint_input(folder, "vit", "VisionTransformer")


# Our constructor arguments and the config keys of a Hugging Face ViT, beyond the shared ones.
_ARGUMENTS = {
    "hidden_dim": "hidden_size",
    "num_layers": "num_hidden_layers",
    "num_heads": "num_attention_heads",
    "mlp_dim": "intermediate_size",
    "layer_norm_epsilon": ("layer_norm_eps", 1e-12),
}


def _tensor_layout(sizes, prefix):
    """The tensors a Hugging Face ViT config implies, as the folder names them.

    Args:
        sizes: the config's `ConfigSizes`.
        prefix: "vit." in a classifier folder, "" in a backbone (`ViTModel`) one.
    """
    hidden, mlp = sizes("hidden_size"), sizes("intermediate_size")
    layers, patch = sizes("num_hidden_layers"), sizes("patch_size")
    sizes.divisible(hidden, sizes("num_attention_heads"))
    if isinstance(sizes.config.get("image_size"), list):
        sides = (sizes.item("image_size", 0), sizes.item("image_size", 1))
    else:
        sides = (sizes("image_size"),) * 2
    rows, cols = (side // patch for side in sides)
    positions = Size(
        1 + rows * cols,
        f"image_size is {sizes.config['image_size']} and {patch.reason}: "
        f"1 + {rows}x{cols} positions",
    )
    # Each encoder layer's Linears and LayerNorms: the shape of `.weight` (`.bias` its first).
    shapes = {
        "attention.output.dense": (hidden, hidden),
        "intermediate.dense": (mlp, hidden),  # Linear weights are (out, in)
        "output.dense": (hidden, mlp),
        "layernorm_before": (hidden,),
        "layernorm_after": (hidden,),
        **{f"attention.attention.{name}": (hidden, hidden) for name in QKV},
    }
    required = {
        f"{prefix}embeddings.patch_embeddings.projection.weight": (
            hidden,
            sizes("num_channels", 3),
            patch,
            patch,
        ),
        f"{prefix}embeddings.patch_embeddings.projection.bias": (hidden,),
        f"{prefix}embeddings.cls_token": (1, 1, hidden),
        f"{prefix}embeddings.position_embeddings": (1, positions, hidden),
    }
    for index in range(layers):
        for part, shape in shapes.items():
            required[f"{prefix}encoder.layer.{index}.{part}.weight"] = shape
            required[f"{prefix}encoder.layer.{index}.{part}.bias"] = shape[:1]
    required[f"{prefix}layernorm.weight"] = required[f"{prefix}layernorm.bias"] = (hidden,)
    # ViTModel's pooler (a Linear and tanh on the class token), which classification skips.
    pooler = {
        f"{prefix}pooler.dense.weight": (hidden, hidden),
        f"{prefix}pooler.dense.bias": (hidden,),
    }
    numbered = (NumberedParts(layers, f"{prefix}encoder.layer.{{}}.", "layers"),)
    return TensorLayout(required, pooler, numbered)


def position_table_values(positions, checkpoint_grid, model):
    """Our position weights from a checkpoint's `(1 + h * w, D)` table (class token first).

    The patch rows, row-major over the checkpoint's `(h, w)` grid, are
    bilinearly resized where `model` works on another grid.
    """
    rows, cols = model.position_embedding.grid_size
    grid = positions[1:]
    if len(grid) != checkpoint_grid[0] * checkpoint_grid[1]:
        raise ValueError(
            f"The checkpoint's position table has {len(grid)} patch rows, not the "
            f"{checkpoint_grid[0]}x{checkpoint_grid[1]} of its image and patch sizes"
        )
    grid = grid.reshape(*checkpoint_grid, positions.shape[-1])  # (h, w, D)
    if tuple(checkpoint_grid) != (rows, cols):
        from keras_attention.layers.position.position_grid import resize_position_grid

        grid = np.asarray(resize_position_grid(grid, (rows, cols)))
    return {
        "position_embedding/prefix_embeddings": positions[:1],
        "position_embedding/grid_embeddings": grid,
    }


def _our_weights(weights, config, model):
    """`{our variable path: value}` from the checkpoint's `weights` (PyTorch layouts)."""
    hidden = config["hidden_size"]
    heads = config["num_attention_heads"]
    patch = config["patch_size"]
    checkpoint_grid = tuple(side // patch for side in pair(config["image_size"]))
    positions = weights["embeddings.position_embeddings"][0]  # (1 + h * w, D)
    values = position_table_values(positions, checkpoint_grid, model)
    values.update(
        {
            # Conv2d (D, C, P, P) -> Keras (P, P, C, D)
            "patch_embedding/projection/kernel": weights[
                "embeddings.patch_embeddings.projection.weight"
            ].transpose(2, 3, 1, 0),
            "patch_embedding/projection/bias": weights[
                "embeddings.patch_embeddings.projection.bias"
            ],
            "class_token/token": weights["embeddings.cls_token"],
            "final_norm/gamma": weights["layernorm.weight"],
            "final_norm/beta": weights["layernorm.bias"],
        }
    )
    for index in range(config["num_hidden_layers"]):
        ours, theirs = f"encoder_block_{index}", f"encoder.layer.{index}"
        attention = {name: f"{theirs}.attention.attention.{name}" for name in QKV}
        attention["attention_output"] = f"{theirs}.attention.output.dense"
        values.update(
            attention_values(weights, f"{ours}/self_attention_layer", attention, hidden, heads)
        )
        values.update(
            norm_and_dense_values(
                weights,
                norms=(
                    (f"{theirs}.layernorm_before", f"{ours}/self_attention_layer_norm"),
                    (f"{theirs}.layernorm_after", f"{ours}/feedforward_layer_norm"),
                ),
                denses=(
                    (f"{theirs}.intermediate.dense", f"{ours}/feedforward_intermediate_dense"),
                    (f"{theirs}.output.dense", f"{ours}/feedforward_output_dense"),
                ),
            )
        )
    return values


# How `hf_image_checkpoints.classifier_from_checkpoint` reads a Hugging Face ViT folder.
HUGGINGFACE_VIT = CheckpointFamily("vit", _OPTIONS, _ARGUMENTS, _tensor_layout, _our_weights)
