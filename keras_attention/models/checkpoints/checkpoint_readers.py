"""Which reader turns a pretrained checkpoint folder into which of our models: one table.

A folder's model type is what its own files say: the `model_type` of a
Hugging Face `config.json`, or the class a keras-hub preset's `config.json`
names. `CHECKPOINT_READERS` maps each model type read to its
`CheckpointReader`; every model's `from_preset` and the converter
(`keras_attention.convert`) look a folder up here, so a new kind of
checkpoint is its reader module and one row of this table. A reader takes
the model class to build as an argument and imports none.

Example:

>>> from keras_attention.models.checkpoints.checkpoint_readers import CHECKPOINT_READERS
>>> sorted((name, reader.model_class) for name, reader in CHECKPOINT_READERS.items())
[('ViTBackbone', 'VisionTransformer'), ('marian', 'TransformerTranslator'),
 ('swin', 'SwinTransformer'), ('vit', 'VisionTransformer')]
"""

from typing import NamedTuple

import keras

from keras_attention.models.checkpoints.checkpoint_folders import CONFIG_FILE
from keras_attention.models.checkpoints.checkpoint_folders import checkpoint_kind
from keras_attention.models.checkpoints.checkpoint_folders import read_json
from keras_attention.models.checkpoints.checkpoint_handles import checkpoint_folder
from keras_attention.models.checkpoints.marian_checkpoints import translator_from_marian
from keras_attention.models.checkpoints.swin_checkpoints import HUGGINGFACE_SWIN
from keras_attention.models.checkpoints.vit_checkpoints import HUGGINGFACE_VIT
from keras_attention.models.checkpoints.vit_keras_hub_checkpoints import (
    vision_transformer_from_keras_hub,
)


class CheckpointReader(NamedTuple):
    """How the folders of one model type become one of our models.

    Attributes:
        folder_kind: "huggingface" or "keras_hub" (`checkpoint_folders.checkpoint_kind`).
        model_class: the name of the class it builds, as `keras_attention.models` exports it.
        task: what the model serves: "image classifier" or "translator".
        description: the model in words, for the converter's lines.
        read: `read(folder, model_class, **kwargs)`: the model, its weights
            assigned; `kwargs` are constructor arguments and reading options
            (`ignore_unexpected_weights` for Hugging Face folders,
            `require_tokenizers` for translators).
    """

    folder_kind: str
    model_class: str
    task: str
    description: str
    read: object


CHECKPOINT_READERS = {
    "vit": CheckpointReader(
        "huggingface",
        "VisionTransformer",
        "image classifier",
        "an image classifier (VisionTransformer)",
        HUGGINGFACE_VIT.read,
    ),
    "swin": CheckpointReader(
        "huggingface",
        "SwinTransformer",
        "image classifier",
        "an image classifier (SwinTransformer)",
        HUGGINGFACE_SWIN.read,
    ),
    "ViTBackbone": CheckpointReader(
        "keras_hub",
        "VisionTransformer",
        "image classifier",
        "an image classifier (VisionTransformer, from a keras-hub ViT preset)",
        vision_transformer_from_keras_hub,
    ),
    "marian": CheckpointReader(
        "huggingface",
        "TransformerTranslator",
        "translator",
        "a translator (TransformerTranslator, from a Marian checkpoint)",
        translator_from_marian,
    ),
}

# A folder of a kind and model type, in words.
_FOLDER_NAMES = {"huggingface": "a Hugging Face {!r} folder", "keras_hub": "a keras-hub {} preset"}


def checkpoint_model_type(folder, argument="preset"):
    """`(folder kind, model type)`: "huggingface" or "keras_hub", and the type its config names.

    The model type is None where a keras-hub config names no class.
    `argument`: the name the folder came by, for the messages.

    Raises:
        ValueError: `folder` is not a checkpoint folder (`checkpoint_kind`).
    """
    kind = checkpoint_kind(folder, argument)
    config = read_json(folder, CONFIG_FILE, required=kind == "huggingface")
    return kind, config.get("model_type" if kind == "huggingface" else "class_name")


def checkpoint_reader(folder, model_class=None):
    """The `CheckpointReader` of `folder`, or None where no reader reads its model type.

    Args:
        folder: a checkpoint folder.
        model_class: the name of the class the caller builds. A folder of
            another model type gets that class's reader of the folder's kind,
            which refuses it naming the model type it reads.

    Raises:
        ValueError: not a checkpoint folder, or `model_class` reads no
            folder of this kind.
    """
    kind, model_type = checkpoint_model_type(folder)
    reader = CHECKPOINT_READERS.get(model_type)
    if model_class is None or (reader is not None and reader.model_class == model_class):
        return reader
    own = [
        reader
        for reader in CHECKPOINT_READERS.values()
        if reader.model_class == model_class and reader.folder_kind == kind
    ]
    if own:
        return own[0]
    read = [
        _FOLDER_NAMES[reader.folder_kind].format(name)
        for name, reader in CHECKPOINT_READERS.items()
        if reader.model_class == model_class
    ]
    raise ValueError(
        f"`preset` must be a checkpoint folder that {model_class} reads: {' or '.join(read)}. "
        f"Received: preset={folder!r}, {_FOLDER_NAMES[kind].format(model_type)}"
    )


def read_checkpoint(preset, model_class, **kwargs):
    """`model_class` holding the weights of the checkpoint `preset`, as its reader builds it.

    Args:
        preset: the checkpoint folder (`~` is expanded) or a hub handle
            (`hf://ORG/NAME[@REVISION]`, `kaggle://...`, a keras-hub preset
            name), fetched into its hub's cache (`checkpoint_handles`).
        model_class: our model class, e.g. `VisionTransformer`.
        **kwargs: its constructor arguments and the reader's options.
    """
    folder = checkpoint_folder(preset)
    reader = checkpoint_reader(folder, model_class.__name__)
    return reader.read(folder, model_class, **kwargs)


def read_image_encoder(preset, image_size=None):
    """The image classifier of a ViT or Swin checkpoint, as a captioner's pretrained encoder.

    The model class is the one the table names for the checkpoint's model
    type, found among Keras' registered classes, so that a captioner can read
    an image checkpoint without importing the image classification family.
    Its head is a new one (a captioner uses the tokens under it).

    Args:
        preset: a folder or handle, as `read_checkpoint` takes.
        image_size: its input size (the position table resized), default
            the checkpoint's.

    Raises:
        ValueError: the checkpoint is not an image classifier's.
    """
    folder = checkpoint_folder(preset)
    reader = checkpoint_reader(folder)
    if reader is None or reader.task != "image classifier":
        kind, model_type = checkpoint_model_type(folder)
        readable = sorted(n for n, r in CHECKPOINT_READERS.items() if r.task == "image classifier")
        raise ValueError(
            f"`preset` must be an image classification checkpoint ({', '.join(readable)}). "
            f"Received: preset={preset!r}, {_FOLDER_NAMES[kind].format(model_type)}"
        )
    model_class = keras.saving.get_registered_object(f"keras_attention>{reader.model_class}")
    options = {} if image_size is None else {"image_size": image_size}
    return reader.read(folder, model_class, include_head=False, num_classes=1, **options)
