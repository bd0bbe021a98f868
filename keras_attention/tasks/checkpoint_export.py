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

from keras_attention.models.checkpoint_folders import CONFIG_FILE
from keras_attention.models.checkpoint_folders import checkpoint_kind
from keras_attention.models.checkpoint_folders import read_json
from keras_attention.training.run_folder import check_export_path

# Hugging Face `model_type`s converted (and "keras_hub" for a keras-hub preset): what they become.
CONVERTED_MODEL_TYPES = {
    "vit": "an image classifier (VisionTransformer)",
    "swin": "an image classifier (SwinTransformer)",
    "keras_hub": "an image classifier (VisionTransformer, from a keras-hub ViT preset)",
    "marian": "a translator (TransformerTranslator, from a Marian checkpoint)",
}
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
        checkpoint: a Hugging Face checkpoint folder, or a keras-hub ViT preset folder.
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
    kind = checkpoint_kind(checkpoint)
    model_type = (
        read_json(checkpoint, CONFIG_FILE).get("model_type") if kind == "huggingface" else kind
    )
    if model_type not in CONVERTED_MODEL_TYPES:
        converted = ", ".join(sorted(set(CONVERTED_MODEL_TYPES) - {"keras_hub"}))
        raise ValueError(
            "`checkpoint` must be a keras-hub ViT preset or a Hugging Face folder of a "
            f"model_type converted here ({converted}). Received: {model_type!r} in {checkpoint!r}"
        )
    description = CONVERTED_MODEL_TYPES[model_type]
    if model_type == "marian":
        write = _translator_writer(
            checkpoint, description, beam_width, max_length, ignore_unexpected_weights, say
        )
    else:
        for name, value in (("beam_width", beam_width), ("max_length", max_length)):
            if value is not None:
                raise ValueError(
                    f"`{name}` sets a translator's search; {checkpoint!r} holds "
                    f"{description}. Received: {name}={value!r}"
                )
        unexpected = {"ignore_unexpected_weights": True} if ignore_unexpected_weights else {}
        if unexpected and kind != "huggingface":
            raise ValueError(
                "`ignore_unexpected_weights` applies to Hugging Face folders; keras-hub checks "
                f"its presets itself. Received: ignore_unexpected_weights=True for {checkpoint!r}"
            )
        write = _image_classifier_writer(checkpoint, model_type, description, unexpected, say)
    from keras_attention.training.run_setup import export_folder

    say(f"writing the SavedModel to {export_path} ...")
    start = time.time()
    export_folder(export_path, write)
    say(f"SavedModel written to {export_path} in {time.time() - start:.0f} s")
    return export_path


def _image_classifier_writer(checkpoint, model_type, description, options, say):
    """Reads the image classifier; returns `write(folder)`, its SavedModel writer."""
    from keras_attention.models.vision.swin_transformer import SwinTransformer
    from keras_attention.models.vision.vision_transformer import VisionTransformer
    from keras_attention.serving.image_classifier_export import export_image_classifier

    say(f"reading {checkpoint} ...")
    model_class = SwinTransformer if model_type == "swin" else VisionTransformer
    model = model_class.from_preset(checkpoint, **options)
    height, width = model.image_size
    # A checkpoint without names (a keras-hub preset) answers its class indices as labels.
    class_names = model.class_names or [str(index) for index in range(model.num_classes)]
    named = "named" if model.class_names else "unnamed (labels are their indices)"
    say(
        f"{description}: {model.count_params():,} weights, "
        f"{height}x{width} input, {len(class_names)} {named} classes"
    )
    return lambda folder: export_image_classifier(model, folder, class_names)


def _translator_writer(
    checkpoint, description, beam_width, max_length, ignore_unexpected_weights, say
):
    """Reads the translator and its tokenizers; returns `write(folder)`, its SavedModel writer."""
    from keras_attention.models.translation.marian_checkpoints import missing_tokenizer_files
    from keras_attention.models.translation.transformer_translator import TransformerTranslator
    from keras_attention.serving.translator_export import export_translator

    missing = missing_tokenizer_files(checkpoint)
    if missing:
        raise ValueError(
            f"`checkpoint` must hold the translator's tokenizer (source.spm, target.spm, "
            f"vocab.json) to serve strings. Received: {checkpoint!r}, which lacks "
            + ", ".join(missing)
        )
    say(f"reading {checkpoint} ...")
    model = TransformerTranslator.from_preset(
        checkpoint, ignore_unexpected_weights=ignore_unexpected_weights
    )
    length = min(max_length or DEFAULT_MAX_LENGTH, model.max_target_length)
    beam_width = beam_width or 1
    search = "greedy search" if beam_width == 1 else f"beam search ({beam_width} beams)"
    say(
        f"{description}: {model.count_params():,} weights, {model.vocabulary_size:,} tokens; "
        f"sources and translations of up to {length} pieces, {search}"
    )
    source, target = model.tokenizers["source"], model.tokenizers["target"]
    return lambda folder: export_translator(
        model, folder, source, target, length, length, beam_width
    )
