"""The Vision Transformer (and Swin Transformer) training command line and the choices it makes.

Building the parser imports neither TensorFlow nor Keras, so `--help` and a
bad flag are answered at once. The patch size, batch size and epochs
default to None: `vit_training_recipe` derives them from the data.

Example:

>>> from keras_attention.tasks.image_classification import flags
>>> args = flags.build_vit_parser().parse_args(["--dataset", "cifar10"])
>>> args.model, args.preset, flags.vit_image_size(args)
('vit', 'small', 32)
>>> flags.vit_augmentation(args)
'geometric'
"""

from keras_attention.tasks.init_from_flag import check_init_from
from keras_attention.training import command_line as cli

VIT_DATASET_FORMATS = (
    "'builtin' (generated shapes, offline); 'folder:PATH', one sub-folder of images per "
    "class (split at random, --seed), or split folders PATH/train/, PATH/val/ (or valid/, "
    "validation/) and optionally PATH/test/ that each hold the same class folders (without "
    "test/, test is every other image of each class of val/); .bmp .gif .jpeg .jpg .png; a "
    "file that cannot be decoded (such as a ._x.jpg AppleDouble file) or whose name is not "
    "UTF-8 is skipped with a warning naming it, or stops the run with --strict; a symbolic "
    "link in PATH that leads outside it is refused (--allow-outside-links); ~ and "
    "$VARIABLES are expanded; 'hf:PATH', a Hugging Face datasets save_to_disk folder with "
    "an 'image' (or 'img') column and a ClassLabel 'label' column, its splits' class names "
    "matched by name (pip install \"keras-attention[hf]\"); or 'cifar10', 'cifar100', "
    "'imagenette[/CONFIG]' from tensorflow-datasets (--data-dir). The classes and the "
    "images of each split are printed"
)
# `--dataset` PREFIX:PATH sources and what PATH must be; the tensorflow-datasets sets.
DATASET_PATHS = {"folder:": "folder", "hf:": "folder"}
TFDS_SETS = ("cifar10", "cifar100", "imagenette")
DATASET_CHOICES = "'builtin', 'folder:PATH', 'hf:PATH', 'cifar10', 'cifar100' or 'imagenette'"
# A ViT small enough to train on a laptop CPU. Its patch size is derived from
# the image size unless set (4 at 32 x 32: an 8 x 8 grid); this one is the
# fallback for code that builds the model without a recipe.
SMALL_VIT_PRESET = "small"
SMALL_VIT_ARCHITECTURE = dict(patch_size=4, hidden_dim=64, num_layers=4, num_heads=4, mlp_dim=128)
SMALL_VIT_IMAGE_SIZE = 32
PAPER_VIT_IMAGE_SIZE = 224
# `sorted(VIT_PRESETS)` and `IMAGE_AUGMENTATIONS`, spelled out so that the
# parser needs no TensorFlow import (a test keeps them equal).
PAPER_PRESET_NAMES = (
    "B/16",
    "B/32",
    "B/8",
    "H/14",
    "L/16",
    "L/32",
    "L/8",
    "S/16",
    "S/32",
    "S/8",
    "Ti/16",
    "Ti/32",
    "Ti/8",
)
AUGMENTATION_NAMES = ("none", "geometric", "flip")
# `--model swin`: "small" is the "swin_glyphs_32" shape (its patch size derived
# like the ViT's); the paper's sizes are `SWIN_PRESETS` but "swin_glyphs_32".
MODEL_NAMES = ("vit", "swin")
SMALL_SWIN_PRESET = "swin_glyphs_32"
SWIN_PRESET_NAMES = ("swin_tiny_224",)
# `--learning-rate` left out: the model's `DEFAULT_LEARNING_RATE` (`VisionTransformer`,
# `SwinTransformer`), spelled out so that the parser needs no TensorFlow (a test keeps them
# equal).
DEFAULT_LEARNING_RATES = {"vit": 2e-3, "swin": 5e-4}


def build_vit_parser(description=None):
    """The ViT script's `argparse` parser: the common flags and the model's.

    Args:
        description: text `--help` shows first.

    Returns:
        an `argparse.ArgumentParser`.

    Example:

    >>> from keras_attention.tasks.image_classification.flags import build_vit_parser
    >>> args = build_vit_parser().parse_args(["--preset", "S/16", "--pooling", "gap"])
    >>> args.preset, args.pooling, args.patch_size, args.builtin_sizes
    ('S/16', 'gap', None, (6144, 512, 1024))
    """
    # Epochs and batch size: derived from the number of training images
    # (see `vit_training_recipe`) when left out.
    return cli.training_parser(
        description,
        output_dir="runs/vit",
        dataset_formats=VIT_DATASET_FORMATS,
        flag_groups=(_add_model_flags, _add_training_flags, _add_data_flags),
    )


def _add_model_flags(add):
    """`--model` and the flags of its size, its input and where its weights start."""
    add(
        "--model",
        choices=MODEL_NAMES,
        default="vit",
        help="'vit': Vision Transformer; 'swin': Swin Transformer (shifted-window attention "
        "on a hierarchy of maps) (default: %(default)s)",
    )
    add(
        "--preset",
        choices=[SMALL_VIT_PRESET] + list(PAPER_PRESET_NAMES) + list(SWIN_PRESET_NAMES),
        default=SMALL_VIT_PRESET,
        help=f"model size: {SMALL_VIT_PRESET!r} ({SMALL_VIT_ARCHITECTURE} for the ViT, "
        f"{SMALL_SWIN_PRESET!r} for Swin) or a paper size (ViT's B/16 ..., Swin's "
        f"{', '.join(SWIN_PRESET_NAMES)})",
    )
    add(
        "--image-size",
        type=cli.positive_int,
        help=f"longer side the model works at (default {SMALL_VIT_IMAGE_SIZE} for 'small', "
        f"{PAPER_VIT_IMAGE_SIZE} for paper sizes); a folder's images keep their aspect ratio",
    )
    add(
        "--patch-size",
        type=cli.positive_int,
        help="patch side (default: about 8 patches a side for 'small', the preset's otherwise)",
    )
    add(
        "--init-from",
        metavar="CHECKPOINT",
        help="start from a pretrained model instead of random weights: with --model vit a "
        "Hugging Face folder (ViTForImageClassification or ViTModel, as save_pretrained writes "
        "it) or a keras-hub ViT preset (as save_to_preset writes it); with --model swin a "
        "Hugging Face Swin folder (SwinForImageClassification or SwinModel): its architecture, "
        "patch size and image size (unless given), and its head where the classes are its own "
        "(a new head otherwise); or a handle of one: hf://ORG/NAME[@REVISION] (through the "
        "Hugging Face cache: HF_HOME, HF_HUB_OFFLINE), kaggle://... or a keras-hub preset name",
    )
    add("--pooling", choices=("token", "gap"), default="token", help="ViT only (Swin: 'gap')")


def _add_training_flags(add):
    """The flags of the optimiser, the regularisation and the training images' augmentation."""
    add(
        "--learning-rate",
        type=cli.positive_float,
        help="peak learning rate (default: the --model's: "
        f"{cli.per_model_text(DEFAULT_LEARNING_RATES)})",
    )
    add("--weight-decay", type=cli.non_negative_float, default=0.05)
    add("--label-smoothing", type=cli.rate, default=0.1)
    add("--dropout", type=cli.rate, default=0.0, help=cli.DROPOUT_HELP)
    add("--stochastic-depth", type=cli.rate, default=0.1, help="stochastic depth rate")
    add(
        "--augmentation",
        choices=("auto",) + AUGMENTATION_NAMES,
        default="auto",
        help="training batches only: 'geometric' small shifts, rotations and zoom of each "
        "image, by the nearest pixel, the uncovered border filled with the image's background, "
        "a quarter of the images left as they are (no flips: glyphs and digits change "
        "meaning); 'flip' adds left-right flips; 'auto': 'geometric', except 'none' on the "
        "built-in data, whose labels say where the shape is",
    )


def _add_data_flags(add):
    """The flags of the built-in images and of reading a folder, and the seed."""
    add(
        "--builtin-sizes",
        type=cli.non_negative_int,
        nargs=3,
        metavar=("TRAIN", "VALIDATION", "TEST"),
        default=(6144, 512, 1024),
        help="number of built-in images per split",
    )
    add(
        "--allow-outside-links",
        action="store_true",
        help="folder: read split folders, class folders and images that are symbolic links "
        "leading outside the data set's folder (refused by default, naming the link and its "
        "target; the folder itself may be a link)",
    )
    add("--seed", type=cli.seed_value, default=0, help=cli.SEED_HELP)


def check_model_preset(parser, args):
    """Stops with a usage error when `--preset` names a size of the other `--model`.

    Then `check_patch_grid`: the patch size must divide the image size.

    Example:

    >>> from keras_attention.tasks.image_classification.flags import (
    ...     build_vit_parser, check_model_preset)
    >>> parser = build_vit_parser()
    >>> check_model_preset(parser, parser.parse_args(["--model", "swin"])) is None
    True
    """
    sizes = SWIN_PRESET_NAMES if args.model == "swin" else PAPER_PRESET_NAMES
    if args.preset != SMALL_VIT_PRESET and args.preset not in sizes:
        parser.error(
            f"--preset {args.preset} is not a --model {args.model} size: use "
            f"{', '.join((SMALL_VIT_PRESET,) + sizes)}"
        )
    check_patch_grid(parser, args)


def check_patch_grid(parser, args):
    """Stops with a usage error when the patch size does not divide the image size.

    The patch size is `--patch-size` or a paper ViT preset's own ("B/16": 16);
    the image size `vit_image_size(args)`. The longer image side must hold
    whole patches (the shorter one is rounded to them). Where the patch size
    is derived, or `--init-from` gives one of the two, there is nothing to
    check here.

    Example:

    >>> from keras_attention.tasks.image_classification.flags import (
    ...     build_vit_parser, check_patch_grid)
    >>> parser = build_vit_parser()
    >>> check_patch_grid(parser, parser.parse_args(["--preset", "B/16", "--image-size", "384"]))
    >>> check_patch_grid(parser, parser.parse_args(["--preset", "B/16", "--image-size", "200"]))
    Traceback (most recent call last):
    ...
    SystemExit: 2
    """
    if args.init_from and not (args.image_size and args.patch_size):
        return  # the checkpoint's patch size or image size
    patch_size, patch_source = args.patch_size, "--patch-size"
    if patch_size is None and args.model == "vit" and args.preset in PAPER_PRESET_NAMES:
        patch_size = int(args.preset.split("/")[1])
        patch_source = f"the patch size of --preset {args.preset}"
    image_size = vit_image_size(args)
    if patch_size and image_size % patch_size:
        image_source = (
            "--image-size"
            if args.image_size
            else f"the default image size of --preset {args.preset}"
        )
        parser.error(
            f"{patch_source} must divide {image_source} (the image is cut into whole patches). "
            f"Received: image size {image_size}, patch size {patch_size}"
        )


def check_vit_data(parser, args):
    """Stops with one `error:` line (exit status 2) on what the flags name that is not there.

    Pure Python, run by the script before TensorFlow loads and before the run
    claims its `--output-dir`: `--dataset` is 'builtin', a tfds set
    (`TFDS_SETS`, 'imagenette/CONFIG') or folder: or hf: followed by an
    existing folder (hf: with the `datasets` package installed), and an
    `--init-from` folder exists. The images are
    listed later, by the loader.

    Args:
        parser: the script's parser.
        args: the parsed flags.

    Example:

    >>> from keras_attention.tasks.image_classification.flags import (
    ...     build_vit_parser, check_vit_data)
    >>> parser = build_vit_parser()
    >>> check_vit_data(parser, parser.parse_args(["--dataset", "cifar10"]))
    >>> check_vit_data(parser, parser.parse_args(["--dataset", "foldr:~/glyphs"]))
    Traceback (most recent call last):
    ...
    SystemExit: 2
    """
    cli.check_dataset_flag(
        parser,
        args.dataset,
        paths=DATASET_PATHS,
        is_named=lambda name: name in ("builtin",) + TFDS_SETS or name.startswith("imagenette/"),
        expected=DATASET_CHOICES,
        data_dir=args.data_dir,
        names=("builtin",) + TFDS_SETS,
    )
    train, _, test = args.builtin_sizes
    if args.dataset == "builtin" and not (train and test):
        cli.usage_error(
            parser,
            "--builtin-sizes needs at least one training and one test image (the test split "
            f"is scored); received {' '.join(map(str, args.builtin_sizes))}",
        )
    check_init_from(parser, args)


def vit_image_size(args):
    """The `--image-size` flag or the preset's default (the longer side).

    Example:

    >>> from keras_attention.tasks.image_classification.flags import (
    ...     build_vit_parser, vit_image_size)
    >>> vit_image_size(build_vit_parser().parse_args(["--preset", "B/16"]))
    224
    """
    if args.image_size:
        return args.image_size
    return SMALL_VIT_IMAGE_SIZE if args.preset == SMALL_VIT_PRESET else PAPER_VIT_IMAGE_SIZE


def vit_learning_rate(args):
    """The `--learning-rate` flag, or the default of the `--model` (`DEFAULT_LEARNING_RATES`).

    Swin's is lower than the ViT's: at the ViT's 2e-3 (batches of 16) the small Swin stayed
    near chance on 8 x 8 handwritten digits for most of a run.

    Example:

    >>> from keras_attention.tasks.image_classification.flags import (
    ...     build_vit_parser, vit_learning_rate)
    >>> parser = build_vit_parser()
    >>> [vit_learning_rate(parser.parse_args(argv))
    ...  for argv in ([], ["--model", "swin"], ["--model", "swin", "--learning-rate", "1e-3"])]
    [0.002, 0.0005, 0.001]
    """
    if args.learning_rate is not None:
        return args.learning_rate
    return DEFAULT_LEARNING_RATES[getattr(args, "model", "vit")]


def vit_augmentation(args):
    """The augmentation kind of `--augmentation`.

    'auto' leaves the built-in data alone, since its labels say in which
    quadrant the shape lies, and is 'geometric' elsewhere.

    Example:

    >>> from keras_attention.tasks.image_classification.flags import (
    ...     build_vit_parser, vit_augmentation)
    >>> vit_augmentation(build_vit_parser().parse_args([]))
    'none'
    """
    if args.augmentation != "auto":
        return args.augmentation
    return "none" if args.dataset == "builtin" else "geometric"
