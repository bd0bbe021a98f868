"""Write the TensorFlow SavedModel of a training run from its checkpoints, with no retraining.

Reads the --output-dir of a finished or interrupted run of the example
scripts (train_nmt.py, train_captioning.py, train_vit.py), loads its newest
checkpoint that reads (checkpoints/epoch_NNN.keras, with the model's
tokenizers inside; or the one --checkpoint names) and writes the SavedModel
the script's own --export writes (see `keras_attention.tasks.run_export`):
strings in, `translation` out for a translator; pixels or image bytes in,
`caption` out for a captioner; pixels in, `probabilities` and `labels` out for
an image classifier.

What cannot be read or exported ends with one line saying why.
Installed as the command `keras-attention-export`; the same as
`python -m keras_attention.export`.

examples:
    keras-attention-export runs/nmt --export runs/nmt/served
    keras-attention-export runs/captioning --export served/captioner --beam-width 3
"""

import os
import sys

from keras_attention.native_start_up_lines import import_tensorflow_quietly
from keras_attention.training.command_line import run_export_command

COMMAND = "keras-attention-export"


def build_parser():
    """The command line; it imports no TensorFlow, so `--help` answers at once."""
    from keras_attention.training.command_line import command_name
    from keras_attention.training.command_line import export_command_parser
    from keras_attention.training.command_line import positive_int

    parser = export_command_parser(
        command_name(COMMAND, "keras_attention.export"),
        __doc__,
        "run_dir",
        "the --output-dir of a training run of train_nmt.py, train_captioning.py or "
        "train_vit.py (the folder holding checkpoints/)",
        "; never one of the run's own folders",
    )
    parser.add_argument(
        "--checkpoint",
        metavar="FILE",
        help="the .keras file to export (default: the run's newest checkpoint that loads)",
    )
    parser.add_argument(
        "--beam-width",
        type=positive_int,
        metavar="N",
        help="translators and captioners: 1 for greedy search, more for beam search with N "
        "beams (default: 1)",
    )
    parser.add_argument(
        "--max-length",
        type=positive_int,
        metavar="N",
        help="translators and captioners: the longest translation or caption, in tokens "
        "(default: the model's own, or the run's recorded --max-length)",
    )
    return parser


def main(argv=None):
    """Parses the flags, then exports; what cannot be exported ends with its reason."""
    args = build_parser().parse_args(argv)

    def write():
        import_tensorflow_quietly()  # without its start-up lines about a missing GPU
        from keras_attention.tasks.run_export import export_run

        return export_run(
            os.path.expanduser(args.run_dir),
            args.export,
            checkpoint=args.checkpoint,
            beam_width=args.beam_width,
            max_length=args.max_length,
        )[0]

    return run_export_command(write)


if __name__ == "__main__":
    main(sys.argv[1:])
