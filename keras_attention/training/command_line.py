"""The command line the training scripts share: common flags and checked number types.

Building a parser imports neither TensorFlow nor Keras, so `--help` and a bad
flag are answered at once.

Example:

>>> import argparse
>>> from keras_attention.training.command_line import add_common_arguments
>>> parser = argparse.ArgumentParser()
>>> parser = add_common_arguments(parser, epochs=3, batch_size=16, output_dir="runs/demo")
>>> args = parser.parse_args(["--strategy", "mirrored"])
>>> args.dataset, args.epochs, args.strategy, args.mixed_precision
('builtin', 3, 'mirrored', False)
"""

import argparse
import difflib
import os
import sys
import warnings
from typing import NamedTuple

from keras_attention.file_encoding import check_text_file
from keras_attention.training.tfds_names import tfds_name_problem

STRATEGIES = ("default", "mirrored", "multiworker", "tpu")
# This package's folder: warnings raised in it are shown as one line (show_warnings_as_lines).
_PACKAGE_FOLDER = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# What the path after a `--dataset` prefix must be (see `check_dataset_flag`).
_PATH_KINDS = {"file": "a file", "folder": "a folder", "path": "a file or a folder"}
# Small runs never reach it; a killed run of hour-long epochs loses at most this much.
DEFAULT_BACKUP_EVERY = "30min"
_SECONDS_PER_UNIT = {"s": 1, "min": 60, "h": 3600}
# The help of flags the three training scripts share.
DROPOUT_HELP = "dropout rate of the model's layers while training (default: %(default)s)"
SEED_HELP = "random seed of the weights, the shuffling and the data splits (default: %(default)s)"


def export_command_parser(prog, doc, source, source_help, export_help):
    """The parser of a command that writes a SavedModel from `source` to `--export OUT`.

    `python -m keras_attention.export` and `python -m keras_attention.convert`
    read one folder and write one export; `--help` shows their module
    docstring whole (what the command does, then examples) and every flag's
    default.

    Example:

    >>> from keras_attention.training.command_line import export_command_parser
    >>> parser = export_command_parser("demo", "Serve a model.", "run_dir", "a run", "")
    >>> vars(parser.parse_args(["runs/a", "--export", "served"]))
    {'run_dir': 'runs/a', 'export': 'served'}
    """
    parser = argparse.ArgumentParser(
        prog=prog, description=doc.strip(), formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(source, help=source_help)
    parser.add_argument(
        "--export",
        required=True,
        metavar="OUT",
        help="folder to write the SavedModel to (required): absent, empty or an earlier "
        "export, which it replaces whole" + export_help,
    )
    return parser


def command_name(installed, module):
    """`installed` when the command runs under that name, else `python -m module`.

    The export commands are installed as console scripts and run as modules;
    their usage line names the way they were started.

    Example:

    >>> from keras_attention.training.command_line import command_name
    >>> command_name("keras-attention-export", "keras_attention.export")  # under pytest
    'python -m keras_attention.export'
    """
    import sys

    started = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return installed if started == installed else f"python -m {module}"


def show_warnings_as_lines():
    """Shows this package's warnings as `warning: ...` lines, as its errors are `error: ...`.

    Python's default shows a warning with the file and line that raised it and
    that line's source, which tell a user of a script nothing ("training_data.py:85:
    UserWarning: Skipped 3 ... / splits = load_caption_dataset("). Warnings from
    elsewhere (Keras, TensorFlow) keep Python's format. For scripts: it sets
    `warnings.formatwarning` for the whole process.

    Example:

    >>> import warnings
    >>> from keras_attention.training.command_line import show_warnings_as_lines
    >>> python_format = warnings.formatwarning
    >>> show_warnings_as_lines()
    >>> warnings.formatwarning("Skipped 2 lines", UserWarning, __file__, 1)
    'warning: Skipped 2 lines\\n'
    >>> warnings.formatwarning = python_format
    """
    python_format = warnings.formatwarning
    # With a separator at the end: "keras_attention_extra/" is not inside "keras_attention/".
    own_folders = tuple(
        os.path.join(folder, "")
        for folder in (_PACKAGE_FOLDER, os.path.dirname(os.path.abspath(sys.argv[0] or ".")))
    )

    def format_warning(message, category, filename, lineno, line=None):
        if issubclass(category, UserWarning) and os.path.abspath(filename).startswith(own_folders):
            return f"warning: {message}\n"
        return python_format(message, category, filename, lineno, line)

    warnings.formatwarning = format_warning


def run_export_command(write):
    """Runs `write()` with Keras on TensorFlow, quietly; a ValueError ends with its message.

    The export commands' bodies: what cannot be read or written (a path,
    a folder of another kind) is said in one line, not a traceback.

    Example:

    >>> from keras_attention.training.command_line import run_export_command
    >>> def refuse():
    ...     raise ValueError("`checkpoint` must be a folder")
    >>> run_export_command(refuse)
    Traceback (most recent call last):
    ...
    SystemExit: error: `checkpoint` must be a folder
    """
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        return write()
    except ValueError as error:  # RunFolderError included
        raise SystemExit(f"error: {error}") from None


def add_common_arguments(
    parser, *, epochs, batch_size, output_dir, dataset="builtin", dataset_formats=None
):
    """Adds the flags every example script shares to an `argparse` parser.

    Flags: `--dataset`, `--data-dir`, `--strict`, `--epochs`, `--steps-per-epoch`,
    `--batch-size`, `--output-dir`, `--backup-every`, `--overwrite`, `--export DIR` (write
    a SavedModel there), `--strategy {default,mirrored,multiworker,tpu}`,
    `--mixed-precision`, `--html` and `--quiet`.

    Args:
        parser: an `argparse.ArgumentParser`.
        epochs: default number of epochs.
        batch_size: default global batch size.
        output_dir: default folder for checkpoints, logs and figures.
        dataset: default `--dataset`.
        dataset_formats: text of the data sources `--dataset` accepts and
            their file formats, shown by `--help`.

    Returns:
        `parser`.

    Example:

    >>> import argparse
    >>> from keras_attention.training.command_line import add_common_arguments
    >>> parser = add_common_arguments(
    ...     argparse.ArgumentParser(), epochs=1, batch_size=8, output_dir="out")
    >>> parser.parse_args(["--batch-size", "4", "--export", "served"]).export
    'served'
    """
    parser.add_argument(
        "--dataset",
        default=dataset,
        help=f"data source (default: {dataset})"
        + (f": {dataset_formats}" if dataset_formats else ""),
    )
    for flag, options in _common_flags(epochs=epochs, batch_size=batch_size, output_dir=output_dir):
        parser.add_argument(flag, **options)
    return parser


def _common_flags(*, epochs, batch_size, output_dir):
    """`(flag, add_argument options)` of the common flags after `--dataset`, in `--help` order.

    One table on purpose: its rows are read, not run, and splitting it would
    scatter the `--help` order over several functions.
    """
    return (
        (
            "--data-dir",
            dict(
                metavar="DIR",
                help="tensorflow-datasets data directory, where tfds sets are downloaded to and "
                "prepared (default: tfds' own, ~/tensorflow_datasets); one holding a prepared "
                "copy trains without a network",
            ),
        ),
        (
            "--strict",
            dict(
                action="store_true",
                help="stop with an error naming a corrupt or unreadable file or line of the "
                "data, instead of skipping it with a warning naming it",
            ),
        ),
        (
            "--epochs",
            dict(
                type=positive_int,
                default=epochs,
                help="training epochs; run again with more, the same --output-dir trains on "
                "from where it stopped",
            ),
        ),
        (
            "--steps-per-epoch",
            dict(
                type=positive_int,
                metavar="N",
                help="optimizer steps in an epoch, the training data streamed round and round "
                "(reshuffled at each pass); checkpoints, validation and the learning-rate "
                "schedule count in such epochs (default: one pass over the training data)",
            ),
        ),
        ("--batch-size", dict(type=positive_int, default=batch_size, help="global batch size")),
        (
            "--output-dir",
            dict(
                default=output_dir,
                help="folder for checkpoints, TensorBoard logs, the backup and figures: new, "
                "empty, or one of this same run, which is resumed; locked while the run lasts "
                "(a second run on it stops at once); a folder of other files is refused",
            ),
        ),
        (
            "--backup-every",
            dict(
                type=backup_frequency,
                default=DEFAULT_BACKUP_EVERY,
                metavar="N|Mmin",
                help="back up the training state every N optimizer steps, or every M minutes "
                "of training (Mmin; also Ms or Mh), besides at the end of every epoch; 'epoch': "
                "only at the end of epochs. The same command started again after a kill "
                "resumes at the backed-up step; may change between a run and its resumption "
                f"(default: {DEFAULT_BACKUP_EVERY})",
            ),
        ),
        (
            "--overwrite",
            dict(
                action="store_true",
                help="empty an --output-dir that holds a run with other arguments (without it "
                "such a folder is refused, unless its run never trained: no checkpoint, backup, "
                "log nor metrics, which is replaced; one holding this same run is resumed; a "
                "folder that is not a run, without run_arguments.json, is refused even so)",
            ),
        ),
        (
            "--export",
            dict(
                metavar="DIR",
                help="write a TensorFlow SavedModel to DIR: absent, empty, or an earlier export "
                "of keras_attention, which it replaces in one step once the new one is "
                "complete; not --output-dir nor a folder holding it (OUTPUT_DIR/served is "
                "fine); checked before training",
            ),
        ),
        (
            "--strategy",
            dict(
                choices=STRATEGIES,
                default="default",
                help="'mirrored' trains on every local GPU (or the CPU) with tf.distribute; "
                "'multiworker' on every machine the TF_CONFIG environment variable names (run "
                "the same command on each; only the chief writes results); 'tpu' on the Cloud "
                "TPU TPUClusterResolver finds (TPU_NAME)",
            ),
        ),
        (
            "--mixed-precision",
            dict(
                action="store_true",
                help="float32 weights, 16-bit compute (float16 on GPU, bfloat16 on CPU)",
            ),
        ),
        (
            "--html",
            dict(
                action=argparse.BooleanOptionalAction,
                default=True,
                help="write attention_explorer.html beside the figures: one page that opens "
                "from disk, to step through the test examples' attention by layer, head and "
                "word",
            ),
        ),
        (
            "--quiet",
            dict(
                action="store_true",
                help="one line per epoch and per stage (vocabulary, image check, decoding, "
                "export) instead of progress bars, as when the output is not a terminal",
            ),
        ),
    )


def decoder_flags(*, learning_rate_help):
    """The flag group of a text decoder: `--dropout`, `--learning-rate` and `--beam-width`.

    The translation and captioning scripts share them; `--learning-rate`
    defaults to None, for the script to fill in per model.

    Args:
        learning_rate_help: the `--help` text of `--learning-rate`.

    Returns:
        a function of a parser's `add_argument` that adds the flags, for
        `training_parser`'s `flag_groups`.

    Example:

    >>> from keras_attention.training.command_line import decoder_flags, training_parser
    >>> group = decoder_flags(learning_rate_help="peak learning rate")
    >>> parser = training_parser(
    ...     "Train.", output_dir="out", dataset_formats="", flag_groups=[group])
    >>> args = parser.parse_args(["--beam-width", "4"])
    >>> args.dropout, args.learning_rate, args.beam_width
    (0.1, None, 4)
    """

    def add_decoder_flags(add):
        add("--dropout", type=rate, default=0.1, help=DROPOUT_HELP)
        add("--learning-rate", type=positive_float, help=learning_rate_help)
        add(
            "--beam-width", type=positive_int, default=1, help="1: greedy search; more: beam search"
        )

    return add_decoder_flags


def training_parser(description, *, output_dir, dataset_formats, flag_groups=()):
    """A parser with the common flags, whose epochs and batch size default to None.

    The scripts' recipes derive the epochs and the batch size from the data
    when the user leaves them out. The description is shown as written.

    Args:
        description: the text `--help` starts with.
        output_dir: default folder for checkpoints, logs and figures.
        dataset_formats: text of the data sources `--dataset` accepts.
        flag_groups: functions of the parser's `add_argument` that add the
            script's own flags, called in order after the common ones.

    Returns:
        an `argparse.ArgumentParser`, for the script's own flags to be added.

    Example:

    >>> from keras_attention.training.command_line import training_parser
    >>> parser = training_parser("Train.", output_dir="runs/demo", dataset_formats="'builtin'")
    >>> args = parser.parse_args([])
    >>> args.epochs, args.batch_size, args.output_dir
    (None, None, 'runs/demo')
    """
    parser = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_common_arguments(
        parser, epochs=None, batch_size=None, output_dir=output_dir, dataset_formats=dataset_formats
    )
    for add_flags in flag_groups:
        add_flags(parser.add_argument)
    return parser


def per_model_text(value_by_model):
    """ "show_attend_tell 128, transformer 64" for the help of a flag whose default is per model.

    Example:

    >>> from keras_attention.training.command_line import per_model_text
    >>> per_model_text({"vit": 2e-3, "swin": 5e-4})
    'vit 0.002, swin 0.0005'
    """
    return ", ".join(
        f"{model} {value:g}" if isinstance(value, float) else f"{model} {value}"
        for model, value in value_by_model.items()
    )


def with_model_defaults(args, defaults_by_model):
    """Fills the flags left unset (None) with the defaults of `args.model`; returns `args`.

    Example:

    >>> import argparse
    >>> from keras_attention.training.command_line import with_model_defaults
    >>> args = argparse.Namespace(model="rnn", hidden_dim=None, dropout=0.5)
    >>> defaults = {"rnn": {"hidden_dim": 128, "dropout": 0.1}}
    >>> vars(with_model_defaults(args, defaults))
    {'model': 'rnn', 'hidden_dim': 128, 'dropout': 0.5}
    """
    for name, value in defaults_by_model[args.model].items():
        if getattr(args, name, None) is None:
            setattr(args, name, value)
    return args


def flag_values(args, *names):
    """The dict name -> value of the parsed flags `names`, e.g. a function's keyword arguments.

    Example:

    >>> import argparse
    >>> from keras_attention.training.command_line import flag_values
    >>> flag_values(argparse.Namespace(seed=3, strict=True, model="rnn"), "seed", "strict")
    {'seed': 3, 'strict': True}
    """
    return {name: getattr(args, name) for name in names}


def positive_int(text):
    """`argparse` type: an integer > 0, else a message naming the value.

    Example:

    >>> from keras_attention.training.command_line import positive_int
    >>> positive_int("3")
    3
    >>> positive_int("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a positive integer; received 0
    """
    return _number(text, int, lambda value: value > 0, "a positive integer")


# The warnings `warn_unused_model_flags` gave in this process.
_SAID_UNUSED_FLAGS = set()


def warn_unused_model_flags(argv, model, flags_by_model):
    """Warns of each flag on the command line that only another `--model` reads.

    A typo of `--model`, or a flag meant for the other model, then costs a
    line to read rather than a run trained without it. Each is said once a
    process: a script parses its flags twice (before TensorFlow loads, and
    in `main`), and TensorFlow's import resets Python's own once-only record.

    Args:
        argv: the arguments parsed (None: `sys.argv[1:]`).
        model: the `--model` chosen.
        flags_by_model: `{model: (flags only that model reads)}`.

    Example:

    >>> import warnings
    >>> from keras_attention.training.command_line import warn_unused_model_flags
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_unused_model_flags(["--depth=8"], "small", {"large": ("--depth",)})
    >>> str(caught[0].message)
    '--depth applies to --model large; --model small ignores it'
    """
    tokens = sys.argv[1:] if argv is None else argv
    given = {token.split("=", 1)[0] for token in tokens if token.startswith("--")}
    for other, flags in flags_by_model.items():
        if other == model:
            continue
        for flag in flags:
            message = f"{flag} applies to --model {other}; --model {model} ignores it"
            if flag in given and flag not in flags_by_model.get(model, ()):
                if message not in _SAID_UNUSED_FLAGS:
                    _SAID_UNUSED_FLAGS.add(message)
                    warnings.warn(message, stacklevel=3)


def seed_value(text):
    """`argparse` type of `--seed`: an integer NumPy takes as a seed, 0 to 2**32 - 1.

    Example:

    >>> from keras_attention.training.command_line import seed_value
    >>> seed_value("-1")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be an integer from 0 to 4294967295; received -1
    """
    return _number(text, int, lambda value: 0 <= value < 2**32, "an integer from 0 to 4294967295")


def whole_number(minimum=1, multiple_of=1):
    """`argparse` type: an integer >= `minimum` that `multiple_of` divides.

    Example:

    >>> from keras_attention.training.command_line import whole_number
    >>> whole_number(100)("250")
    250
    >>> whole_number(4, multiple_of=4)("30")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a multiple of 4 of at least 4; received 30
    """
    expected = f"an integer >= {minimum}"
    if multiple_of > 1:
        expected = f"a multiple of {multiple_of} of at least {minimum}"

    def number(text):
        return _number(
            text, int, lambda value: value >= minimum and value % multiple_of == 0, expected
        )

    return number


def token_length(text):
    """`argparse` type of `--max-length`: an integer >= 2, a text's pieces and a start or end token.

    Example:

    >>> from keras_attention.training.command_line import token_length
    >>> token_length("1")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be an integer >= 2 (a piece and a start ...); received 1
    """
    return _number(
        text, int, lambda value: value >= 2, "an integer >= 2 (a piece and a start or end token)"
    )


def non_negative_int(text):
    """`argparse` type: an integer >= 0."""
    return _number(text, int, lambda value: value >= 0, "an integer >= 0")


def positive_float(text):
    """`argparse` type: a finite number > 0."""
    return _number(text, float, lambda value: 0 < value < float("inf"), "a positive number")


def non_negative_float(text):
    """`argparse` type: a finite number >= 0."""
    return _number(text, float, lambda value: 0 <= value < float("inf"), "a number >= 0")


def rate(text):
    """`argparse` type: a rate in [0, 1), e.g. a dropout rate."""
    return _number(text, float, lambda value: 0 <= value < 1, "a rate in [0, 1)")


class BackupFrequency(NamedTuple):
    """How often training is backed up besides at the end of every epoch.

    Attributes:
        steps: every this many optimizer steps, or None.
        seconds: every this many seconds of training, or None.
    """

    steps: int | None = None
    seconds: float | None = None


def backup_frequency(text):
    """`argparse` type of `--backup-every`: N steps, M minutes ("Mmin", "Ms", "Mh") or "epoch".

    Example:

    >>> from keras_attention.training.command_line import backup_frequency
    >>> backup_frequency("500"), backup_frequency("1.5min")
    (BackupFrequency(steps=500, seconds=None), BackupFrequency(steps=None, seconds=90.0))
    >>> backup_frequency("epoch")
    BackupFrequency(steps=None, seconds=None)
    >>> backup_frequency("10 minutes")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a number of steps (e.g. 500), ...; received '10 minutes'
    """
    text = str(text).strip()
    if text.lower() == "epoch":
        return BackupFrequency()
    expected = (
        "a number of steps (e.g. 500), of minutes (30min), seconds (90s) or hours (2h), or 'epoch'"
    )
    unit = next((unit for unit in ("min", "s", "h") if text.lower().endswith(unit)), None)
    if unit is None:
        if not text.isdigit():
            raise argparse.ArgumentTypeError(f"must be {expected}; received {text!r}")
        return BackupFrequency(steps=positive_int(text))
    try:
        amount = float(text[: -len(unit)])
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {expected}; received {text!r}") from None
    if not 0 < amount < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive duration; received {text!r}")
    return BackupFrequency(seconds=amount * _SECONDS_PER_UNIT[unit])


def _number(text, kind, valid, expected):
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {expected}; received {text!r}") from None
    if not valid(value):
        raise argparse.ArgumentTypeError(f"must be {expected}; received {text}")
    return value


def expand_path(path):
    """`path` with `~` and `$VARIABLES` expanded.

    Example:

    >>> import os
    >>> from keras_attention.training.command_line import expand_path
    >>> expand_path("~/runs") == os.path.join(os.path.expanduser("~"), "runs")
    True
    """
    return os.path.expanduser(os.path.expandvars(path))


def usage_error(parser, message):
    """Stops as `parser.error` does (exit status 2), in the one line `PROG: error: MESSAGE`.

    For what the flags name rather than how they are spelled (a data set's
    path, a file's columns), where the usage lines would not help.

    Example:

    >>> import argparse
    >>> from keras_attention.training.command_line import usage_error
    >>> usage_error(argparse.ArgumentParser(prog="train.py"), "--dataset must be 'builtin'")
    Traceback (most recent call last):
    ...
    SystemExit: 2
    """
    parser.exit(2, f"{parser.prog}: error: {message}\n")


def check_dataset_flag(
    parser, dataset, *, paths, is_named, expected, names=("builtin",), data_dir=None
):
    """Stops with one `error:` line unless `--dataset` is a named set or PREFIX + an existing path.

    Pure Python: the scripts call it before TensorFlow loads, so that a typo
    in a prefix, a path or a tensorflow-datasets name is answered at once, before the run claims its
    folder. An `hf:` path also needs the `datasets` package
    (`check_hf_datasets_installed`).

    Args:
        parser: the script's parser (its name starts the line).
        dataset: the `--dataset` value.
        paths: dict prefix -> what must follow it, "file", "folder" or
            "path" (either), e.g. `{"tsv:": "file", "parallel:": "folder"}`.
        is_named: function of `dataset`: whether it is a named set
            ('builtin', a tensorflow-datasets name).
        expected: what `--dataset` takes, for the message.
        names: the named sets, offered when a value is close to one ("buitin").
        data_dir: the `--data-dir` value: a named set other than 'builtin' is a
            tensorflow-datasets name, which tfds must know or this folder hold
            prepared (`tfds_name_problem`).

    Returns:
        the path after the prefix with `~` and `$VARIABLES` expanded, or None
        for a named set.

    Example:

    >>> import argparse, tempfile
    >>> from keras_attention.training.command_line import check_dataset_flag
    >>> parser = argparse.ArgumentParser(prog="train.py")
    >>> options = dict(paths={"folder:": "folder"}, is_named=lambda name: name == "builtin",
    ...                expected="'builtin' or 'folder:PATH'")
    >>> check_dataset_flag(parser, "builtin", **options) is None
    True
    >>> folder = tempfile.mkdtemp()
    >>> check_dataset_flag(parser, "folder:" + folder, **options) == folder
    True
    >>> check_dataset_flag(parser, "foldr:" + folder, **options)
    Traceback (most recent call last):
    ...
    SystemExit: 2
    """
    for prefix, kind in paths.items():
        if dataset.startswith(prefix):
            path = _dataset_path(parser, dataset, prefix, kind)
            check_hf_datasets_installed(parser, dataset)
            return path
    if is_named(dataset):
        problem = None if dataset == "builtin" else tfds_name_problem(dataset, data_dir)
        if problem is not None:
            usage_error(
                parser, f"--dataset must be {expected}; {problem}. Received: --dataset {dataset}"
            )
        return None
    hint = _dataset_hint(dataset, paths, names)
    usage_error(parser, f"--dataset must be {expected}{hint}. Received: --dataset {dataset}")


def check_hf_datasets_installed(parser, dataset):
    """Stops with one `error:` line when an `hf:` `--dataset` is given without `datasets`.

    Example:

    >>> import argparse
    >>> from keras_attention.training.command_line import check_hf_datasets_installed
    >>> check_hf_datasets_installed(argparse.ArgumentParser(), "builtin")  # not hf: fine
    """
    import importlib.util

    if dataset.startswith("hf:") and importlib.util.find_spec("datasets") is None:
        usage_error(
            parser,
            '--dataset hf: needs the `datasets` package: pip install "keras-attention[hf]" (or '
            f"pip install datasets). Received: --dataset {dataset}",
        )


def _dataset_path(parser, dataset, prefix, kind):
    """The path after `prefix`, expanded; one `error:` line unless it is an existing `kind`."""
    path = expand_path(dataset[len(prefix) :])
    what = _PATH_KINDS[kind]
    if not path:
        usage_error(
            parser,
            f"--dataset {prefix} must be followed by the path of {what}. "
            f"Received: --dataset {dataset}",
        )
    found = {"file": os.path.isfile, "folder": os.path.isdir, "path": os.path.exists}[kind](path)
    if not found:
        if not os.path.exists(path):
            state = "does not exist"
        else:
            state = "is a folder" if os.path.isdir(path) else "is not a folder"
        usage_error(
            parser,
            f"--dataset {prefix} must be followed by the path of {what}; {path} {state}. "
            f"Received: --dataset {dataset}",
        )
    if os.path.isfile(path) and os.path.getsize(path) == 0:
        usage_error(
            parser,
            f"--dataset {prefix} must be followed by the path of a file with data; {path} is "
            f"empty. Received: --dataset {dataset}",
        )
    if os.path.isfile(path):
        try:
            check_text_file(path)  # UTF-16 from a spreadsheet, gzip without .gz
        except ValueError as error:
            usage_error(parser, f"--dataset {dataset}: {error}")
    return path


def _dataset_hint(dataset, paths, names):
    """Why a `--dataset` value is none of the sources: an unknown prefix, a bare path, a typo."""
    if ":" in dataset:
        prefix = dataset.split(":", 1)[0] + ":"
        close = difflib.get_close_matches(prefix, list(paths), n=1, cutoff=0.6)
        return f"; {prefix!r} is not a source" + (f" (did you mean {close[0]!r}?)" if close else "")
    if paths and os.path.exists(expand_path(dataset)):
        return f"; a file or folder is named with its kind first, e.g. {next(iter(paths))}{dataset}"
    close = difflib.get_close_matches(dataset.split("/")[0], names, n=1, cutoff=0.75)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_file_columns(parser, path, columns, dataset):
    """Stops with one `error:` line unless the CSV file's header line names every `columns` flag.

    Only the header is read (with the `csv` module, the first line that is
    not blank, a UTF-8 byte-order mark dropped); a file that cannot be read
    as UTF-8 is left to the loader, which names its lines.

    Args:
        parser: the script's parser.
        path: the CSV file.
        columns: dict flag -> column name, e.g. `{"--image-column": "image"}`.
        dataset: the `--dataset` value, for the message.

    Example:

    >>> import argparse, os, tempfile
    >>> from keras_attention.training.command_line import check_file_columns
    >>> path = os.path.join(tempfile.mkdtemp(), "list.csv")
    >>> _ = open(path, "w").write("image,caption\\na.png,a cat\\n")
    >>> parser = argparse.ArgumentParser(prog="train.py")
    >>> check_file_columns(parser, path, {"--caption-column": "caption"}, "csv:" + path)
    >>> check_file_columns(parser, path, {"--caption-column": "text"}, "csv:" + path)
    Traceback (most recent call last):
    ...
    SystemExit: 2
    """
    import csv

    try:
        with open(path, encoding="utf-8-sig", newline="") as file:
            header = next((row for row in csv.reader(file) if any(f.strip() for f in row)), None)
    except (OSError, UnicodeDecodeError, csv.Error):
        return
    if header is None:
        usage_error(
            parser,
            f"--dataset {dataset}: {path} must start with a header line naming its columns; it "
            "is empty",
        )
    header = [name.strip() for name in header]
    missing = {flag: name for flag, name in columns.items() if name not in header}
    if missing:
        received = ", ".join(f"{flag} {name}" for flag, name in missing.items())
        usage_error(
            parser,
            f"{' and '.join(missing)} must name a column of {path}, whose header line names "
            f"{', '.join(map(repr, header))}. Received: {received}",
        )
