"""What Hugging Face image-classification checkpoints share: config checks, processor, head.

A `*ForImageClassification` folder (ViT, Swin) holds a `classifier`
(`Linear(hidden, num_labels)`) and `id2label` in `config.json`, and a
`preprocessor_config.json` saying how images are resized and normalised;
a backbone folder (`ViTModel`, `SwinModel`) holds neither classifier nor
labels. The readers of each family (`vit_checkpoints`, `swin_checkpoints`)
map the encoder; this module the rest, and checks the folder against itself
before building the model (`checkpoint_consistency`): the encoder's tensors
against the config, the classifier's rows against `id2label`.
"""

from typing import NamedTuple

import numpy as np

from keras_attention.models.checkpoints.checkpoint_consistency import ConfigSizes
from keras_attention.models.checkpoints.checkpoint_consistency import Size
from keras_attention.models.checkpoints.checkpoint_consistency import check_tensors
from keras_attention.models.checkpoints.checkpoint_folders import assign_weights
from keras_attention.models.checkpoints.checkpoint_folders import model_from_config
from keras_attention.models.checkpoints.checkpoint_folders import read_config_of_kind
from keras_attention.models.checkpoints.checkpoint_folders import read_json
from keras_attention.models.checkpoints.checkpoint_folders import read_state_dict

PREPROCESSOR_FILE = "preprocessor_config.json"
# The constructor arguments of every image family, and their config keys.
_IMAGE_ARGUMENTS = {"patch_size": "patch_size", "channels": ("num_channels", 3)}


def pair(size):
    """`(height, width)` of a size given as one side or two."""
    return tuple(size) if isinstance(size, (list, tuple)) else (size, size)


def checkpoint_config(folder, model_type, model_name, options):
    """The folder's `config.json`, checked to be of `model_type` with the `options` we have.

    Args:
        folder: the checkpoint folder.
        model_type: the Hugging Face `model_type`, e.g. "vit".
        model_name: our model's class name, for the messages.
        options: `{config key: the value our model has}`; a checkpoint with
            another value is refused.
    """
    config = read_config_of_kind(
        folder,
        "model_type",
        model_type,
        f"`folder` must hold a Hugging Face {model_name} checkpoint",
    )
    for option, expected in options.items():
        if config.get(option, expected) != expected:
            raise ValueError(
                f"The checkpoint's {option}={config[option]!r} has no equivalent in "
                f"{model_name} (which has {option}={expected!r}). Received: {folder!r}"
            )
    return config


class CheckpointFamily(NamedTuple):
    """What reading one family's Hugging Face folders needs beyond what the families share.

    Attributes:
        model_type: the `model_type` of its `config.json`, e.g. "vit".
        options: `{config option: the value our model has}`, see `checkpoint_config`.
        arguments: `{our constructor argument: config key}` (or `(config
            key, default)`) of the family's architecture, see
            `checkpoint_folders.model_from_config`.
        tensor_layout: `tensor_layout(sizes, prefix)`, the
            `checkpoint_consistency.TensorLayout` of the encoder a config
            implies (its `ConfigSizes`), tensor names starting with `prefix`
            ("vit." in a classifier folder, "" in a backbone one); its final
            norm, `{prefix}layernorm.weight`, is as wide as the classifier's input.
        weight_values: `weight_values(weights, config, model)`, its
            `{our variable path: value}`, all but the head's.
    """

    model_type: str
    options: dict
    arguments: dict
    tensor_layout: object
    weight_values: object

    def read(self, folder, model_class, **overrides):
        """`model_class` holding the folder's weights (`classifier_from_checkpoint`)."""
        return classifier_from_checkpoint(folder, model_class, self, overrides)


def classifier_from_checkpoint(folder, model_class, family, overrides):
    """Builds `model_class` holding a Hugging Face image-classifier folder's weights.

    What the families share: the config checked (`checkpoint_config`), the
    weights read (the `vit.` / `swin.` prefix of a classifier removed, so
    that classifier and backbone folders read alike), the input size and
    normalisation of the image processor, and the head (`HeadSettings`).
    `VisionTransformer.from_preset`, `SwinTransformer.from_preset` and the
    converter read Hugging Face image folders with it, through
    `checkpoint_readers.CHECKPOINT_READERS`.

    Args:
        folder: the checkpoint folder (`config.json`, `model.safetensors`,
            optionally `preprocessor_config.json`).
        model_class: our model class, e.g. `VisionTransformer`.
        family: the family's `CheckpointFamily`.
        overrides: constructor arguments the caller gave, which win over the
            checkpoint's. Among them: `num_classes`, by default the
            checkpoint's classifier's (a backbone-only folder needs it);
            another number gives a new, zero-initialised head, for
            fine-tuning on other classes. `class_names`, by default the
            checkpoint's `id2label` when its head is kept. `include_head`
            (default True): keep the checkpoint's classifier where its
            classes are `num_classes`; False always starts a new head.
            `ignore_unexpected_weights` (default False): read a folder
            holding tensors its config does not account for, without them.

    Returns:
        the model, its weights assigned.

    Raises:
        ValueError: a checkpoint of another architecture, options our
            model does not have, or a folder that disagrees with itself
            (`checkpoint_consistency.check_tensors`).
    """
    config = checkpoint_config(folder, family.model_type, model_class.__name__, family.options)
    overrides = dict(overrides)
    tensors = read_state_dict(folder)
    # A classifier folder prefixes the encoder ("vit.", "swin."); a backbone folder does not.
    prefix = family.model_type + "."
    prefix = prefix if any(name.startswith(prefix) for name in tensors) else ""
    sizes = ConfigSizes(folder, config)
    layout = family.tensor_layout(sizes, prefix)
    width = layout.required[f"{prefix}layernorm.weight"][0]
    classifier = _classifier_tensors(sizes, tensors, width)
    layout = layout._replace(required={**layout.required, **classifier})
    check_tensors(folder, tensors, layout, overrides.pop("ignore_unexpected_weights", False))
    weights = {name.removeprefix(prefix): value for name, value in tensors.items()}
    head = classifier_settings(
        config,
        weights,
        overrides.pop("num_classes", None),
        overrides.pop("class_names", None),
        overrides.pop("include_head", True),
        folder,
    )
    image_size, rescaling = processor_settings(folder, config)
    model = model_from_config(
        model_class,
        config,
        {**_IMAGE_ARGUMENTS, **family.arguments},
        overrides,
        image_size=image_size,
        num_classes=head.num_classes,
        rescaling=rescaling,
        class_names=head.class_names,
    )
    values = family.weight_values(weights, config, model)
    values.update(head.values(weights, model))
    assign_weights(model, values, folder)
    return model


def checkpoint_input(folder, model_type, model_name):
    """`(patch_size, (height, width))` a Hugging Face image folder's model reads its images at.

    Raises:
        ValueError: the folder is not a checkpoint of `model_type`.
    """
    config = checkpoint_config(folder, model_type, model_name, {})
    return config["patch_size"], processor_settings(folder, config)[0]


def processor_settings(folder, config):
    """`(image_size, rescaling)`: the size the image processor resizes to and our rescaling."""
    processor = read_json(folder, PREPROCESSOR_FILE, required=False)
    size = processor.get("size")
    if isinstance(size, dict) and "height" in size and "width" in size:
        image_size = (int(size["height"]), int(size["width"]))
    elif isinstance(size, dict) and "shortest_edge" in size:
        image_size = pair(int(size["shortest_edge"]))
    else:
        image_size = pair(config["image_size"])
    channels = config.get("num_channels", 3)
    if not processor.get("do_normalize", True):
        return image_size, "unit"
    mean = list(processor.get("image_mean", [0.5] * channels))
    std = list(processor.get("image_std", [0.5] * channels))
    if mean == [0.5] * channels and std == [0.5] * channels:
        return image_size, "symmetric"  # (x / 255 - 0.5) / 0.5 = x / 127.5 - 1
    return image_size, {"mean": mean, "std": std}


class HeadSettings(NamedTuple):
    """The head a model from a checkpoint gets: its classes, their names, whether it is kept."""

    num_classes: int
    class_names: object
    kept: bool

    def values(self, weights, model):
        """Our head's values: the checkpoint's classifier, or the model's fresh (zero) head."""
        if not self.kept:
            return new_head_values(model)
        return {
            "head/kernel": weights["classifier.weight"].T,
            "head/bias": weights["classifier.bias"],
        }


def classifier_settings(config, weights, num_classes, class_names, include_head, folder):
    """The `HeadSettings` for the arguments a reader was given (see its docstring)."""
    checkpoint_classes = (
        weights["classifier.weight"].shape[0] if "classifier.weight" in weights else None
    )
    kept = include_head and checkpoint_classes is not None
    kept = kept and num_classes in (None, checkpoint_classes)
    if num_classes is None:
        if not kept:
            raise ValueError(
                "`num_classes` must be given for a new head (a backbone checkpoint has no "
                f"classifier; include_head={include_head}). Received: num_classes=None, "
                f"folder={folder!r}"
            )
        num_classes = checkpoint_classes
    if class_names is None and kept:
        class_names = _class_names(config, num_classes)
    return HeadSettings(num_classes, class_names, kept)


def _classifier_tensors(sizes, tensors, width):
    """The classifier's tensors, one row per class `id2label` names; none in a backbone folder."""
    if "classifier.weight" not in tensors and "classifier.bias" not in tensors:
        return {}
    labels = sizes.config.get("id2label")
    if not labels:
        classes = None  # any number of rows: the config names no classes
    else:
        keys = sorted(str(key) for key in labels)
        if keys != sorted(str(index) for index in range(len(labels))):
            raise ValueError(
                f"{sizes.path}: id2label has the keys {keys}; the class indices "
                f"0 .. {len(labels) - 1} were expected"
            )
        classes = Size(len(labels), f"id2label names {len(labels)} classes")
    return {"classifier.weight": (classes, width), "classifier.bias": (classes,)}


def new_head_values(model):
    """A new head's values: the model's own initial (zero) weights."""
    return {"head/kernel": np.asarray(model.head.kernel), "head/bias": np.asarray(model.head.bias)}


def huggingface_class_names(folder):
    """The class names of a Hugging Face classifier folder (its `id2label`), or None."""
    config = read_json(folder, "config.json")
    count = len(config.get("id2label") or {})
    return _class_names(config, count) if count else None


def _class_names(config, num_classes):
    labels = config.get("id2label") or {}
    names = [labels.get(str(index), labels.get(index)) for index in range(num_classes)]
    return None if any(name is None for name in names) else [str(name) for name in names]
