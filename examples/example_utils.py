"""Command-line pieces shared by the example training scripts.

Every script takes the same core flags (`add_common_arguments`), sets up
precision and the distribution strategy from them (`configure_precision`,
`make_strategy`), and trains with the same callbacks (`training_callbacks`):
per-epoch `.keras` checkpoints, a backup that lets an interrupted run resume
from its last finished epoch, and TensorBoard logs.

Example:

>>> import argparse
>>> parser = argparse.ArgumentParser()
>>> parser = add_common_arguments(parser, epochs=3, batch_size=16, output_dir="runs/demo")
>>> args = parser.parse_args(["--strategy", "mirrored"])
>>> args.dataset, args.epochs, args.strategy, args.mixed_precision
('builtin', 3, 'mirrored', False)
"""

import argparse
import importlib.util
import json
import os
import sys
import warnings

# keras and TensorFlow are imported inside the functions that use them, so
# that building the parser (and `--help`) stays instant.

STRATEGIES = ("default", "mirrored")


def add_common_arguments(
    parser, *, epochs, batch_size, output_dir, dataset="builtin", dataset_formats=None
):
    """Adds the flags every example script shares to an `argparse` parser.

    Flags: `--dataset`, `--epochs`, `--batch-size`, `--output-dir`,
    `--export DIR` (write a SavedModel there), `--strategy
    {default,mirrored}` and `--mixed-precision`.

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
    parser.add_argument(
        "--strict",
        action="store_true",
        help="stop with an error naming a corrupt or unreadable file or line of the data, "
        "instead of skipping it with a warning naming it",
    )
    parser.add_argument("--epochs", type=positive_int, default=epochs, help="training epochs")
    parser.add_argument(
        "--batch-size", type=positive_int, default=batch_size, help="global batch size"
    )
    parser.add_argument(
        "--output-dir",
        default=output_dir,
        help="folder for checkpoints, TensorBoard logs, the backup and figures",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="empty an --output-dir that holds a run with other arguments (without it such "
        "a folder is refused; one holding this same run is resumed)",
    )
    parser.add_argument(
        "--export",
        metavar="DIR",
        help="write a TensorFlow SavedModel to DIR (checked for writing before training; "
        "replaces what DIR held once complete)",
    )
    parser.add_argument(
        "--strategy",
        choices=STRATEGIES,
        default="default",
        help="'mirrored' trains on every local GPU (or the CPU) with tf.distribute",
    )
    parser.add_argument(
        "--mixed-precision",
        action="store_true",
        help="float32 weights, 16-bit compute (float16 on GPU, bfloat16 on CPU)",
    )
    return parser


def positive_int(text):
    """`argparse` type: an integer > 0, else a message naming the value.

    Example:

    >>> positive_int("3")
    3
    >>> positive_int("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a positive integer; received 0
    """
    return _number(text, int, lambda value: value > 0, "a positive integer")


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


def _number(text, kind, valid, expected):
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {expected}; received {text!r}") from None
    if not valid(value):
        raise argparse.ArgumentTypeError(f"must be {expected}; received {text}")
    return value


# Arguments that change where results go, not what the run computes.
_NOT_PART_OF_THE_RUN = ("export", "overwrite", "output_dir", "recipe")


def prepare_output(args):
    """Checks and claims the run's output paths before anything is trained.

    `--output-dir` (and `--export`) get `~` and environment variables
    expanded and are checked for writing; a folder that holds this same run
    (same arguments) is resumed from its backup, one that holds another run
    is refused unless `--overwrite` (see `prepare_run_folder`).

    Args:
        args: the parsed `argparse.Namespace`; its paths are expanded in place.

    Returns:
        "new", "resume" or "overwrite".

    Raises:
        SystemExit: with the reason, when a path cannot be used.
    """
    from keras_attention.training.run_folder import RunFolderError
    from keras_attention.training.run_folder import check_export_path
    from keras_attention.training.run_folder import prepare_run_folder

    args.output_dir = expand_path(args.output_dir)
    if args.export:
        args.export = expand_path(args.export)
    try:
        if args.export:
            check_export_path(args.export)
        state = prepare_run_folder(
            args.output_dir, vars(args), overwrite=args.overwrite, ignored=_NOT_PART_OF_THE_RUN
        )
    except RunFolderError as error:
        raise SystemExit(f"error: {error}") from None
    if state == "resume":
        print(f"{args.output_dir} holds this run: resuming from its last backup, if any")
    return state


def expand_path(path):
    """`path` with `~` and `$VARIABLES` expanded.

    Example:

    >>> import os
    >>> expand_path("~/runs") == os.path.join(os.path.expanduser("~"), "runs")
    True
    """
    return os.path.expanduser(os.path.expandvars(path))


def export_folder(path, write):
    """Runs `write(folder)` into a staging folder that then replaces `path` whole."""
    from keras_attention.training.run_folder import replace_folder

    replace_folder(path, write)


def configure_precision(mixed_precision):
    """Sets Keras' global dtype policy for the flag `--mixed-precision`.

    Call it before building the model. Mixed precision keeps float32
    weights and computes in float16 on a GPU (Keras adds loss scaling when
    compiling) or bfloat16 on a CPU.

    Args:
        mixed_precision: bool.

    Returns:
        the policy name set: "float32", "mixed_float16" or "mixed_bfloat16".

    Example:

    >>> configure_precision(False)
    'float32'
    """
    import keras
    import tensorflow as tf

    if not mixed_precision:
        policy = "float32"
    elif tf.config.list_logical_devices("GPU"):
        policy = "mixed_float16"
    else:
        policy = "mixed_bfloat16"
    keras.config.set_dtype_policy(policy)
    return policy


def make_strategy(name):
    """The `tf.distribute` strategy for the flag `--strategy`.

    Args:
        name: "default" (the current strategy: one device) or "mirrored"
            (`tf.distribute.MirroredStrategy` over every local GPU, or the
            CPU when there is none).

    Returns:
        a `tf.distribute.Strategy`; build and compile the model inside its
        `scope()`, and give `fit` the global batch size.

    Example:

    >>> make_strategy("default").num_replicas_in_sync
    1
    """
    import tensorflow as tf

    if name not in STRATEGIES:
        raise ValueError(f"`strategy` must be one of {STRATEGIES}. Received: strategy={name!r}")
    if name == "mirrored":
        if not tf.config.list_logical_devices("GPU"):
            # CPU replicas sum their gradients through one device: collective
            # ops gain nothing there, and a second collective strategy in the
            # same process fails with "Shape mismatch in the collective instance".
            return tf.distribute.MirroredStrategy(
                cross_device_ops=tf.distribute.ReductionToOneDevice()
            )
        return tf.distribute.MirroredStrategy()
    return tf.distribute.get_strategy()


def jit_compile_for(strategy):
    """Whether `compile(jit_compile=...)` can use XLA under `strategy`.

    XLA cannot run a `MirroredStrategy` whose replicas are several CPU
    devices (logical CPUs): a replica's variables live on another device
    than the one its compiled step runs on. Over GPUs, or on one device,
    XLA works.

    Args:
        strategy: a `tf.distribute.Strategy`.

    Returns:
        bool: False only for several replicas on CPU devices.

    Example:

    >>> jit_compile_for(make_strategy("default"))
    True
    """
    if strategy.num_replicas_in_sync <= 1:
        return True
    return not any("CPU" in device.upper() for device in strategy.extended.worker_devices)


def training_callbacks(output_dir):
    """The callbacks every example trains with.

    - `AtomicModelCheckpoint` writes the model to
      `output_dir/checkpoints/epoch_NNN.keras` after every epoch, through a
      temporary file renamed into place;
    - `SafeBackupAndRestore` keeps the training state (weights, optimizer,
      epoch) in `output_dir/backup`: running the same command again after
      an interruption resumes from the last finished epoch, and the backup is
      removed once training ends. Each backup is written whole before the
      previous one is deleted; one that cannot be read is skipped with a
      warning;
    - `TensorBoard` writes logs to `output_dir/logs`
      (`tensorboard --logdir output_dir/logs`) when the `tensorboard`
      package is installed (`pip install tensorboard`; TensorFlow no longer
      installs it); without it a message says so and no logs are written.

    The progress bar comes from `fit(verbose=1)`.

    Args:
        output_dir: the run's folder (created if missing).

    Returns:
        list of `keras.callbacks.Callback`.

    Example:

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     callbacks = training_callbacks(folder)
    >>> [type(callback).__name__ for callback in callbacks][:2]
    ['AtomicModelCheckpoint', 'SafeBackupAndRestore']
    """
    import keras

    from keras_attention.callbacks.atomic_checkpoint import AtomicModelCheckpoint
    from keras_attention.callbacks.safe_backup import SafeBackupAndRestore

    os.makedirs(os.path.join(output_dir, "checkpoints"), exist_ok=True)
    callbacks = [
        AtomicModelCheckpoint(os.path.join(output_dir, "checkpoints", "epoch_{epoch:03d}.keras")),
        SafeBackupAndRestore(os.path.join(output_dir, "backup")),
    ]
    if tensorboard_available():
        callbacks.append(keras.callbacks.TensorBoard(os.path.join(output_dir, "logs")))
    else:
        warnings.warn("TensorBoard logs are off: `pip install tensorboard` to write them.")
    return callbacks


def tensorboard_available():
    """Whether the `tensorboard` package, which writes TensorBoard logs, is installed.

    Returns:
        bool.

    Example:

    >>> isinstance(tensorboard_available(), bool)
    True
    """
    return importlib.util.find_spec("tensorboard") is not None


def write_metrics(output_dir, metrics):
    """Writes a run's final numbers to `output_dir/metrics.json`.

    Args:
        output_dir: the run's folder (created if missing).
        metrics: dict of JSON-serialisable values.

    Returns:
        the path written.

    Example:

    >>> import json, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = write_metrics(folder, {"accuracy": 0.5})
    ...     print(json.load(open(path)))
    {'accuracy': 0.5}
    """
    os.makedirs(output_dir, exist_ok=True)
    path = os.path.join(output_dir, "metrics.json")
    with open(path, "w") as file:
        json.dump(metrics, file, indent=2)
    return path


def progress_verbosity():
    """`fit`'s `verbose`: a progress bar on a terminal, one line per epoch in a log file.

    Progress bars redraw themselves with control characters, which fill a log
    file written by `python train.py > run.log` with thousands of partial lines.

    Returns:
        1 when standard output is a terminal, else 2.

    Example:

    >>> progress_verbosity() in (1, 2)
    True
    """
    return 1 if sys.stdout.isatty() else 2
