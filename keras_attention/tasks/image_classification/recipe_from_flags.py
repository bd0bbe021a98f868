"""The Vision Transformer training recipe, chosen for the data and written back into the flags.

What the user leaves out (patch size, batch size, epochs, the model's image
shape) is derived by `vit_training_recipe` from the training set:
`resolve_vit_recipe` fills `args` with it. The built-in data set's size is
known from its flags, so `parse_vit_arguments` resolves its recipe at once.

Example:

>>> from keras_attention.tasks.image_classification.recipe_from_flags import parse_vit_arguments
>>> args = parse_vit_arguments([])
>>> args.patch_size, args.batch_size, args.epochs
(4, 32, 16)
"""

from keras_attention.models.checkpoints.swin_checkpoints import swin_checkpoint_input
from keras_attention.models.checkpoints.vit_checkpoints import vit_checkpoint_input
from keras_attention.models.image_classification.swin_sizes import swin_transformer_preset
from keras_attention.models.image_classification.vit_sizes import vision_transformer_preset
from keras_attention.tasks.image_classification.flags import SMALL_VIT_PRESET
from keras_attention.tasks.image_classification.flags import SWIN_PRESET_NAMES
from keras_attention.tasks.image_classification.flags import build_vit_parser
from keras_attention.tasks.image_classification.flags import check_model_preset
from keras_attention.tasks.image_classification.flags import vit_image_size
from keras_attention.tasks.image_classification.flags import vit_learning_rate
from keras_attention.tasks.image_classification.recipe import vit_input_shape
from keras_attention.tasks.image_classification.recipe import vit_training_recipe
from keras_attention.tasks.init_from_flag import init_from_folder


def vit_patch_size_flag(args):
    """The user's patch size; a paper preset's own when unset; None: derive it.

    Example:

    >>> from keras_attention.tasks.image_classification.flags import build_vit_parser
    >>> from keras_attention.tasks.image_classification.recipe_from_flags import vit_patch_size_flag
    >>> parser = build_vit_parser()
    >>> [vit_patch_size_flag(parser.parse_args(argv))
    ...  for argv in ([], ["--preset", "B/32"], ["--preset", "B/32", "--patch-size", "8"],
    ...               ["--model", "swin", "--preset", "swin_tiny_224"])]
    [None, 32, 8, 4]
    """
    if args.patch_size or args.preset == SMALL_VIT_PRESET:
        return args.patch_size
    if args.preset in SWIN_PRESET_NAMES:
        return swin_transformer_preset(args.preset)["patch_size"]
    return vision_transformer_preset(args.preset)["patch_size"]


def vit_model_input_shape(args, native_size):
    """`(height, width)` of the model for images whose own size is `native_size`.

    Args:
        args: the parsed flags (`build_vit_parser`).
        native_size: `(height, width)` of the data set's images, or None (square).

    Example:

    >>> from keras_attention.tasks.image_classification.flags import build_vit_parser
    >>> from keras_attention.tasks.image_classification.recipe_from_flags import (
    ...     vit_model_input_shape)
    >>> vit_model_input_shape(build_vit_parser().parse_args(["--image-size", "16"]), (12, 24))
    (8, 16)
    """
    shape, _, _ = vit_input_shape(
        vit_image_size(args), native_size, vit_patch_size_flag(args), vit_input_sources(args)
    )
    return shape


def vit_input_sources(args):
    """Where the image size and patch size `args` give come from, when not from the user.

    A paper preset's patch size is its own; `--init-from` gives the
    checkpoint's patch size, and its image size unless `--image-size` is set.

    Example:

    >>> from keras_attention.tasks.image_classification.flags import build_vit_parser
    >>> from keras_attention.tasks.image_classification.recipe_from_flags import (
    ...     vit_input_sources)
    >>> vit_input_sources(build_vit_parser().parse_args(["--preset", "B/32"]))
    {'patch_size': "the B/32 preset's"}
    """
    sources = dict(getattr(args, "checkpoint_sources", None) or {})
    if "patch_size" not in sources and not args.patch_size and args.preset != SMALL_VIT_PRESET:
        sources["patch_size"] = f"the {args.preset} preset's"
    return sources


def resolve_vit_recipe(args, num_train_images, native_size):
    """Fills `args` with the derived choices; returns the `ViTTrainingRecipe`.

    `args.recipe` holds the recipe; `args.patch_size`, `args.batch_size`
    and `args.epochs` its numbers.

    Args:
        args: the parsed flags (`build_vit_parser`).
        num_train_images: number of training images.
        native_size: `(height, width)` of the data set's images, or None (square).
    """
    recipe = vit_training_recipe(
        num_train_images=num_train_images,
        image_size=vit_image_size(args),
        native_size=native_size,
        patch_size=vit_patch_size_flag(args),
        batch_size=args.batch_size,
        epochs=args.epochs,
        steps_per_epoch=getattr(args, "steps_per_epoch", None),
        sources=vit_input_sources(args),
    )
    args.recipe = recipe
    args.patch_size = recipe.patch_size
    args.batch_size = recipe.batch_size
    args.epochs = recipe.epochs
    return recipe


def _take_checkpoint_input(parser, args):
    """`--init-from`: the checkpoint's patch size, and its `(height, width)` unless `--image-size`.

    The images are resized to the checkpoint's size, whatever theirs, so its
    position table is used as it is; `args.checkpoint_sources` says which
    values came from the checkpoint (for the printed reasons).
    """
    if args.preset != SMALL_VIT_PRESET:
        parser.error(
            "--init-from reads the architecture of the checkpoint (a Hugging Face ViT or Swin "
            "folder, or a keras-hub ViT preset): use it with no --preset. "
            f"Received: --preset {args.preset}"
        )
    init_from_folder(parser, args)
    read_input = swin_checkpoint_input if args.model == "swin" else vit_checkpoint_input
    try:
        patch_size, (height, width) = read_input(args.init_from)
    except ValueError as error:
        parser.error(f"--init-from {args.init_from} (--model {args.model}): {error}")
    if args.patch_size not in (None, patch_size):
        parser.error(
            f"--patch-size {args.patch_size}: the checkpoint's patches are {patch_size} pixels "
            "(its patch embedding and positions are made for them); leave --patch-size out"
        )
    args.patch_size = patch_size
    args.checkpoint_sources = {"patch_size": f"the checkpoint's ({args.init_from})"}
    if args.image_size is None:
        args.image_size = (height, width)
        args.checkpoint_sources["image_size"] = (
            f"the checkpoint's ({args.init_from}), the images resized to it; --image-size "
            "sets another"
        )


def parse_vit_arguments(argv=None, parser=None):
    """Parsed flags; on the built-in data, with the recipe already resolved.

    Other data sets leave `args.recipe` None until `resolve_vit_recipe` is
    called with the number of training images. `args.learning_rate` is
    always set: the `--model`'s default when left out (`vit_learning_rate`).

    Args:
        argv: the arguments (None: `sys.argv[1:]`).
        parser: the parser to use (None: `build_vit_parser()`).

    Example:

    >>> from keras_attention.tasks.image_classification.recipe_from_flags import parse_vit_arguments
    >>> args = parse_vit_arguments(["--dataset", "folder:somewhere"])
    >>> args.patch_size, args.batch_size, args.epochs, args.recipe
    (None, None, None, None)
    """
    parser = parser or build_vit_parser()
    args = parser.parse_args(argv)
    check_model_preset(parser, args)
    args.learning_rate = vit_learning_rate(args)  # the --model's when left out
    if args.init_from:
        _take_checkpoint_input(parser, args)
    args.recipe = None
    if args.dataset == "builtin":
        # The built-in set's size is known from the flags: choose now, so that
        # `args` holds every number.
        resolve_vit_recipe(args, num_train_images=args.builtin_sizes[0], native_size=None)
    return args
