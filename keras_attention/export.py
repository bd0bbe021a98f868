"""`python -m keras_attention.export RUN_DIR --export OUT`: the SavedModel of a run, no retraining.

Writes the serving model of a finished or interrupted run of the example
scripts from its newest checkpoint (and the tokenizers inside it, or its
saved vocabulary): see `keras_attention.tasks.run_export`.

    python -m keras_attention.export runs/nmt --export runs/nmt/served
    python -m keras_attention.export runs/captioning --export served --beam-width 3
"""

import argparse
import os
import sys


def build_parser():
    """The command line; it imports no TensorFlow, so `--help` answers at once."""
    from keras_attention.training.command_line import positive_int

    parser = argparse.ArgumentParser(
        prog="python -m keras_attention.export",
        description=__doc__.split("\n")[0].split(": ", 1)[1],
    )
    parser.add_argument("run_dir", help="the --output-dir of a training run")
    parser.add_argument(
        "--export",
        required=True,
        help="folder to write the SavedModel to: absent, empty or an earlier export, which "
        "it replaces whole; never one of the run's own folders",
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
    """Parses the flags, then exports; a path that cannot be used ends with its reason."""
    args = build_parser().parse_args(argv)
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from keras_attention.tasks.run_export import export_run
    from keras_attention.training.run_folder import RunFolderError

    try:
        path, _ = export_run(
            os.path.expanduser(args.run_dir),
            args.export,
            checkpoint=args.checkpoint,
            beam_width=args.beam_width,
            max_length=args.max_length,
        )
    except RunFolderError as error:
        raise SystemExit(f"error: {error}") from None
    return path


if __name__ == "__main__":
    main(sys.argv[1:])
