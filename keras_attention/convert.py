"""`python -m keras_attention.convert CHECKPOINT --export OUT`: a pretrained checkpoint served.

Reads a Hugging Face checkpoint folder (as `save_pretrained` writes it) into
the library's model and writes its TensorFlow SavedModel: see
`keras_attention.tasks.checkpoint_export`. ViT image classifiers
(`ViTForImageClassification`) are converted.

    python -m keras_attention.convert ~/checkpoints/vit-base-patch16-224 --export served/vit
"""

import argparse
import os
import sys


def build_parser():
    """The command line; it imports no TensorFlow, so `--help` answers at once."""
    from keras_attention.training.command_line import positive_int

    parser = argparse.ArgumentParser(
        prog="python -m keras_attention.convert",
        description=__doc__.split("\n")[0].split(": ", 1)[1],
    )
    parser.add_argument("checkpoint", help="a Hugging Face checkpoint folder")
    parser.add_argument(
        "--export",
        required=True,
        help="folder to write the SavedModel to: absent, empty or an earlier export, which "
        "it replaces whole",
    )
    parser.add_argument(
        "--beam-width", type=positive_int, help="translators: 1 for greedy search (default)"
    )
    parser.add_argument(
        "--max-length", type=positive_int, help="translators: the longest translation in tokens"
    )
    return parser


def main(argv=None):
    """Parses the flags, then converts; what cannot be converted ends with its reason."""
    args = build_parser().parse_args(argv)
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from keras_attention.tasks.checkpoint_export import export_checkpoint

    try:
        return export_checkpoint(
            os.path.expanduser(args.checkpoint),
            args.export,
            beam_width=args.beam_width,
            max_length=args.max_length,
        )
    except ValueError as error:  # RunFolderError included
        raise SystemExit(f"error: {error}") from None


if __name__ == "__main__":
    main(sys.argv[1:])
