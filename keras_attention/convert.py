"""`python -m keras_attention.convert CHECKPOINT --export OUT`: a pretrained checkpoint served.

Reads a Hugging Face checkpoint folder (as `save_pretrained` writes it) into
the library's model and writes its TensorFlow SavedModel: see
`keras_attention.tasks.checkpoint_export`. Converted: image classifiers
(Hugging Face `ViTForImageClassification` and `SwinForImageClassification`,
keras-hub ViT presets: pixels in, `probabilities` and `labels` out) and
translators (Hugging Face `MarianMTModel`, opus-mt, with its tokenizer files:
strings in, `translation` out; load it after `import tensorflow_text`).

    python -m keras_attention.convert ~/checkpoints/vit-base-patch16-224 --export served/vit
    python -m keras_attention.convert ~/checkpoints/opus-mt-en-de --export served/en-de
"""

import os
import sys

from keras_attention.training.command_line import run_export_command


def build_parser():
    """The command line; it imports no TensorFlow, so `--help` answers at once."""
    from keras_attention.training.command_line import export_command_parser
    from keras_attention.training.command_line import positive_int

    parser = export_command_parser(
        "python -m keras_attention.convert",
        __doc__,
        "checkpoint",
        "a Hugging Face checkpoint folder (ViT, Swin, Marian) or a keras-hub ViT preset folder",
        "",
    )
    parser.add_argument(
        "--beam-width", type=positive_int, help="translators: 1 for greedy search (default)"
    )
    parser.add_argument(
        "--max-length",
        type=positive_int,
        help="translators: the longest source and translation in pieces (default: 128)",
    )
    parser.add_argument(
        "--ignore-unexpected-weights",
        action="store_true",
        help="Hugging Face folders: convert although the weights hold tensors the config does "
        "not describe (refused by default, naming them)",
    )
    return parser


def main(argv=None):
    """Parses the flags, then converts; what cannot be converted ends with its reason."""
    args = build_parser().parse_args(argv)

    def write():
        from keras_attention.tasks.checkpoint_export import export_checkpoint

        return export_checkpoint(
            os.path.expanduser(args.checkpoint),
            args.export,
            beam_width=args.beam_width,
            max_length=args.max_length,
            ignore_unexpected_weights=args.ignore_unexpected_weights,
        )

    return run_export_command(write)


if __name__ == "__main__":
    main(sys.argv[1:])
