"""The TensorFlow SavedModel of a pretrained checkpoint folder, with no training.

`export_checkpoint` reads a checkpoint as users download it (a Hugging Face
folder written by `save_pretrained`, or a keras-hub preset folder) into the
library's model and writes the serving model the training scripts' `--export`
writes: for an image classifier (ViT, Swin), pixels 0..255 of any size
`(B, H, W, 3)` (also uint8, and encoded image bytes) in, resized and
normalised as the checkpoint's `preprocessor_config.json` says,
`probabilities` and `labels` (its `id2label`) out.

    python -m keras_attention.convert ~/checkpoints/vit-base-patch16-224 --export served/vit
"""

import os
import time

from keras_attention.models.checkpoint_folders import CONFIG_FILE
from keras_attention.models.checkpoint_folders import checkpoint_kind
from keras_attention.models.checkpoint_folders import read_json
from keras_attention.training.run_folder import check_export_path

# Hugging Face `model_type`s converted (and "keras_hub" for a keras-hub preset): the
# model class that reads them, and what they become.
CONVERTED_MODEL_TYPES = {
    "vit": ("VisionTransformer", "an image classifier (VisionTransformer)"),
    "swin": ("SwinTransformer", "an image classifier (SwinTransformer)"),
    "keras_hub": (
        "VisionTransformer",
        "an image classifier (VisionTransformer, from a keras-hub ViT preset)",
    ),
}


def export_checkpoint(checkpoint, export_path, *, beam_width=None, max_length=None, say=print):
    """Writes the SavedModel of the checkpoint folder `checkpoint` to `export_path`.

    Args:
        checkpoint: a Hugging Face checkpoint folder.
        export_path: the folder to write: absent, empty or an earlier export
            of this library (replaced whole).
        beam_width, max_length: search settings of translators; None for
            image classifiers.
        say: where the one line per stage goes.

    Returns:
        `export_path`.

    Raises:
        ValueError: a folder of a kind or `model_type` not converted, or
            search settings for an image classifier.
        RunFolderError: `export_path` cannot be used.
    """
    from keras_attention.backend_support import require_tensorflow_backend
    from keras_attention.models.vision.swin_transformer import SwinTransformer
    from keras_attention.models.vision.vision_transformer import VisionTransformer
    from keras_attention.serving.image_classifier_export import export_image_classifier
    from keras_attention.training.run_setup import export_folder

    require_tensorflow_backend("Converting a checkpoint")
    export_path = os.path.abspath(os.path.expanduser(export_path))
    check_export_path(export_path)  # absent, empty or an export of ours: replaced whole
    kind = checkpoint_kind(checkpoint)
    model_type = (
        read_json(checkpoint, CONFIG_FILE).get("model_type") if kind == "huggingface" else kind
    )
    if model_type not in CONVERTED_MODEL_TYPES:
        raise ValueError(
            "`checkpoint` must be a keras-hub ViT preset or a Hugging Face folder of a "
            "model_type converted here (swin, vit). Received: "
            f"{model_type!r} in {checkpoint!r}"
        )
    class_name, description = CONVERTED_MODEL_TYPES[model_type]
    for name, value in (("beam_width", beam_width), ("max_length", max_length)):
        if value is not None:
            raise ValueError(
                f"`{name}` sets a translator's search; {checkpoint!r} holds "
                f"{description}. Received: {name}={value!r}"
            )
    say(f"reading {checkpoint} ...")
    model_class = {"VisionTransformer": VisionTransformer, "SwinTransformer": SwinTransformer}
    model = model_class[class_name].from_preset(checkpoint)
    height, width = model.image_size
    # A checkpoint without names (a keras-hub preset) answers its class indices as labels.
    class_names = model.class_names or [str(index) for index in range(model.num_classes)]
    named = "named" if model.class_names else "unnamed (labels are their indices)"
    say(
        f"{description}: {model.count_params():,} weights, "
        f"{height}x{width} input, {len(class_names)} {named} classes"
    )
    say(f"writing the SavedModel to {export_path} ...")
    start = time.time()
    export_folder(export_path, lambda folder: export_image_classifier(model, folder, class_names))
    say(f"SavedModel written to {export_path} in {time.time() - start:.0f} s")
    return export_path
