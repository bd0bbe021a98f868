"""A Vision Transformer from a keras-hub ViT preset folder (`ViTBackbone`, `ViTImageClassifier`).

A folder written by keras-hub's `save_to_preset` is loaded with keras-hub
itself (a dependency of this package), and its weights move one to one onto
our Vision Transformer: the same pre-norm blocks with exact GELU, class
token, learned position table and token pooling; its image converter's
`scale` and `offset` become our `rescaling`.
"""

import numpy as np

from keras_attention.models.checkpoints.checkpoint_folders import assign_weights
from keras_attention.models.checkpoints.checkpoint_folders import model_from_config
from keras_attention.models.checkpoints.checkpoint_folders import read_config_of_kind
from keras_attention.models.checkpoints.checkpoint_folders import read_json
from keras_attention.models.checkpoints.hf_image_checkpoints import new_head_values
from keras_attention.models.checkpoints.hf_image_checkpoints import pair
from keras_attention.models.checkpoints.vit_checkpoints import position_table_values

# keras-hub's block parts -> ours.
_BLOCK_PARTS = {
    "ln_1": "self_attention_layer_norm",
    "mha": "self_attention_layer",
    "ln_2": "feedforward_layer_norm",
    "mlp/dense_1": "feedforward_intermediate_dense",
    "mlp/dense_2": "feedforward_output_dense",
}
# Our constructor arguments and the keys of the backbone's config.
_ARGUMENTS = {
    "hidden_dim": "hidden_dim",
    "num_layers": "num_layers",
    "num_heads": "num_heads",
    "mlp_dim": "mlp_dim",
    "layer_norm_epsilon": ("layer_norm_epsilon", 1e-6),
}


def vision_transformer_from_keras_hub(
    folder, model_class, *, num_classes=None, include_head=True, **kwargs
):
    """Builds a Vision Transformer holding the weights of a keras-hub ViT preset folder.

    Args:
        folder: the preset folder (`config.json`, `model.weights.h5`, and for
            a classifier `task.json` and `task.weights.h5`).
        model_class: our Vision Transformer class (`VisionTransformer`).
        num_classes: the classes of the head. Default: the classifier's; a
            backbone-only preset needs it. Another number gives a new,
            zero-initialised head.
        include_head: keep the preset's classifier where its classes are
            `num_classes`; False always starts a new head.
        **kwargs: other `VisionTransformer` arguments (`image_size`,
            `class_names`, `dropout`, ...).

    Returns:
        a `model_class`.

    Raises:
        ValueError: a preset of another model, or options ours does not have
            (no class token, biases left out, a pre-logits layer).
    """
    settings = _backbone_settings(folder)
    task = read_json(folder, "task.json", required=False)
    source, scale, offset = _keras_hub_model(folder, task)
    weights = {weight.path: np.asarray(weight) for weight in source.weights}
    checkpoint_classes = weights["predictions/kernel"].shape[1] if task else None
    keep_head = include_head and task and num_classes in (None, checkpoint_classes)
    if num_classes is None:
        if not keep_head:
            raise ValueError(
                "`num_classes` must be given for a new head (a backbone preset has no "
                f"classifier; include_head={include_head}). Received: num_classes=None"
            )
        num_classes = checkpoint_classes
    height, width, channels = settings["image_shape"]
    patch_rows, patch_cols = pair(settings["patch_size"])
    if patch_rows != patch_cols:
        raise ValueError(
            f"VisionTransformer has square patches. Received: {settings['patch_size']}"
        )
    model = model_from_config(
        model_class,
        settings,
        _ARGUMENTS,
        kwargs,
        image_size=(height, width),
        patch_size=patch_rows,
        num_classes=num_classes,
        channels=channels,
        rescaling=_rescaling(scale, offset, channels),
    )
    grid = (height // patch_rows, width // patch_cols)
    values = _our_weights(weights, settings["num_layers"], grid, model)
    values.update(
        {"head/kernel": weights["predictions/kernel"], "head/bias": weights["predictions/bias"]}
        if keep_head
        else new_head_values(model)
    )
    assign_weights(model, values, folder)
    return model


def _backbone_settings(folder):
    """The `ViTBackbone` config of the preset's `config.json`, checked to be one ours can hold."""
    config = read_config_of_kind(
        folder, "class_name", "ViTBackbone", "`folder` must hold a keras-hub ViT preset"
    )
    settings = config["config"]
    for option in ("use_class_token", "use_mha_bias", "use_mlp_bias", "use_patch_bias"):
        if not settings.get(option, True):
            raise ValueError(
                f"The preset's {option}=False has no equivalent in VisionTransformer. "
                f"Received: {folder!r}"
            )
    return settings


def _keras_hub_model(folder, task):
    """`(keras-hub model, scale, offset)`: the classifier where `task` is, else the backbone.

    `scale` and `offset` are its image converter's (`x * scale + offset`).
    """
    import keras_hub

    if task:
        source = keras_hub.models.ViTImageClassifier.from_preset(folder)
        _check_task(task["config"], folder)
        return (source, *_converter_scale_offset(source.preprocessor))
    source = keras_hub.models.ViTBackbone.from_preset(folder)
    return source, 1 / 127.5, -1.0  # keras-hub's ViT converter default


def _check_task(task_config, folder):
    if task_config.get("pooling", "token") != "token" or task_config.get("intermediate_dim"):
        raise ValueError(
            "VisionTransformer's head is a Dense layer on the class token: the preset's "
            f"pooling={task_config.get('pooling')!r}, intermediate_dim="
            f"{task_config.get('intermediate_dim')!r} have no equivalent. Received: {folder!r}"
        )


def _converter_scale_offset(preprocessor):
    converter = getattr(preprocessor, "image_converter", None)
    if converter is None:
        return 1 / 127.5, -1.0
    return converter.scale, converter.offset


def _rescaling(scale, offset, channels):
    """Our `rescaling` for keras-hub's `x * scale + offset` on pixels 0..255."""
    scales = np.broadcast_to(np.asarray(scale, "float64"), (channels,))
    offsets = np.broadcast_to(np.asarray(offset, "float64"), (channels,))
    if np.allclose(scales, 1 / 127.5) and np.allclose(offsets, -1.0):
        return "symmetric"
    if np.allclose(scales, 1 / 255) and np.allclose(offsets, 0.0):
        return "unit"
    std = 1 / (255 * scales)  # x * scale + offset = (x / 255 - mean) / std
    return {"mean": (-offsets * std).tolist(), "std": std.tolist()}


def _our_weights(weights, num_layers, grid, model):
    """`{our variable path: value}` from keras-hub's `{variable path: value}`."""
    embedding = "vit_patching_and_embedding"
    positions = weights[f"{embedding}/position_embedding/embeddings"]  # (1 + h * w, D)
    values = position_table_values(positions, grid, model)
    values.update(
        {
            "patch_embedding/projection/kernel": weights[f"{embedding}/patch_embedding/kernel"],
            "patch_embedding/projection/bias": weights[f"{embedding}/patch_embedding/bias"],
            "class_token/token": weights[f"{embedding}/class_token"],
            "final_norm/gamma": weights["vit_encoder/ln/gamma"],
            "final_norm/beta": weights["vit_encoder/ln/beta"],
        }
    )
    for index in range(num_layers):
        theirs = f"vit_encoder/transformer_block_{index + 1}/"
        for path, value in weights.items():
            if not path.startswith(theirs):
                continue
            part, variable = path[len(theirs) :].rsplit("/", 1)
            part, _, sublayer = part.partition("/") if part.startswith("mha/") else (part, "", "")
            ours = _BLOCK_PARTS[part] + (f"/{sublayer}" if sublayer else "")
            values[f"encoder_block_{index}/{ours}/{variable}"] = value
    return values
