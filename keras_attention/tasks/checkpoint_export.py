"""The TensorFlow SavedModel of a pretrained checkpoint folder, with no training.

`export_checkpoint` reads a checkpoint as users download it (a Hugging Face
folder written by `save_pretrained`, or a keras-hub preset folder) into the
library's model and writes the serving model the training scripts' `--export`
writes: for an image classifier (ViT, Swin), pixels 0..255 of any size
`(B, H, W, 3)` (also uint8, and encoded image bytes) in, resized and
normalised as the checkpoint's `preprocessor_config.json` says,
`probabilities` and `labels` (its `id2label`) out; for a Marian (opus-mt)
translator, strings in, `translation` out, with its SentencePiece tokenizers
and the XLA-compiled search inside (loading it needs `import tensorflow_text`
first; TensorFlow Serving has the op built in).

    python -m keras_attention.convert ~/checkpoints/vit-base-patch16-224 --export served/vit
"""

import os
import time

import keras_attention.models
from keras_attention.models.checkpoints.checkpoint_handles import checkpoint_folder
from keras_attention.models.checkpoints.checkpoint_readers import CHECKPOINT_READERS
from keras_attention.models.checkpoints.checkpoint_readers import checkpoint_model_type
from keras_attention.training.run_folder import check_export_path
from keras_attention.training.run_folder import check_export_target

# Translations read and written by default, in pieces (Marian's models take 512).
DEFAULT_MAX_LENGTH = 128


def export_checkpoint(
    checkpoint,
    export_path,
    *,
    beam_width=None,
    max_length=None,
    ignore_unexpected_weights=False,
    say=print,
):
    """Writes the SavedModel of the checkpoint folder `checkpoint` to `export_path`.

    Args:
        checkpoint: a Hugging Face checkpoint folder, or a keras-hub ViT preset folder, or
            a hub handle (`hf://ORG/NAME[@REVISION]`, `kaggle://...`, a keras-hub preset
            name) of one, fetched into the hub's cache (`checkpoint_handles`).
        export_path: the folder to write: absent, empty or an earlier export
            of this library (replaced whole).
        beam_width: a translator's search: 1 (greedy, the default) or the beams.
        max_length: a translator's longest translation, and longest source,
            in pieces (default `DEFAULT_MAX_LENGTH`, at most the model's).
        ignore_unexpected_weights: convert a Hugging Face folder although
            its weights hold tensors its config does not describe.
        say: where the one line per stage goes.

    Returns:
        `export_path`.

    Raises:
        ValueError: a folder of a kind or `model_type` not converted, or
            search settings for an image classifier.
        RunFolderError: `export_path` cannot be used.
    """
    from keras_attention.backend_support import require_tensorflow_backend

    require_tensorflow_backend("Converting a checkpoint")
    export_path = os.path.abspath(os.path.expanduser(export_path))
    check_export_path(export_path)  # absent, empty or an export of ours: replaced whole
    folder = checkpoint_folder(checkpoint, "checkpoint")
    if folder != checkpoint:
        say(f"{checkpoint}: {folder}")
    checkpoint = folder
    check_export_target(export_path, source=folder)  # not another checkpoint's export
    kind, model_type = checkpoint_model_type(checkpoint, "checkpoint")
    reader = CHECKPOINT_READERS.get(model_type)
    if reader is None or reader.folder_kind != kind:
        raise ValueError(
            f"`checkpoint` must be a {_converted(CHECKPOINT_READERS)}. "
            f"Received: {model_type!r} in {checkpoint!r}"
        )
    if ignore_unexpected_weights and kind != "huggingface":
        raise ValueError(
            "`ignore_unexpected_weights` applies to Hugging Face folders; keras-hub checks "
            f"its presets itself. Received: ignore_unexpected_weights=True for {checkpoint!r}"
        )
    options = {"ignore_unexpected_weights": True} if ignore_unexpected_weights else {}
    if reader.task == "translator":
        write = _translator_writer(checkpoint, reader, beam_width, max_length, options, say)
    else:
        for name, value in (("beam_width", beam_width), ("max_length", max_length)):
            if value is not None:
                raise ValueError(
                    f"`{name}` sets a translator's search; {checkpoint!r} holds "
                    f"{reader.description}. Received: {name}={value!r}"
                )
        write = _image_classifier_writer(checkpoint, reader, options, say)
    from keras_attention.training.run_setup import export_folder

    say(f"writing the SavedModel to {export_path} ...")
    start = time.time()
    export_folder(export_path, write, source=folder)
    say(f"SavedModel written to {export_path} in {time.time() - start:.0f} s")
    return export_path


def _converted(readers):
    """The folders converted, in words: keras-hub presets by class, Hugging Face model_types."""
    keras_hub = sorted(name for name, r in readers.items() if r.folder_kind == "keras_hub")
    huggingface = sorted(name for name, r in readers.items() if r.folder_kind == "huggingface")
    return (
        f"keras-hub preset ({', '.join(keras_hub)}) or a Hugging Face folder of a model_type "
        f"converted here ({', '.join(huggingface)})"
    )


def _read(checkpoint, reader, options, say):
    """The model of `checkpoint`, as its reader builds it."""
    say(f"reading {checkpoint} ...")
    model_class = getattr(keras_attention.models, reader.model_class)
    return reader.read(checkpoint, model_class, **options)


def _image_classifier_writer(checkpoint, reader, options, say):
    """Reads the image classifier; returns `write(folder)`, its SavedModel writer."""
    from keras_attention.serving.image_classification_export import export_image_classifier

    model = _read(checkpoint, reader, options, say)
    height, width = model.image_size
    # A checkpoint without names (a keras-hub preset) answers its class indices as labels.
    class_names = model.class_names or [str(index) for index in range(model.num_classes)]
    named = "named" if model.class_names else "unnamed (labels are their indices)"
    say(
        f"{reader.description}: {model.count_params():,} weights, "
        f"{height}x{width} input, {len(class_names)} {named} classes"
    )
    return lambda folder: export_image_classifier(model, folder, class_names)


def _translator_writer(checkpoint, reader, beam_width, max_length, options, say):
    """Reads the translator and its tokenizers; returns `write(folder)`, its SavedModel writer."""
    from keras_attention.serving.translation_export import export_translator

    # Serving takes strings: a folder without its tokenizer is refused before the weights.
    model = _read(checkpoint, reader, {**options, "require_tokenizers": True}, say)
    length = min(max_length or DEFAULT_MAX_LENGTH, model.max_target_length)
    beam_width = beam_width or 1
    search = "greedy search" if beam_width == 1 else f"beam search ({beam_width} beams)"
    say(
        f"{reader.description}: {model.count_params():,} weights, "
        f"{model.vocabulary_size:,} tokens; sources and translations of up to {length} pieces, "
        f"{search}"
    )
    source, target = model.tokenizers["source"], model.tokenizers["target"]
    return lambda folder: export_translator(
        model, folder, source, target, length, length, beam_width
    )
