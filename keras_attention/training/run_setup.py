"""Setting up and finishing a training run the way every training script does.

Precision and distribution from the flags (`configure_precision`,
`make_strategy`, `jit_compile_for`), the run folder claimed before training
(`prepare_output`), the callbacks every run trains with
(`training_callbacks`: per-epoch `.keras` checkpoints, a backup that lets an
interrupted run resume from its last finished epoch, TensorBoard logs), and
the results written after it (`write_metrics`, `export_folder`). Keras and
TensorFlow are imported inside the functions that need them.
"""

import importlib.util
import json
import os
import sys
import warnings

from keras_attention.backend_support import require_tensorflow_backend
from keras_attention.training.cluster_config import read_worker_role
from keras_attention.training.command_line import STRATEGIES
from keras_attention.training.command_line import expand_path
from keras_attention.training.run_folder import RunFolderError
from keras_attention.training.run_folder import check_export_path
from keras_attention.training.run_folder import prepare_run_folder
from keras_attention.training.run_folder import replace_folder
from keras_attention.training.worker_folders import redirect_outputs
from keras_attention.training.worker_folders import shared_output_dir

# Arguments that change where results go, not what the run computes.
_NOT_PART_OF_THE_RUN = ("export", "html", "overwrite", "output_dir", "recipe")


def prepare_output(args):
    """Checks and claims the run's output paths before anything is trained.

    `--output-dir` (and `--export`) get `~` and environment variables
    expanded and are checked for writing; a folder that holds this same run
    (same arguments) is resumed from its backup, one that holds another run
    is refused unless `--overwrite` (see `prepare_run_folder`).

    Under `--strategy multiworker` only the chief (see `read_worker_role`)
    claims and writes these paths; another worker's `args.output_dir` and
    `args.export` are moved into a temporary folder deleted at exit
    (`redirect_outputs`), and it resumes from the chief's backup.

    Args:
        args: the parsed `argparse.Namespace`; its paths are expanded in place.

    Returns:
        "new", "resume" or "overwrite"; "worker" for a non-chief worker.

    Raises:
        SystemExit: with the reason, when a path cannot be used.
        ValueError: `--strategy multiworker` without a usable `TF_CONFIG`.
    """
    require_tensorflow_backend("This example training script")
    args.output_dir = expand_path(args.output_dir)
    if args.export:
        args.export = expand_path(args.export)
    if getattr(args, "strategy", None) == "multiworker":
        role = read_worker_role()
        if redirect_outputs(args, role):
            print(
                f"{role.task_type} {role.task_index} of {role.num_workers} (not the chief): "
                f"writing to {args.output_dir}, deleted at exit"
            )
            return "worker"
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


def export_folder(path, write):
    """Runs `write(folder)` into a staging folder that then replaces `path` whole."""
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

    >>> from keras_attention.training.run_setup import configure_precision
    >>> configure_precision(False)
    'float32'
    """
    import keras
    import tensorflow as tf

    if not mixed_precision:
        policy = "float32"
    # Physical devices: listing logical ones starts TensorFlow, after which
    # a multi-worker strategy can no longer be created.
    elif tf.config.list_physical_devices("GPU"):
        policy = "mixed_float16"
    else:
        policy = "mixed_bfloat16"
    keras.config.set_dtype_policy(policy)
    return policy


def make_strategy(name):
    """The `tf.distribute` strategy for the flag `--strategy`.

    Args:
        name: "default" (the current strategy: one device), "mirrored"
            (`tf.distribute.MirroredStrategy` over every local GPU, or the
            CPU when there is none), "multiworker" (every worker that
            `TF_CONFIG` names, see `make_multi_worker_strategy`) or "tpu"
            (a Cloud TPU, see `make_tpu_strategy`).

    Returns:
        a `tf.distribute.Strategy`; build and compile the model inside its
        `scope()`, and give `fit` the global batch size.

    Raises:
        ValueError: an unknown name, or "multiworker" without a usable `TF_CONFIG`.

    Example:

    >>> from keras_attention.training.run_setup import make_strategy
    >>> make_strategy("default").num_replicas_in_sync
    1
    """
    import tensorflow as tf

    if name not in STRATEGIES:
        raise ValueError(f"`strategy` must be one of {STRATEGIES}. Received: strategy={name!r}")
    if name in ("multiworker", "tpu"):
        from keras_attention.training import cluster_strategies

        if name == "tpu":
            return cluster_strategies.make_tpu_strategy()
        return cluster_strategies.make_multi_worker_strategy()
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

    >>> from keras_attention.training.run_setup import jit_compile_for
    >>> from keras_attention.training.run_setup import make_strategy
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

    For a non-chief worker of a multi-worker run (`output_dir` is its
    temporary folder, see `prepare_output`) the backup is the chief's, in
    the shared folder: restored from, never written (`RestoreOnlyBackup`).

    Args:
        output_dir: the run's folder (created if missing).

    Returns:
        list of `keras.callbacks.Callback`.

    Example:

    >>> from keras_attention.training.run_setup import training_callbacks
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     callbacks = training_callbacks(folder)
    >>> [type(callback).__name__ for callback in callbacks][:2]
    ['AtomicModelCheckpoint', 'SafeBackupAndRestore']
    """
    import keras

    from keras_attention.callbacks.atomic_checkpoint import AtomicModelCheckpoint
    from keras_attention.callbacks.safe_backup import SafeBackupAndRestore
    from keras_attention.training.restore_only_backup import RestoreOnlyBackup

    os.makedirs(os.path.join(output_dir, "checkpoints"), exist_ok=True)
    shared = shared_output_dir(output_dir)
    if shared is None:
        backup = SafeBackupAndRestore(os.path.join(output_dir, "backup"))
    else:
        backup = RestoreOnlyBackup(os.path.join(shared, "backup"))
    callbacks = [
        AtomicModelCheckpoint(os.path.join(output_dir, "checkpoints", "epoch_{epoch:03d}.keras")),
        backup,
    ]
    if tensorboard_available():
        callbacks.append(keras.callbacks.TensorBoard(os.path.join(output_dir, "logs")))
    else:
        warnings.warn(
            "TensorBoard logs are off: `pip install tensorboard` to write them.", stacklevel=2
        )
    return callbacks


def tensorboard_available():
    """Whether the `tensorboard` package, which writes TensorBoard logs, is installed.

    Returns:
        bool.

    Example:

    >>> from keras_attention.training.run_setup import tensorboard_available
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

    >>> from keras_attention.training.run_setup import write_metrics
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

    >>> from keras_attention.training.run_setup import progress_verbosity
    >>> progress_verbosity() in (1, 2)
    True
    """
    return 1 if sys.stdout.isatty() else 2
