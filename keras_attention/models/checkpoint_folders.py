"""Reading a pretrained checkpoint folder as users download it: its kind, config and weights.

A Hugging Face folder (what `save_pretrained` writes) holds `config.json`
with a `model_type`, and its weights in `model.safetensors` (or shards
listed in `model.safetensors.index.json`, or a PyTorch `pytorch_model.bin`);
a keras-hub preset folder (what `save_to_preset` writes) holds
`metadata.json` with a `keras_version` and a `config.json` naming a
keras-hub class. The weights are read with `safetensors` alone: neither
transformers nor torch is needed (torch only for a `pytorch_model.bin`).

Example:

>>> import json, os, tempfile
>>> import numpy as np
>>> from safetensors.numpy import save_file
>>> from keras_attention.models.checkpoint_folders import checkpoint_kind, read_state_dict
>>> folder = tempfile.mkdtemp()
>>> _ = open(os.path.join(folder, "config.json"), "w").write(json.dumps({"model_type": "vit"}))
>>> save_file({"norm.weight": np.ones(4, "float32")}, os.path.join(folder, "model.safetensors"))
>>> checkpoint_kind(folder), read_state_dict(folder)["norm.weight"].shape
('huggingface', (4,))
"""

import json
import os

CONFIG_FILE = "config.json"
SAFETENSORS_FILE = "model.safetensors"
SAFETENSORS_INDEX_FILE = "model.safetensors.index.json"
PYTORCH_FILE = "pytorch_model.bin"
KERAS_HUB_METADATA_FILE = "metadata.json"


def checkpoint_kind(folder):
    """ "huggingface" or "keras_hub", as the folder's files say; a ValueError otherwise."""
    if not os.path.isdir(folder):
        raise ValueError(
            "`preset` must be a checkpoint folder (or a preset name). "
            f"Received: preset={folder!r}, which is not a folder"
        )
    if os.path.isfile(os.path.join(folder, KERAS_HUB_METADATA_FILE)):
        return "keras_hub"
    config = read_json(folder, CONFIG_FILE)
    if "model_type" in config:
        return "huggingface"
    raise ValueError(
        f"`preset` must be a Hugging Face checkpoint folder ({CONFIG_FILE} with a model_type) or "
        f"a keras-hub preset folder ({KERAS_HUB_METADATA_FILE}). Received: preset={folder!r}"
    )


def read_json(folder, name, required=True):
    """The JSON file `name` of `folder` as a dict ({} when absent and not `required`)."""
    path = os.path.join(folder, name)
    if not os.path.isfile(path):
        if required:
            raise ValueError(f"The checkpoint folder {folder!r} has no {name}")
        return {}
    with open(path, encoding="utf-8") as file:
        return json.load(file)


def read_state_dict(folder):
    """`{name: NumPy array}` of a Hugging Face folder's weights, as float32 where they are floats.

    Raises:
        ValueError: the folder holds no weights file this reads, or only a
            `pytorch_model.bin` and torch is not installed.
    """
    from safetensors.numpy import load_file

    single = os.path.join(folder, SAFETENSORS_FILE)
    if os.path.isfile(single):
        return _as_float32(load_file(single))
    index = os.path.join(folder, SAFETENSORS_INDEX_FILE)
    if os.path.isfile(index):
        shards = sorted(set(read_json(folder, SAFETENSORS_INDEX_FILE)["weight_map"].values()))
        weights = {}
        for shard in shards:
            weights.update(load_file(os.path.join(folder, shard)))
        return _as_float32(weights)
    pickled = os.path.join(folder, PYTORCH_FILE)
    if os.path.isfile(pickled):
        return _read_pytorch_file(pickled)
    raise ValueError(
        f"The checkpoint folder {folder!r} holds no weights: {SAFETENSORS_FILE}, "
        f"{SAFETENSORS_INDEX_FILE} or {PYTORCH_FILE} was expected"
    )


def _read_pytorch_file(path):
    try:
        import torch
    except ImportError:
        raise ValueError(
            f"{path} is a PyTorch pickle, which needs torch to read. Install torch, or save "
            "the checkpoint as safetensors (transformers' save_pretrained does by default)"
        ) from None
    state = torch.load(path, map_location="cpu", weights_only=True)
    return _as_float32({name: tensor.float().numpy() for name, tensor in state.items()})


def _as_float32(weights):
    # bfloat16 / float16 checkpoints: our models build float32 variables.
    return {
        name: value.astype("float32") if value.dtype.kind == "f" else value
        for name, value in weights.items()
    }


def assign_weights(model, values, source):
    """Assigns `values[variable.path]` to every weight of `model`; names what does not fit.

    Args:
        model: a built Keras model.
        values: `{variable path: NumPy array}`, one per weight of `model`.
        source: the checkpoint folder, for the messages.
    """
    weights = {weight.path: weight for weight in model.weights}
    missing = sorted(set(weights) - set(values))
    if missing:
        raise ValueError(
            f"The checkpoint {source!r} gives no value for {len(missing)} weight(s) of the "
            f"model, e.g. {missing[:3]}"
        )
    for path, weight in weights.items():
        value = values[path]
        if tuple(value.shape) != tuple(weight.shape):
            raise ValueError(
                f"The checkpoint {source!r} gives {path} the shape {tuple(value.shape)}; the "
                f"model's weight has {tuple(weight.shape)}"
            )
        weight.assign(value)


def attention_values(weights, ours, theirs, hidden, heads):
    """Our attention weights `ours/{query,key,value,attention_output}/...` from PyTorch Linears.

    Args:
        weights: the checkpoint's state dict.
        ours: our attention layer's path.
        theirs: `{"query", "key", "value", "attention_output"}` -> the prefix
            of the checkpoint's `nn.Linear` for it (its `.weight` `(out, in)`
            and `.bias`).
        hidden, heads: the model width and its number of heads.
    """
    head_dim = hidden // heads
    values = {}
    for name in ("query", "key", "value"):
        kernel = weights[f"{theirs[name]}.weight"]  # (D out, D in)
        values[f"{ours}/{name}/kernel"] = kernel.T.reshape(hidden, heads, head_dim)
        values[f"{ours}/{name}/bias"] = weights[f"{theirs[name]}.bias"].reshape(heads, head_dim)
    output = theirs["attention_output"]
    kernel = weights[f"{output}.weight"]  # (D out, D in)
    values[f"{ours}/attention_output/kernel"] = kernel.T.reshape(heads, head_dim, hidden)
    values[f"{ours}/attention_output/bias"] = weights[f"{output}.bias"]
    return values


def norm_and_dense_values(weights, norms=(), denses=()):
    """Our LayerNorms and Dense layers from PyTorch's `nn.LayerNorm`s and `nn.Linear`s.

    Args:
        weights: the checkpoint's state dict.
        norms: `(their prefix, our path)` pairs: `.weight` -> gamma, `.bias` -> beta.
        denses: `(their prefix, our path)` pairs: `.weight` transposed -> kernel, `.bias`.
    """
    values = {}
    for theirs, ours in norms:
        values[f"{ours}/gamma"] = weights[f"{theirs}.weight"]
        values[f"{ours}/beta"] = weights[f"{theirs}.bias"]
    for theirs, ours in denses:
        values[f"{ours}/kernel"] = weights[f"{theirs}.weight"].T  # (out, in) -> (in, out)
        values[f"{ours}/bias"] = weights[f"{theirs}.bias"]
    return values
