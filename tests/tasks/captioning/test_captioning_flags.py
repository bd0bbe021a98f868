"""The captioning command line: its defaults, its checks, and what it hands to the package."""

import argparse
import re
import subprocess
import sys

import pytest

from keras_attention.tasks.captioning.flags import CAPTIONER_DEFAULTS
from keras_attention.tasks.captioning.flags import build_captioning_parser
from keras_attention.tasks.captioning.flags import captioner_options
from keras_attention.tasks.captioning.flags import image_size_argument
from keras_attention.tasks.captioning.flags import source_options
from keras_attention.tasks.captioning.flags import with_captioner_defaults


def parse(argv):
    return with_captioner_defaults(build_captioning_parser().parse_args(argv))


def test_defaults():
    args = parse([])
    assert (args.model, args.dataset, args.output_dir, args.strategy) == (
        "show_attend_tell",
        "builtin",
        "runs/captioning",
        "default",
    )
    # Left to be derived from the data.
    assert (args.epochs, args.batch_size, args.image_size) == (None, None, None)
    assert args.train_steps == CAPTIONER_DEFAULTS["show_attend_tell"]["train_steps"] == 5000
    assert (args.hidden_dim, args.learning_rate, args.attention_penalty) == (128, 2e-3, 0.0)
    assert (args.vocabulary_size, args.dropout, args.beam_width, args.samples, args.seed) == (
        1000,
        0.1,
        1,
        4,
        0,
    )
    assert args.builtin_sizes == (4000, 500, 500) and args.html is True
    # Flags of the other model stay unset.
    assert (args.num_layers, args.num_heads, args.encoder_layers) == (None, None, None)


def test_image_sizes():
    assert parse(["--image-size", "32x96"]).image_size == (32, 96)
    assert parse(["--image-size", "48"]).image_size == (48, 48)
    assert parse(["--image-size", "8X8"]).image_size == (8, 8)
    for bad in ("32x4", "wide", "32x96x3", "", "-32", "7"):
        with pytest.raises(SystemExit):
            parse(["--image-size", bad])
    with pytest.raises(argparse.ArgumentTypeError, match="sides >= 8, got '32x'"):
        image_size_argument("32x")


def test_given_flags_win_over_the_model_defaults():
    args = parse(["--model", "transformer", "--epochs", "2", "--hidden-dim", "32"])
    assert (args.epochs, args.hidden_dim) == (2, 32)
    assert (args.num_layers, args.num_heads, args.encoder_layers) == (2, 1, 0)
    assert args.train_steps == 5000 and args.learning_rate == 2e-3
    assert parse(["--attention-penalty", "1"]).attention_penalty == 1.0
    args = parse(["--model", "vit", "--patch-size", "8"])
    assert (args.patch_size, args.num_layers, args.num_heads, args.hidden_dim) == (8, 2, 2, 64)
    args = parse(["--model", "vit"])
    assert (args.patch_size, args.encoder_layers, args.earliest_decay_step) == (4, 1, 4000)
    assert args.patch_stem == "convolutional"
    assert parse(["--model", "vit", "--patch-stem", "linear"]).patch_stem == "linear"
    with pytest.raises(SystemExit):
        parse(["--model", "vit", "--patch-stem", "resnet"])
    with pytest.raises(SystemExit):
        parse(["--model", "lstm"])


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--hidden-dim", "1"], "--hidden-dim must be at least 2 for show_attend_tell"),
        (
            ["--model", "transformer", "--hidden-dim", "30", "--num-heads", "4"],
            "--num-heads must divide --hidden-dim.*--hidden-dim 30, --num-heads 4",
        ),
        (
            ["--model", "vit", "--hidden-dim", "30"],
            "--hidden-dim must be a multiple of 4 for the vit model.*30",
        ),
        (
            ["--model", "vit", "--image-size", "32x30", "--patch-size", "4"],
            "--patch-size must divide both sides.*--image-size 32x30, --patch-size 4",
        ),
        # The vit model's default patch (4) against a user's image size.
        (["--model", "vit", "--image-size", "30"], ".*--image-size 30x30, --patch-size 4"),
    ],
)
def test_sizes_a_captioner_cannot_be_built_with_stop_before_tensorflow(argv, message):
    with pytest.raises(SystemExit, match="^error: " + message):
        parse(argv)


def test_sizes_the_captioners_can_be_built_with_pass():
    assert parse(["--hidden-dim", "2"]).hidden_dim == 2
    assert parse(["--model", "transformer", "--hidden-dim", "6", "--num-heads", "2"]).num_heads == 2
    assert parse(["--model", "vit", "--image-size", "32x96", "--patch-size", "8"]).patch_size == 8


def test_help_names_each_model_default():
    text = " ".join(build_captioning_parser("Train a captioner.").format_help().split())
    assert text.count("Train a captioner.") == 1
    assert "(default: show_attend_tell 128, transformer 64, vit 64)" in text
    assert "(default: show_attend_tell 5000, transformer 5000, vit 5000)" in text


def test_options_handed_to_the_model_and_the_data():
    args = parse(["--image-size", "32x96", "--freeze-backbone", "--backbone", "MobileNetV2"])
    options = captioner_options(args)
    assert options == {
        "image_size": (32, 96),
        "backbone": "MobileNetV2",
        "backbone_weights": None,
        "trainable_backbone": False,
        "hidden_dim": 128,
        "dropout": 0.1,
        "attention_penalty": 0.0,
        "num_layers": None,
        "num_heads": None,
        "encoder_layers": None,
        "patch_size": None,
        "patch_stem": None,
    }
    args = parse(["--builtin-sizes", "16", "8", "6", "--seed", "2"])
    assert source_options(args) == {
        "builtin_sizes": [16, 8, 6],
        "seed": 2,
        "strict": False,
        "data_dir": None,
        "allow_outside_paths": False,
        "allow_outside_links": False,
        "image_column": "image",
        "caption_column": "caption",
    }
    args = parse(
        [
            "--dataset",
            "csv:list.csv",
            "--image-column",
            "path",
            "--caption-column",
            "text",
            "--allow-outside-paths",
            "--allow-outside-links",
            "--data-dir",
            "tfds",
        ]
    )
    options = source_options(args)
    assert (options["image_column"], options["caption_column"]) == ("path", "text")
    assert options["allow_outside_paths"] and options["allow_outside_links"]
    assert options["data_dir"] == "tfds"


def test_parser_imports_no_tensorflow():
    probe = (
        "import sys\n"
        "from keras_attention.tasks.captioning.flags import build_captioning_parser\n"
        "build_captioning_parser().parse_args(['--image-size', '32x96'])\n"
        "print('tensorflow' in sys.modules, 'keras' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60
    )
    assert result.stdout.split() == ["False", "False"], result.stderr


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--train-encoder"], "error: --train-encoder applies with --init-from"),
        (
            ["--image-column", "path"],
            "error: --image-column path: the columns apply to csv: data sets. "
            "Received: --dataset builtin",
        ),
        (
            ["--dataset", "coco:x", "--caption-column", "text", "--image-column", "f"],
            "error: --image-column f and --caption-column text: the columns apply to csv:",
        ),
    ],
)
def test_flags_nothing_would_read_stop_while_parsing(argv, message):
    with pytest.raises(SystemExit, match="^" + re.escape(message)):
        with_captioner_defaults(build_captioning_parser().parse_args(argv))
