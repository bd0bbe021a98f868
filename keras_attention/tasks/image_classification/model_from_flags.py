"""The ViT (or Swin Transformer) the flags describe, built and compiled for training; its export.

`image_classifier_from_arguments` builds the `--model`:
`vision_transformer_from_arguments` the 'small' ViT or a paper preset with
the flags' patch size, pooling, dropout and stochastic depth,
`swin_transformer_from_arguments` the small Swin or Swin-T;
`compile_vision_transformer` compiles either as small-data ViTs train best
(AdamW without decay on norms, biases and embeddings, label smoothing, a
warm-up counted in steps, then cosine decay).

Example:

>>> from keras_attention.tasks.image_classification.recipe_from_flags import parse_vit_arguments
>>> from keras_attention.tasks.image_classification.model_from_flags import (
...     vision_transformer_from_arguments)
>>> args = parse_vit_arguments(["--preset", "S/32", "--image-size", "64"])
>>> model = vision_transformer_from_arguments(args, num_classes=3, class_names=list("abc"))
>>> model.patch_embedding.patch_size, model.output_shape
(32, (None, 3))
"""

import keras

from keras_attention.models.checkpoints.hf_image_checkpoints import huggingface_class_names
from keras_attention.models.image_classification.swin_sizes import swin_transformer_preset
from keras_attention.models.image_classification.swin_transformer import SwinTransformer
from keras_attention.models.image_classification.vision_transformer import VisionTransformer
from keras_attention.models.image_classification.vision_transformer import vision_transformer
from keras_attention.models.image_classification.vit_sizes import vision_transformer_preset
from keras_attention.serving.image_classification_export import export_image_classifier
from keras_attention.tasks.image_classification.flags import SMALL_SWIN_PRESET
from keras_attention.tasks.image_classification.flags import SMALL_VIT_ARCHITECTURE
from keras_attention.tasks.image_classification.flags import SMALL_VIT_PRESET
from keras_attention.tasks.image_classification.flags import vit_image_size
from keras_attention.tasks.image_classification.recipe import warmup_steps_for
from keras_attention.tasks.learning_rate_schedule import warmup_cosine_decay
from keras_attention.validation import check_positive_int


def vision_transformer_from_arguments(args, num_classes, class_names, image_shape=None):
    """The ViT of `args.preset`, with `args.patch_size` where set.

    Args:
        args: the parsed flags (`parse_vit_arguments`).
        num_classes: number of classes.
        class_names: their names, kept by the model (`classify`, export).
        image_shape: `(height, width)` the model works at; None: the square
            `vit_image_size(args)`.

    Returns:
        a `VisionTransformer` named after its preset.
    """
    if getattr(args, "init_from", None):
        return _pretrained_classifier(
            VisionTransformer, args, num_classes, class_names, image_shape
        )
    if args.preset == SMALL_VIT_PRESET:
        architecture = dict(SMALL_VIT_ARCHITECTURE)
    else:
        architecture = vision_transformer_preset(args.preset)
    if args.patch_size:
        architecture["patch_size"] = args.patch_size
    return vision_transformer(
        pooling=args.pooling,
        name=f"vit_{args.preset.replace('/', '_')}",
        **_classifier_arguments(args, num_classes, class_names, image_shape),
        **architecture,
    )


def _classifier_arguments(args, num_classes, class_names, image_shape):
    """The arguments every ViT or Swin made from flags takes: size, classes, regularization."""
    return dict(
        image_size=image_shape or vit_image_size(args),
        num_classes=num_classes,
        class_names=class_names,
        dropout=args.dropout,
        stochastic_depth_rate=args.stochastic_depth,
    )


def _pretrained_classifier(model_class, args, num_classes, class_names, image_shape):
    """`--init-from`: the checkpoint's ViT or Swin, its head kept only for its own classes."""
    same_classes = huggingface_class_names(args.init_from) == list(class_names or [])
    print(
        f"starting from {args.init_from}: "
        + ("its classifier kept" if same_classes else f"a new head for {num_classes} classes")
    )
    family = "swin" if model_class is SwinTransformer else "vit"
    return model_class.from_preset(
        args.init_from,
        include_head=same_classes,
        name=f"{family}_pretrained",
        **_classifier_arguments(args, num_classes, class_names, image_shape),
    )


def swin_transformer_from_arguments(args, num_classes, class_names, image_shape=None):
    """The Swin Transformer of `args.preset` ('small': "swin_glyphs_32").

    `args.patch_size` replaces the preset's where set; dropout and
    stochastic depth come from the flags.

    Args:
        args: the parsed flags (`parse_vit_arguments`) with `--model swin`.
        num_classes: number of classes.
        class_names: their names, kept by the model.
        image_shape: `(height, width)`; None: the square `vit_image_size(args)`.

    Returns:
        a `SwinTransformer` named after its preset; with `args.init_from`,
        the checkpoint's (`--init-from`).

    Example:

    >>> from keras_attention.tasks.image_classification.recipe_from_flags import (
    ...     parse_vit_arguments)
    >>> from keras_attention.tasks.image_classification.model_from_flags import (
    ...     swin_transformer_from_arguments)
    >>> args = parse_vit_arguments(["--model", "swin", "--builtin-sizes", "64", "8", "8"])
    >>> model = swin_transformer_from_arguments(args, 3, list("abc"), (32, 32))
    >>> model.name, model.patch_size, model.depths, model.output_shape
    ('swin_small', 4, (2, 2), (None, 3))
    """
    if getattr(args, "init_from", None):
        return _pretrained_classifier(SwinTransformer, args, num_classes, class_names, image_shape)
    preset = SMALL_SWIN_PRESET if args.preset == SMALL_VIT_PRESET else args.preset
    architecture = swin_transformer_preset(preset)
    for derived in ("image_size", "num_classes"):
        del architecture[derived]
    if args.patch_size:
        architecture["patch_size"] = args.patch_size
    return SwinTransformer(
        name=f"swin_{args.preset}".replace("swin_swin_", "swin_"),
        **_classifier_arguments(args, num_classes, class_names, image_shape),
        **architecture,
    )


def image_classifier_from_arguments(args, num_classes, class_names, image_shape=None):
    """The classifier of `args.model`: `vision_transformer_from_arguments` or
    `swin_transformer_from_arguments` (same arguments)."""
    build = (
        swin_transformer_from_arguments
        if getattr(args, "model", "vit") == "swin"
        else vision_transformer_from_arguments
    )
    return build(args, num_classes, class_names, image_shape)


def compile_vision_transformer(model, args, steps_per_epoch, jit_compile=True):
    """Compiles `model` for `args.epochs` epochs of `steps_per_epoch` steps.

    Linear warm-up over the first tenth of training (at most 10 epochs) up
    to `args.learning_rate`, then cosine decay to 0; AdamW with
    `args.weight_decay`, except on `model.no_decay_variables()`; one-hot
    cross-entropy with `args.label_smoothing`.

    Args:
        model: a `VisionTransformer` or `SwinTransformer` (anything with
            `no_decay_variables()`).
        args: the parsed flags, with `epochs` set.
        steps_per_epoch: optimizer steps per epoch.
        jit_compile: compile the training step with XLA.
    """
    check_positive_int("steps_per_epoch", steps_per_epoch)
    total_steps = max(1, args.epochs * steps_per_epoch)
    warmup_steps = warmup_steps_for(total_steps, steps_per_epoch)
    schedule = warmup_cosine_decay(args.learning_rate, total_steps, warmup_steps)
    optimizer = keras.optimizers.AdamW(schedule, weight_decay=args.weight_decay)
    optimizer.exclude_from_weight_decay(var_list=model.no_decay_variables())
    model.compile(
        optimizer=optimizer,
        loss=keras.losses.CategoricalCrossentropy(
            from_logits=True, label_smoothing=args.label_smoothing
        ),
        metrics=["accuracy"],
        jit_compile=jit_compile,
    )


def classifier_export_writer(model, class_names):
    """A function that writes the classifier's SavedModel into the folder it is given.

    Pixels in (any size, resized inside), probabilities and class names out.
    """

    def write(folder):
        export_image_classifier(model, folder, class_names)

    return write
