"""Reading a pretrained checkpoint folder as users download it: its kind, config and weights.

A Hugging Face folder (what `save_pretrained` writes) holds `config.json`
with a `model_type`, and its weights in `model.safetensors` (or shards
listed in `model.safetensors.index.json`, or a PyTorch `pytorch_model.bin`);
a keras-hub preset folder (what `save_to_preset` writes) holds
`metadata.json` with a `keras_version` and a `config.json` naming a
keras-hub class. The weights are read with `safetensors` alone: neither
transformers nor torch is needed (torch only for a `pytorch_model.bin`,
read with its weights-only loader, which runs no code a pickle holds). A
file that cannot be read stops with one line naming it, never a traceback;
`checkpoint_consistency` then checks the folder against itself.

Example:

>>> import json, os, tempfile
>>> import numpy as np
>>> from safetensors.numpy import save_file
>>> from keras_attention.models.checkpoints.checkpoint_folders import checkpoint_kind
>>> from keras_attention.models.checkpoints.checkpoint_folders import read_state_dict
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


def checkpoint_kind(folder, argument="preset"):
    """ "huggingface" or "keras_hub", as the folder's files say; a ValueError otherwise.

    `argument`: the name the folder came by, for the messages (e.g. "checkpoint").
    """
    if not os.path.isdir(folder):
        named = os.sep not in os.fspath(folder)  # a bare name may be meant as a preset's
        what = "neither a folder nor a preset name keras-hub knows" if named else "not a folder"
        raise ValueError(
            f"`{argument}` must be a checkpoint folder (or a preset name). "
            f"Received: {argument}={folder!r}, which is {what}"
        )
    if os.path.isfile(os.path.join(folder, KERAS_HUB_METADATA_FILE)):
        return "keras_hub"
    config = read_json(folder, CONFIG_FILE)
    if "model_type" in config:
        return "huggingface"
    raise ValueError(
        f"`{argument}` must be a Hugging Face checkpoint folder ({CONFIG_FILE} with a model_type) "
        f"or a keras-hub preset folder ({KERAS_HUB_METADATA_FILE}). "
        f"Received: {argument}={folder!r}"
    )


def read_json(folder, name, required=True):
    """The JSON object in the file `name` of `folder` ({} when absent and not `required`).

    Raises:
        ValueError: naming the file: it is missing (and `required`), is not
            JSON, or holds something other than an object.
    """
    path = os.path.join(folder, name)
    if not os.path.isfile(path):
        if required:
            # A training run's folder is exported by `python -m keras_attention.export`.
            run = " (a training run's folder: `python -m keras_attention.export` exports it)"
            is_run = os.path.isfile(os.path.join(folder, "run_arguments.json"))
            raise ValueError(
                f"The checkpoint folder {folder!r} has no {name}" + (run if is_run else "")
            )
        return {}
    try:
        with open(path, encoding="utf-8") as file:
            data = json.load(file)
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not valid JSON ({error})") from None
    except UnicodeDecodeError as error:
        raise ValueError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a JSON object was expected, not {_json_kind(data)}")
    return data


def read_config_of_kind(folder, key, expected, requirement):
    """The folder's `config.json`, checked to have `key` equal to `expected`.

    Args:
        folder: the checkpoint folder.
        key: the config entry that names the kind of model, e.g. "model_type".
        expected: its value for the reader's kind, e.g. "marian".
        requirement: the start of the message, e.g. "`preset` must be a Marian
            checkpoint folder".

    Raises:
        ValueError: one line with `requirement`, the folder and the value found.

    Example:

    >>> import json, os, tempfile
    >>> from keras_attention.models.checkpoints.checkpoint_folders import read_config_of_kind
    >>> folder = tempfile.mkdtemp()
    >>> with open(os.path.join(folder, "config.json"), "w") as file:
    ...     _ = file.write(json.dumps({"model_type": "bart"}))
    >>> try:
    ...     read_config_of_kind(folder, "model_type", "marian", "`preset` must be a Marian folder")
    ... except ValueError as error:
    ...     for part in str(error).replace(folder, "FOLDER").split(" Received: "):
    ...         print(part)
    `preset` must be a Marian folder, whose config.json has model_type 'marian'.
    'FOLDER' with model_type 'bart'
    """
    config = read_json(folder, "config.json")
    if config.get(key) != expected:
        raise ValueError(
            f"{requirement}, whose config.json has {key} {expected!r}. "
            f"Received: {folder!r} with {key} {config.get(key)!r}"
        )
    return config


def _json_kind(value):
    kinds = {list: "an array", str: "a string", bool: "true or false", type(None): "null"}
    return kinds.get(type(value), "a number")


class StateDict(dict):
    """`{name: NumPy array}` of a checkpoint's tensors, and the files they were read from.

    Attributes:
        source: the file the weights are read through, as the folder names
            it (`model.safetensors`, `model.safetensors.index.json` for
            shards, or `pytorch_model.bin`).
        files: `{tensor name: the file that holds it}` (a shard's name for
            sharded weights).
    """

    def __init__(self, tensors, source, files=None):
        super().__init__(tensors)
        self.source = source
        self.files = files if files is not None else dict.fromkeys(tensors, source)


def read_state_dict(folder):
    """The `StateDict` of a Hugging Face folder's weights, as float32 where they are floats.

    Raises:
        ValueError: the folder holds no weights file this reads, only a
            `pytorch_model.bin` and torch is not installed, or a weights
            file is missing, damaged or refused (the message names it).
    """
    if os.path.isfile(os.path.join(folder, SAFETENSORS_FILE)):
        tensors = _read_safetensors(os.path.join(folder, SAFETENSORS_FILE))
        return StateDict(_as_float32(tensors), SAFETENSORS_FILE)
    if os.path.isfile(os.path.join(folder, SAFETENSORS_INDEX_FILE)):
        return _read_shards(folder)
    pickled = os.path.join(folder, PYTORCH_FILE)
    if os.path.isfile(pickled):
        return StateDict(_read_pytorch_file(pickled), PYTORCH_FILE)
    raise ValueError(
        f"The checkpoint folder {folder!r} holds no weights: {SAFETENSORS_FILE}, "
        f"{SAFETENSORS_INDEX_FILE} or {PYTORCH_FILE} was expected"
    )


def _read_safetensors(path):
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    try:
        return load_file(path)
    except (SafetensorError, OSError) as error:
        raise ValueError(
            f"{path}: not a readable safetensors file ({_first_line(error)}); it may be cut "
            "short or damaged: download it again"
        ) from None


def _read_shards(folder):
    """The tensors of the shards `model.safetensors.index.json` lists, each where it says."""
    index = os.path.join(folder, SAFETENSORS_INDEX_FILE)
    weight_map = read_json(folder, SAFETENSORS_INDEX_FILE).get("weight_map")
    if not isinstance(weight_map, dict) or not all(
        isinstance(shard, str) for shard in weight_map.values()
    ):
        raise ValueError(f"{index}: a weight_map of tensor names to shard files was expected")
    tensors, files = {}, {}
    for shard in sorted(set(weight_map.values())):
        listed = sorted(name for name, where in weight_map.items() if where == shard)
        path = os.path.join(folder, shard)
        if not os.path.isfile(path):
            raise ValueError(
                f"{index}: weight_map puts {len(listed)} tensor(s) (e.g. {listed[0]}) in "
                f"{shard}, which is not in the folder"
            )
        held = _read_safetensors(path)
        absent = [name for name in listed if name not in held]
        if absent:
            raise ValueError(
                f"{index}: weight_map puts {absent[0]} in {shard}, which does not hold it"
            )
        tensors.update(held)
        files.update(dict.fromkeys(held, shard))
    return StateDict(_as_float32(tensors), SAFETENSORS_INDEX_FILE, files)


def _read_pytorch_file(path):
    """`{name: NumPy array}` of a `pytorch_model.bin`, read with torch's weights-only loader.

    A refusal of that loader, a damaged file, or anything but a dict of
    tensors stops with one line naming the file.
    """
    import pickle

    try:
        import torch
    except ImportError:
        raise ValueError(
            f"{path} is a PyTorch pickle, which needs torch to read. Install torch, or save "
            "the checkpoint as safetensors (transformers' save_pretrained does by default)"
        ) from None
    try:
        # weights_only: torch unpickles tensors and plain containers, and runs nothing else.
        state = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as error:
        raise ValueError(
            f"{path}: refused by torch's weights-only loader ({_unpickling_reason(error)}): it "
            "holds something other than tensors, or is damaged. Nothing in it was run; "
            "re-save the weights as safetensors from a copy you trust"
        ) from None
    except (RuntimeError, OSError, EOFError, ValueError) as error:
        raise ValueError(
            f"{path}: not a readable PyTorch checkpoint ({type(error).__name__}: "
            f"{_first_line(error)}); it may be cut short or damaged: download it again"
        ) from None
    if not isinstance(state, dict):
        raise ValueError(
            f"{path}: a dict of tensor names to tensors was expected, not a {type(state).__name__}"
        )
    for name, tensor in state.items():
        if not isinstance(tensor, torch.Tensor):
            raise ValueError(f"{path}: {name} holds a {type(tensor).__name__}, not a tensor")
    # bfloat16 has no NumPy type: floats go through float32; integer buffers stay integers.
    return {
        name: (tensor.float() if tensor.is_floating_point() else tensor).numpy()
        for name, tensor in state.items()
    }


def _unpickling_reason(error):
    """What torch's weights-only refusal met (torch words it apart from general advice)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    for index, line in enumerate(lines):
        if "WeightsUnpickler error:" in line:
            reason = line.split("WeightsUnpickler error:", 1)[1].strip()
            reason = reason or (lines[index + 1] if index + 1 < len(lines) else "")
        elif "unsupported" in line.lower():
            reason = line
        else:
            continue
        return reason.split(". Please")[0].rstrip(".")
    return _first_line(error)


def _first_line(error):
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _as_float32(weights):
    # bfloat16 / float16 checkpoints: our models build float32 variables.
    return {
        name: value.astype("float32") if value.dtype.kind == "f" else value
        for name, value in weights.items()
    }


def model_from_config(model_class, config, names, overrides, **derived):
    """`model_class` of a checkpoint config's architecture; the caller's `overrides` win.

    Args:
        model_class: our model class.
        config: the checkpoint's config, a dict.
        names: `{our argument: config key}`, or `{our argument: (config key,
            default)}` for a key the config may leave out. A JSON array
            becomes a tuple, as our constructors keep sequences.
        overrides: the constructor arguments the caller gave.
        **derived: our arguments that are not one key of the config.

    Returns:
        the model, its weights not yet assigned.

    Example:

    >>> import keras
    >>> from keras_attention.models.checkpoints.checkpoint_folders import model_from_config
    >>> model = model_from_config(
    ...     keras.layers.Dense, {"width": 4}, {"units": "width", "use_bias": ("bias", False)},
    ...     {"name": "head"})
    >>> model.units, model.use_bias, model.name
    (4, False, 'head')
    """
    arguments = {}
    for ours, key in names.items():
        value = config[key] if isinstance(key, str) else config.get(*key)
        arguments[ours] = tuple(value) if isinstance(value, list) else value
    return model_class(**{**arguments, **derived, **overrides})


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
