"""`python -m keras_attention.export RUN_DIR --export OUT`: the SavedModel of a run, no retraining.

Writes the serving model of a finished or interrupted run of the example
scripts from its newest checkpoint (and the tokenizers inside it, or its
saved vocabulary): see `keras_attention.tasks.run_export`.

    python -m keras_attention.export runs/nmt --export runs/nmt/served
    python -m keras_attention.export runs/captioning --export served --beam-width 3
"""

import os
import sys

from keras_attention.training.command_line import run_export_command


def build_parser():
    """The command line; it imports no TensorFlow, so `--help` answers at once."""
    from keras_attention.training.command_line import export_command_parser
    from keras_attention.training.command_line import positive_int

    parser = export_command_parser(
        "python -m keras_attention.export",
        __doc__,
        "run_dir",
        "the --output-dir of a training run",
        "; never one of the run's own folders",
    )
    parser.add_argument(
        "--checkpoint",
        help="the .keras file to export (default: the run's newest checkpoint that loads)",
    )
    parser.add_argument(
        "--beam-width",
        type=positive_int,
        default=1,
        help="1 for greedy search, more for beam search (translators, captioners; default 1)",
    )
    parser.add_argument(
        "--max-length",
        type=positive_int,
        help="the longest translation or caption in tokens (default: the model's, or the "
        "run's recorded --max-length)",
    )
    return parser


def main(argv=None):
    """Parses the flags, then exports; what cannot be exported ends with its reason."""
    args = build_parser().parse_args(argv)

    def write():
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
