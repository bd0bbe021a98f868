"""The captioning script's command line: its flags, and the defaults of each captioner.

Building the parser imports neither TensorFlow nor Keras, so `--help` and a
bad flag are answered at once. Flags left unset that depend on `--model`
are filled in from `CAPTIONER_DEFAULTS` by `with_captioner_defaults`; those
that depend on the data (image size, batch size, epochs) stay None, to be
derived from the training set (`keras_attention.tasks.captioning.recipe`).

Example:

>>> from keras_attention.tasks.captioning.flags import (
...     build_captioning_parser, with_captioner_defaults)
>>> args = with_captioner_defaults(build_captioning_parser().parse_args(["--image-size", "32x96"]))
>>> args.model, args.image_size, args.hidden_dim, args.epochs
('show_attend_tell', (32, 96), 128, None)
"""

import argparse

from keras_attention.tasks.init_from_flag import check_init_from
from keras_attention.tasks.init_from_flag import init_from_checkpoint_folder
from keras_attention.training import command_line as cli

# Defaults per model that reach BLEU > 90 on the built-in scenes in a few CPU minutes,
# with most of the attention at each object's shape word on that object.
# - Show, Attend and Tell without the doubly stochastic penalty: over a 12x12 grid and
#   ~9 words the penalty asks every cell to be looked at, which sends the attention
#   at a shape word away from the object that its colour word has just looked at.
# - A one-head Transformer reading the CNN cells directly: its cross-attention maps
#   are the only way image information reaches each word (an encoder block over the
#   cells spreads each glyph over the grid: with one, the last map peaked on the named
#   glyph for 41% of the words, where exact captions were 100%). Two decoder blocks,
#   because with one a word's query cannot know where the previous words looked
#   (cross-attention outputs reach later words only through the next block's
#   self-attention), which a caption of several objects in an order needs.
# - The ViT captioner (no CNN): 4-pixel patches, the CNN's cells (20x15 on 80x60
#   scenes), with 2D sinusoidal positions, and one encoder block whose scores are
#   penalised by patch distance (2D ALiBi, `alibi_2d`): it does the CNN's work of telling
#   the shapes apart. On 80x60 object-relation scenes, 8-pixel patches with two blocks
#   were still at a validation loss of 0.65 after 1800 steps, 4-pixel patches at 0.47
#   after 2850, and with 2D ALiBi they passed 0.28 after 1250 steps. Each patch becomes
#   a token through a convolutional stem (`patch_stem`, Xiao et al. 2021) rather than
#   one linear projection: a token then sees the strokes around its patch, as a CNN
#   cell does; on strips of three 8x8 pixel-art digits in 20 epochs the linear
#   projection reached 0.690 exact captions, the stem 1.000.
# - `train_steps`: the most optimizer steps when `--epochs` is not given. Training
#   holds the peak learning rate while the validation loss improves and decays once
#   it stalls (`DecayOnPlateau`): attention models sit on a plateau for a number of
#   steps that depends on the data before they learn where to look, so a schedule
#   fixed in advance either wastes steps on easy data or decays too early on hard data
#   (on 64x96 object-relation scenes, Show, Attend and Tell left its plateau after
#   1000 of 1740 fixed steps). `earliest_decay_step`: no stall starts the decay
#   sooner; the ViT captioner, slower to leave its plateau, gets twice the steps.
# Every captioner: at most 5000 optimizer steps, a peak learning rate of 2e-3.
# --model's default; with --init-from the model is "vit".
PRETRAINED_ENCODER_MODEL_DEFAULT = "show_attend_tell"
_SCHEDULE_DEFAULTS = dict(train_steps=5000, learning_rate=2e-3)
# Both Transformer captioners: 64 wide, two decoder blocks.
_TRANSFORMER_DEFAULTS = dict(_SCHEDULE_DEFAULTS, hidden_dim=64, num_layers=2)
CAPTIONER_DEFAULTS = {
    "show_attend_tell": dict(
        _SCHEDULE_DEFAULTS, earliest_decay_step=2000, hidden_dim=128, attention_penalty=0.0
    ),
    "transformer": dict(
        _TRANSFORMER_DEFAULTS, earliest_decay_step=2000, num_heads=1, encoder_layers=0
    ),
    "vit": dict(
        _TRANSFORMER_DEFAULTS,
        earliest_decay_step=4000,
        num_heads=2,
        encoder_layers=1,
        patch_size=4,
        patch_stem="convolutional",
    ),
}
DATASET_FORMATS = (
    "'builtin' (generated scenes, offline); 'folder:PATH', a data set as downloaded, its "
    "layout recognised from its files and printed: PATH/captions.tsv of file<TAB>caption "
    "lines; COCO, PATH/annotations/captions_{train,val}YEAR.json with PATH/trainYEAR/ and "
    "PATH/valYEAR/ (train; val dealt alternately into validation and test); Karpathy's "
    "PATH/dataset_*.json (its train+restval, val and test splits; images in PATH, images/, "
    "Images/ or at filepath/filename); Flickr8k as shipped, "
    "PATH/Flickr8k_text/Flickr8k.token.txt with PATH/Flicker8k_Dataset/ (the official "
    "train, dev and test lists); Kaggle's Flickr8k, PATH/captions.txt (CSV image,caption) "
    "with PATH/Images/; for a folder holding several, name the file to read, e.g. "
    "folder:PATH/dataset_coco.json; 'csv:FILE', a CSV file with a header line "
    "(--image-column, --caption-column; image paths relative to FILE's folder); or "
    "'coco_captions[/CONFIG]' from tensorflow-datasets (--data-dir). Layouts without "
    "splits of their own are split at random by image (--seed). An image that is missing "
    "or cannot be decoded, or a line that is malformed or not UTF-8, is skipped with a "
    "warning naming it, or stops the run with --strict; image paths leaving the data set's "
    "folder are refused (--allow-outside-paths), as are symbolic links in it that lead "
    "outside it (--allow-outside-links); ~ and $VARIABLES are expanded"
)
# What to try when training does not learn (`LearningMonitor`'s hints), in terms of the flags.
HINTS = (
    "Try more epochs (--train-steps), another --learning-rate or --image-size, and "
    "check that the caption file names the right image for each caption."
)
# The smallest image side a backbone takes.
MIN_IMAGE_SIDE = 8
# `--dataset` PREFIX:PATH sources and what PATH must be (folder: may name a layout's file).
DATASET_PATHS = {"folder:": "path", "csv:": "file"}
# The csv: columns read when the flags name none (--image-column, --caption-column).
CSV_COLUMN_DEFAULTS = {"image_column": "image", "caption_column": "caption"}
DATASET_CHOICES = "'builtin', 'folder:PATH', 'csv:FILE' or 'coco_captions[/CONFIG]'"


def image_size_argument(text):
    """`argparse` type of `--image-size`: "48" (a square) or "32x96" (height x width).

    Example:

    >>> from keras_attention.tasks.captioning.flags import image_size_argument
    >>> image_size_argument("48"), image_size_argument("32X96")
    ((48, 48), (32, 96))
    >>> image_size_argument("32x4")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected SIDE or HEIGHTxWIDTH with sides >= 8, got '32x4'
    """
    try:
        sides = tuple(int(part) for part in text.lower().split("x"))
    except ValueError:
        sides = ()
    if len(sides) not in (1, 2) or min(sides) < MIN_IMAGE_SIDE:
        raise argparse.ArgumentTypeError(
            f"expected SIDE or HEIGHTxWIDTH with sides >= {MIN_IMAGE_SIDE}, got {text!r}"
        )
    return (sides[0], sides[-1])


def _model_defaults(name):
    """ "show_attend_tell 128, transformer 64, ..." for the help of the flag `name`."""
    return cli.per_model_text(
        {model: values[name] for model, values in CAPTIONER_DEFAULTS.items() if name in values}
    )


def build_captioning_parser(description=None):
    """The captioning script's `argparse` parser: the shared flags and the captioner's.

    Flags whose default depends on `--model` parse to None; pass the result
    through `with_captioner_defaults`.

    Args:
        description: the text `--help` shows first.

    Returns:
        an `argparse.ArgumentParser`.

    Example:

    >>> from keras_attention.tasks.captioning.flags import build_captioning_parser
    >>> args = build_captioning_parser().parse_args(["--model", "transformer"])
    >>> args.model, args.output_dir, args.vocabulary_size, args.builtin_sizes
    ('transformer', 'runs/captioning', 1000, (4000, 500, 500))
    """
    return cli.training_parser(
        description,
        output_dir="runs/captioning",
        dataset_formats=DATASET_FORMATS,
        flag_groups=(
            _add_input_flags,
            _add_architecture_flags,
            cli.decoder_flags(learning_rate_help="peak learning rate (default: 2e-3)"),
            _add_data_flags,
            _add_report_flags,
        ),
    )


def _add_input_flags(add):
    """`--model` and the flags of what it reads: the image, its CNN, the captions' tokens."""
    add(
        "--model",
        choices=sorted(CAPTIONER_DEFAULTS),
        default="show_attend_tell",
        help="'show_attend_tell': LSTM attention decoder over the CNN grid; 'transformer': "
        "Transformer decoder over the CNN grid; 'vit': Transformers only, over image patches "
        "(default: %(default)s)",
    )
    add(
        "--image-size",
        type=image_size_argument,
        help="SIDE or HEIGHTxWIDTH the CNN sees (default: the median training image, "
        "rounded to the CNN's stride)",
    )
    add("--backbone", default="small_cnn", help="'small_cnn' or a keras.applications name")
    add("--backbone-weights", default=None, help="'imagenet' for pre-trained weights (a download)")
    add("--freeze-backbone", action="store_true", help="do not train the CNN")
    add(
        "--init-from",
        metavar="CHECKPOINT",
        help="the vit model's image encoder from a pretrained image classifier instead of "
        "random weights: a Hugging Face ViT or Swin folder (as save_pretrained writes it), a "
        "keras-hub ViT preset folder, or a handle of one (hf://ORG/NAME[@REVISION] through the "
        "Hugging Face cache, kaggle://... or a keras-hub preset name); its patch size, pixel "
        "normalisation and image size (unless --image-size) are kept, its weights frozen "
        "unless --train-encoder, and --encoder-layers new blocks (default 0) run on top",
    )
    add(
        "--train-encoder",
        action="store_true",
        help="with --init-from: fine-tune the pretrained encoder too (default: only the "
        "decoder learns)",
    )
    add(
        "--vocabulary-size",
        type=cli.positive_int,
        default=1000,
        help="most tokens, the 260 special and byte tokens included",
    )
    add(
        "--max-length",
        type=cli.token_length,
        help="tokens read and written per caption: its pieces plus the start (or end) token "
        "(default: fits the longest training caption)",
    )


# Flags whose default depends on `--model`: (flag, `add_argument` options, help), the
# help followed by each model's default.
_PER_MODEL_FLAGS = (
    ("--hidden-dim", dict(type=cli.positive_int), "LSTM units or Transformer width"),
    ("--num-layers", dict(type=cli.positive_int), "Transformer decoder blocks"),
    (
        "--encoder-layers",
        dict(type=cli.non_negative_int),
        "Transformer blocks over the image cells or patches",
    ),
    ("--num-heads", dict(type=cli.positive_int), "Transformer attention heads"),
    (
        "--patch-size",
        dict(type=cli.positive_int),
        "side of the vit model's square image patches in pixels; the derived image size "
        "is a multiple of it",
    ),
    (
        "--patch-stem",
        dict(choices=("linear", "convolutional")),
        "how the vit model turns a patch into a token: one linear projection, as ViT "
        "does, or strided convolutions that also see the pixels around it",
    ),
)


def _add_per_model_flag(add, flag, options, help_text):
    """Adds `flag`, its help naming the default of each model (the flag parses to None)."""
    add(
        flag,
        help=f"{help_text} (default: {_model_defaults(flag[2:].replace('-', '_'))})",
        **options,
    )


def _add_architecture_flags(add):
    """The flags of the captioner's size, patches and training steps (default: per model)."""
    for flag, options, help_text in _PER_MODEL_FLAGS:
        _add_per_model_flag(add, flag, options, help_text)
    add(
        "--attention-penalty",
        type=cli.non_negative_float,
        help="lambda of Show, Attend and Tell's doubly stochastic attention penalty "
        "(default: 0; the paper uses 1)",
    )
    _add_per_model_flag(
        add,
        "--train-steps",
        dict(type=cli.positive_int),
        "the most optimizer steps, when --epochs is not given; training stops sooner "
        "once the validation loss stops improving",
    )


def _add_data_flags(add):
    """The flags of the built-in scenes and of reading a user's caption files."""
    add(
        "--builtin-sizes",
        type=cli.non_negative_int,
        nargs=3,
        default=(4000, 500, 500),
        metavar=("TRAIN", "VALIDATION", "TEST"),
        help="scenes per split of the built-in dataset",
    )
    add(
        "--image-column",
        default=CSV_COLUMN_DEFAULTS["image_column"],
        help="csv: the column of image paths, relative to the CSV file's folder",
    )
    add(
        "--caption-column",
        default=CSV_COLUMN_DEFAULTS["caption_column"],
        help="csv: the column of captions",
    )
    add(
        "--allow-outside-paths",
        action="store_true",
        help="read image paths of a caption file that are absolute or leave the data set's "
        "folder through '..' (refused by default)",
    )
    add(
        "--allow-outside-links",
        action="store_true",
        help="read images reached through a symbolic link in the data set's folder that "
        "leads outside it (refused by default, naming the link and its target; the folder "
        "itself may be a link)",
    )


def _add_report_flags(add):
    """The flags of what is scored and drawn after training, and the seed."""
    add("--eval-images", type=cli.positive_int, help="held-out captions to score (default: all)")
    add("--samples", type=cli.non_negative_int, default=4, help="captions to print and draw")
    add("--seed", type=cli.seed_value, default=0, help=cli.SEED_HELP)


def check_captioning_data(parser, args):
    """Stops with one `error:` line (exit status 2) on what the flags name that is not there.

    Pure Python, run by the script before TensorFlow loads and before the run
    claims its `--output-dir`: `--dataset` is 'builtin', 'coco_captions[/CONFIG]'
    or a known prefix followed by an existing path (folder:, a folder or one
    of a layout's files) or file (csv:), and a csv: file's header line names
    `--image-column` and `--caption-column`. The rest of the files is read
    later, by the loader.

    Args:
        parser: the script's parser.
        args: the parsed flags.

    Example:

    >>> from keras_attention.tasks.captioning.flags import (
    ...     build_captioning_parser, check_captioning_data)
    >>> parser = build_captioning_parser()
    >>> check_captioning_data(parser, parser.parse_args([]))
    >>> check_captioning_data(parser, parser.parse_args(["--dataset", "flickr8k"]))
    Traceback (most recent call last):
    ...
    SystemExit: 2
    """
    path = cli.check_dataset_flag(
        parser,
        args.dataset,
        paths=DATASET_PATHS,
        is_named=lambda name: name == "builtin" or name.split("/")[0] == "coco_captions",
        expected=DATASET_CHOICES,
        data_dir=args.data_dir,
        names=("builtin", "coco_captions"),
    )
    check_init_from(parser, args)
    if args.dataset.startswith("csv:"):
        columns = {"--image-column": args.image_column, "--caption-column": args.caption_column}
        cli.check_file_columns(parser, path, columns, args.dataset)


def with_captioner_defaults(args):
    """Fills the flags left unset with the defaults of `args.model`; returns `args`.

    With `--init-from` the model is "vit", on the checkpoint's encoder: its
    patch size is the checkpoint's, and `--encoder-layers` new blocks on top
    default to 0.

    Example:

    >>> from keras_attention.tasks.captioning.flags import (
    ...     build_captioning_parser, with_captioner_defaults)
    >>> parser = build_captioning_parser()
    >>> args = with_captioner_defaults(parser.parse_args(["--model", "transformer"]))
    >>> args.hidden_dim, args.num_layers, args.num_heads, args.encoder_layers
    (64, 2, 1, 0)
    """
    from_checkpoint = bool(getattr(args, "init_from", None))
    _check_flags_apply(args, from_checkpoint)
    if from_checkpoint:
        if args.model not in ("vit", PRETRAINED_ENCODER_MODEL_DEFAULT):
            raise SystemExit(
                "error: --init-from starts the vit model's encoder from a checkpoint: use "
                f"--model vit or leave --model out. Received: --model {args.model}"
            )
        args.model = "vit"
        for name in ("patch_size", "patch_stem"):
            if getattr(args, name) is not None:
                flag = "--" + name.replace("_", "-")
                raise SystemExit(
                    f"error: {flag} {getattr(args, name)}: --init-from keeps the checkpoint's "
                    f"patch encoder; leave {flag} out"
                )
        if args.encoder_layers is None:
            args.encoder_layers = 0
        args.init_from = init_from_checkpoint_folder(args.init_from)
    cli.with_model_defaults(args, CAPTIONER_DEFAULTS)
    if from_checkpoint:
        # The checkpoint's patch encoder is used: run_arguments.json must not record the
        # vit defaults' patch size and stem as if they were.
        args.patch_size = args.patch_stem = None
    _check_captioner_sizes(args)
    return args


def _check_flags_apply(args, from_checkpoint):
    """Stops with one `error:` line on a flag that nothing would read: a typo costs no run."""
    if getattr(args, "train_encoder", False) and not from_checkpoint:
        raise SystemExit(
            "error: --train-encoder applies with --init-from (a pretrained encoder fine-tuned "
            "too); without it the encoder trains anyway: leave it out"
        )
    columns = [
        f"--{name.replace('_', '-')} {getattr(args, name)}"
        for name, default in CSV_COLUMN_DEFAULTS.items()
        if getattr(args, name, default) != default
    ]
    if columns and not args.dataset.startswith("csv:"):
        raise SystemExit(
            f"error: {' and '.join(columns)}: the columns apply to csv: data sets. "
            f"Received: --dataset {args.dataset}"
        )


def _check_captioner_sizes(args):
    """Stops with one `error:` line on sizes the chosen captioner cannot be built with.

    Checked here, before TensorFlow loads and the run claims its folder, in the
    flags' names; the models check the same in their arguments' names.
    """
    if args.model == "show_attend_tell" and args.hidden_dim < 2:
        raise SystemExit(
            "error: --hidden-dim must be at least 2 for show_attend_tell (its embeddings and "
            f"attention are half as wide). Received: --hidden-dim {args.hidden_dim}"
        )
    if args.model == "show_attend_tell":
        return
    if args.hidden_dim % args.num_heads:
        raise SystemExit(
            "error: --num-heads must divide --hidden-dim (each head reads an equal share). "
            f"Received: --hidden-dim {args.hidden_dim}, --num-heads {args.num_heads}"
        )
    if args.model != "vit" or getattr(args, "init_from", None):
        return  # a pretrained encoder brings its own patches and positions
    if args.hidden_dim % 4:
        raise SystemExit(
            "error: --hidden-dim must be a multiple of 4 for the vit model (its 2D sinusoidal "
            f"positions). Received: --hidden-dim {args.hidden_dim}"
        )
    if args.image_size and any(side % args.patch_size for side in args.image_size):
        raise SystemExit(
            "error: --patch-size must divide both sides of --image-size (the vit model reads "
            f"whole patches). Received: --image-size {'x'.join(map(str, args.image_size))}, "
            f"--patch-size {args.patch_size}"
        )


def captioner_options(args):
    """The keyword arguments of `build_captioner` that the parsed flags set.

    Example:

    >>> from keras_attention.tasks.captioning.flags import (
    ...     build_captioning_parser, captioner_options, with_captioner_defaults)
    >>> args = build_captioning_parser().parse_args(["--image-size", "32", "--freeze-backbone"])
    >>> options = captioner_options(with_captioner_defaults(args))
    >>> options["image_size"], options["trainable_backbone"], options["hidden_dim"]
    ((32, 32), False, 128)
    """
    if getattr(args, "init_from", None):
        return {"trainable_encoder": args.train_encoder} | cli.flag_values(
            args, "hidden_dim", "dropout", "num_layers", "num_heads", "encoder_layers"
        )
    options = cli.flag_values(args, "image_size", "backbone", "backbone_weights")
    options["trainable_backbone"] = not args.freeze_backbone
    return options | cli.flag_values(
        args,
        "hidden_dim",
        "dropout",
        "attention_penalty",
        "num_layers",
        "num_heads",
        "encoder_layers",
        "patch_size",
        "patch_stem",
    )


def source_options(args):
    """The keyword arguments of `load_caption_dataset` that the parsed flags set.

    Example:

    >>> from keras_attention.tasks.captioning.flags import (
    ...     build_captioning_parser, source_options)
    >>> options = source_options(build_captioning_parser().parse_args(["--strict", "--seed", "3"]))
    >>> options["seed"], options["strict"], options["image_column"], options["data_dir"]
    (3, True, 'image', None)
    """
    return cli.flag_values(
        args,
        "builtin_sizes",
        "seed",
        "strict",
        "data_dir",
        "allow_outside_paths",
        "allow_outside_links",
        "image_column",
        "caption_column",
    )
