"""Setting up and finishing a training run the way every training script does.

Precision and distribution from the flags (`configure_precision`,
`make_strategy`, `jit_compile_for`), the run folder checked, locked and
claimed before training (`prepare_output`), the callbacks every run trains
with (`training_callbacks`: per-epoch `.keras` checkpoints, a backup that lets
an interrupted run resume at the step it was taken, TensorBoard logs), the
optimizer steps a claimed run has trained already (`trained_steps`), and
the results written after it (`finish_run`: metrics, the export, and only then
the backup's removal). Keras and TensorFlow are imported inside the functions
that need them.
"""

import importlib.util
import json
import os
import shutil
import time
import warnings

from keras_attention.backend_support import require_tensorflow_backend
from keras_attention.durable_files import make_folder
from keras_attention.durable_files import write_file_atomically
from keras_attention.progress import shows_bars
from keras_attention.training.cluster_config import read_worker_role
from keras_attention.training.command_line import DEFAULT_BACKUP_EVERY
from keras_attention.training.command_line import STRATEGIES
from keras_attention.training.command_line import backup_frequency
from keras_attention.training.command_line import expand_path
from keras_attention.training.export_replacement import recover_export_leftovers
from keras_attention.training.export_replacement import replace_folder
from keras_attention.training.run_folder import REMOVED_BACKUP_PREFIX
from keras_attention.training.run_folder import RunFolderError
from keras_attention.training.run_folder import changed_arguments
from keras_attention.training.run_folder import check_export_path
from keras_attention.training.run_folder import prepare_run_folder
from keras_attention.training.run_folder import remove_run_leftovers
from keras_attention.training.run_folder import run_folder_entries
from keras_attention.training.run_folder import run_folder_state
from keras_attention.training.run_folder import trained_epochs
from keras_attention.training.run_lock import hold_run_lock
from keras_attention.training.run_lock import holds_run_lock
from keras_attention.training.run_lock import release_run_lock
from keras_attention.training.trained_steps import trained_steps as _trained_steps
from keras_attention.training.worker_folders import redirect_outputs
from keras_attention.training.worker_folders import shared_output_dir

# Arguments that change where results go, not what the run computes.
# Flags that change what is written or evaluated after training, not the training:
# a run resumes whatever they are now.
_NOT_PART_OF_THE_RUN = (
    "backup_every",
    "beam_width",
    "eval_images",
    "eval_sentences",
    "export",
    "html",
    "overwrite",
    "output_dir",
    "plots",
    "quiet",
    "recipe",
    "samples",
)
BACKUP_FOLDER = "backup"
CHECKPOINT_FOLDER = "checkpoints"


def prepare_output(args):
    """Checks, locks and claims the run's output paths before anything is trained.

    `--output-dir` (and `--export`) get `~` and environment variables
    expanded and are checked for writing. `--export` must be absent, empty
    or an earlier export of this library, and must not be `--output-dir`
    nor hold it (`check_export_path`). A folder that holds this same run
    (same arguments) is resumed from its backup (or, without one, from its
    newest checkpoint), one that differs only in `--epochs` trains on to
    the new count, one whose run never trained (it stopped before its first
    step, e.g. on a typo in `--dataset`) is started anew with these
    arguments, saying so in one line, one that holds another run is refused
    unless `--overwrite`, and one that is not a run is refused
    (`prepare_run_folder`). The folder is then locked for the whole run
    (`run_lock`): a second run on it stops here, naming the first. Under the
    lock, what killed writes left is removed (`remove_run_leftovers`,
    `recover_export_leftovers`), and a line says where training starts.

    Under `--strategy multiworker` only the chief (see `read_worker_role`)
    claims, locks and writes these paths; another worker's `args.output_dir`
    and `args.export` are moved into a temporary folder deleted at exit
    (`redirect_outputs`), and it resumes from the chief's backup.

    Args:
        args: the parsed `argparse.Namespace`; its paths are expanded in place.

    Returns:
        "new", "resume", "continue" (more `--epochs`), "restart" (a run that
        never trained, replaced) or "overwrite"; "worker" for a non-chief worker.

    Raises:
        SystemExit: with the reason, when a path cannot be used or another
            run holds the folder.
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
    arguments = dict(overwrite=args.overwrite, ignored=_NOT_PART_OF_THE_RUN)
    locked_here = not holds_run_lock(args.output_dir)
    try:
        if args.export:
            check_export_path(args.export, args.output_dir)
        run_folder_state(args.output_dir, vars(args), **arguments)  # refuse before locking
        hold_run_lock(args.output_dir)
        changes = changed_arguments(args.output_dir, vars(args), _NOT_PART_OF_THE_RUN)
        held = run_folder_entries(args.output_dir)
        state = prepare_run_folder(args.output_dir, vars(args), **arguments)
    except RunFolderError as error:
        if locked_here:
            release_run_lock(args.output_dir)
        raise SystemExit(f"error: {error}") from None
    _clean_leftovers(args.output_dir, args.export)
    if state == "overwrite":  # what --overwrite removed, named: it may hold a file of the user
        shown = ", ".join(held[:5]) + (f" and {len(held) - 5} more" if len(held) > 5 else "")
        print(f"{args.output_dir}: --overwrite removed the earlier run ({changes}): {shown}")
    print(_starting_point(args.output_dir, state, getattr(args, "epochs", None), changes))
    return state


def _clean_leftovers(output_dir, export):
    removed = remove_run_leftovers(output_dir)
    if export:
        inside = os.path.commonpath([os.path.realpath(export), os.path.realpath(output_dir)])
        locked = inside == os.path.realpath(output_dir)  # no other run writes there
        export_removed, restored = recover_export_leftovers(export, any_writer=locked)
        removed += export_removed
        if restored:
            print(f"{restored}: put back the previous export, which a killed export had moved")
    for path in removed:
        print(f"removed {path}, left by an interrupted write")


def _starting_point(output_dir, state, epochs, changes=None):
    """The line that says where training starts, as the backup or checkpoints on disk tell.

    `changes`: how the arguments differ from those the folder recorded.
    """
    from keras_attention.callbacks.safe_backup import backup_status

    if state == "restart":
        return (
            f"{output_dir} held a run that never trained (no checkpoint, backup or metrics), "
            f"with other arguments ({changes}): a new run with these, training starts at epoch 1"
        )
    if state not in ("resume", "continue"):
        return f"{output_dir}: a new run, training starts at epoch 1"
    if state == "resume":
        same = f"{output_dir} holds this run (same arguments)"
    else:
        same = f"{output_dir} holds this run, now asked for epochs={epochs!r}"
    status = backup_status(os.path.join(output_dir, BACKUP_FOLDER))
    epoch = status.epoch
    if epoch is not None:
        if status.finished and state == "resume":
            return (
                f"{same}, trained to its end (epoch {epoch}): resuming from that backup, "
                "no epoch is trained again"
            )
        if status.step:
            of = f" (of {status.steps_per_epoch} steps)" if status.steps_per_epoch else ""
            return (
                f"{same}: resuming from its backup at step {status.step} of epoch {epoch + 1}{of}"
            )
        return f"{same}: resuming from its backup after epoch {epoch}, at epoch {epoch + 1}"
    epoch = trained_epochs(output_dir)
    if not epoch:
        return f"{same}, with no training backup nor checkpoint: training starts at epoch 1"
    source = os.path.join(CHECKPOINT_FOLDER, f"epoch_{epoch:03d}.keras")
    if isinstance(epochs, int) and epoch >= epochs:
        return f"{same}, trained to epoch {epoch}: restoring {source}, no epoch is trained again"
    return f"{same}: restoring {source} (no backup), training on at epoch {epoch + 1}"


def trained_steps(output_dir):
    """The optimizer steps the run in `output_dir` trained before this start: 0 for a new run.

    Read from the newest backup's metadata, or without a backup from the
    newest checkpoint (see `trained_steps.trained_steps`); a non-chief
    worker reads the chief's, in the shared folder.

    Example:

    >>> import tempfile
    >>> from keras_attention.training.run_setup import trained_steps
    >>> trained_steps(tempfile.mkdtemp())
    0
    """
    return _trained_steps(shared_output_dir(output_dir) or output_dir)


def export_folder(path, write, source=None):
    """Runs `write(folder)` into a staging folder that then replaces `path` whole.

    See `export_replacement.replace_folder`: `path` must be absent, empty or
    an earlier export of this library (of the same `source`, the run folder
    or checkpoint it is written from, when given), and holds a whole export
    at every moment.
    """
    replace_folder(path, write, source=source)


def finish_run(args, metrics, write_export=None):
    """Writes the run's last results, then removes its backup and releases its folder.

    In this order: `metrics.json`; the SavedModel with `write_export(folder)`
    when `args.export` is set; then the training backup is removed and the
    lock released. Until the last result is written the backup stays, so a
    run that fails here (a full disk, a kill) resumes, with the same
    command, from the trained model instead of training again.

    Args:
        args: the parsed arguments (`output_dir`, `export`).
        metrics: dict of JSON-serialisable numbers for `metrics.json`.
        write_export: a function that writes the export into the folder it
            gets; needed when `args.export` is set.
    """
    write_metrics(args.output_dir, metrics)
    if args.export:
        if write_export is None:
            raise ValueError(
                "`write_export` must write the SavedModel when --export is given. "
                f"Received: write_export=None, --export={args.export!r}"
            )
        print(f"writing the SavedModel to {args.export} ...", flush=True)
        start = time.time()
        export_folder(args.export, write_export, source=args.output_dir)
        print(f"SavedModel written to {args.export} in {time.time() - start:.0f} s")
    if shared_output_dir(args.output_dir) is None:  # the chief's, or a one-process run's
        remove_backup(args.output_dir)
    release_run_lock(args.output_dir)


def remove_backup(output_dir):
    """Removes `output_dir/backup`: renamed aside first, so it is never left half deleted."""
    backup = os.path.join(output_dir, BACKUP_FOLDER)
    if not os.path.isdir(backup):
        return
    aside = make_folder(output_dir, REMOVED_BACKUP_PREFIX)
    os.rename(backup, os.path.join(aside, BACKUP_FOLDER))
    shutil.rmtree(aside)


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


def input_shard(strategy_name):
    """`(num_workers, index)` of the training files this process reads, for `--strategy`.

    One machine (`default`, `mirrored`, `tpu`) reads every file: `(1, 0)`;
    a worker of `multiworker` reads its own share (`cluster_config.worker_shard`).

    Example:

    >>> from keras_attention.training.run_setup import input_shard
    >>> input_shard("mirrored")
    (1, 0)
    """
    if strategy_name != "multiworker":
        return (1, 0)
    from keras_attention.training.cluster_config import worker_shard

    return worker_shard()


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


def training_callbacks(output_dir, backup_every=None):
    """The callbacks every example trains with.

    - `AtomicModelCheckpoint` writes the model to
      `output_dir/checkpoints/epoch_NNN.keras` after every epoch, through a
      temporary file renamed into place;
    - `SafeBackupAndRestore` keeps the training state (weights, optimizer,
      epoch and step) in `output_dir/backup`, written at the end of every
      epoch and every `backup_every` steps or minutes: running the same
      command again after an interruption resumes at the backed-up step
      (through `resumable_fit.fit_resuming`; a plain `fit` restarts a
      partly trained epoch), or after the
      end of training goes straight to evaluation and export; without a
      backup (the run had finished) the newest checkpoint is restored, so a
      run asked for more epochs trains on from there. The backup is
      kept when training ends and removed by `finish_run` once the run's
      results are written. Each backup is written whole before the previous
      one is deleted; one that cannot be read is skipped with a warning;
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
        backup_every: a `command_line.BackupFrequency` (`--backup-every`);
            None: every 30 minutes of training.

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

    checkpoints = os.path.join(output_dir, CHECKPOINT_FOLDER)
    os.makedirs(checkpoints, exist_ok=True)
    shared = shared_output_dir(output_dir)
    if shared is None:
        backup = SafeBackupAndRestore(
            os.path.join(output_dir, BACKUP_FOLDER), delete_at_end=False, checkpoint_dir=checkpoints
        )
    else:
        backup = RestoreOnlyBackup(
            os.path.join(shared, BACKUP_FOLDER), os.path.join(shared, CHECKPOINT_FOLDER)
        )
    callbacks = [
        AtomicModelCheckpoint(os.path.join(checkpoints, "epoch_{epoch:03d}.keras")),
        backup,
    ]
    set_backup_frequency(callbacks, backup_every)
    if tensorboard_available():
        callbacks.append(keras.callbacks.TensorBoard(os.path.join(output_dir, "logs")))
    else:
        warnings.warn(
            "TensorBoard logs are off: `pip install tensorboard` to write them.", stacklevel=2
        )
    return callbacks


def set_backup_frequency(callbacks, backup_every):
    """Sets how often the backups among `callbacks` are written besides at epoch ends.

    Args:
        callbacks: a list of callbacks, as `training_callbacks` returns.
        backup_every: a `command_line.BackupFrequency` (`--backup-every`);
            None: every 30 minutes of training.

    Example:

    >>> import tempfile
    >>> from keras_attention.training.command_line import backup_frequency
    >>> from keras_attention.training.run_setup import set_backup_frequency
    >>> from keras_attention.training.run_setup import training_callbacks
    >>> callbacks = training_callbacks(tempfile.mkdtemp())
    >>> set_backup_frequency(callbacks, backup_frequency("500"))
    >>> callbacks[1].every_steps, callbacks[1].every_seconds
    (500, None)
    """
    from keras_attention.callbacks.safe_backup import SafeBackupAndRestore

    if backup_every is None:
        backup_every = backup_frequency(DEFAULT_BACKUP_EVERY)
    for callback in callbacks:
        if isinstance(callback, SafeBackupAndRestore):
            callback.set_frequency(backup_every.steps, backup_every.seconds)


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
    write_file_atomically(path, json.dumps(metrics, indent=2))  # whole or the previous one
    return path


def progress_verbosity():
    """`fit`'s `verbose`: a progress bar on a terminal, one line per epoch in a log file.

    Progress bars redraw themselves with control characters, which fill a log
    file written by `python train.py > run.log` with thousands of partial lines.
    `--quiet` asks for the lines on a terminal too (`progress.set_quiet`).

    Returns:
        1 when standard output is a terminal and not quiet, else 2.

    Example:

    >>> from keras_attention.training.run_setup import progress_verbosity
    >>> progress_verbosity() in (1, 2)
    True
    """
    return 1 if shows_bars() else 2
