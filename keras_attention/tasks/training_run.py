"""What every training script does around its own model: start the run, fit it watched, finish it.

`TrainingRun(args)` claims the run's folders before anything is trained
(refusing unusable paths, resuming the same run, `resume_step` saying from
which optimizer step), seeds Keras, sets the precision and the distribution
strategy of the flags; `fit` trains in epochs of `steps_per_epoch` steps
over the training data streamed round and round, with the callbacks every
run has (checkpoints, the backup that resumes at the step it was taken,
TensorBoard logs), a `LearningMonitor` that says when training is not
learning and a line when the first step is done; `metrics` adds what every
`metrics.json` records; `finish` writes the metrics, the export, and only
then removes the training backup.

The family's own steps (data, model, evaluation, figures) stay in the
script, with `keras_attention.tasks.<family>`.
"""

import contextlib
import json
import os
import sys
import time

from keras_attention.callbacks.first_step_line import FirstStepLine
from keras_attention.callbacks.learning_monitor import LearningMonitor
from keras_attention.callbacks.safe_backup import SafeBackupAndRestore
from keras_attention.callbacks.safe_backup import TrainingStateNotRestored
from keras_attention.callbacks.skipped_items_report import SkippedItemsReport
from keras_attention.data.dataset_length import known_length
from keras_attention.data.skipped_items import strict_errors_as_exit
from keras_attention.progress import set_quiet
from keras_attention.training import run_setup
from keras_attention.training.resumable_fit import fit_resuming
from keras_attention.validation import check_positive_int


class TrainingRun:
    """One run of a training script: its folder, precision, strategy, fit and results.

    Args:
        args: the parsed flags, with `output_dir`, `export`, `overwrite`,
            `seed`, `mixed_precision` and `strategy`, and optionally
            `steps_per_epoch` (`--steps-per-epoch`, None: one pass over the
            training data) and `backup_every` (`--backup-every`, default
            every 30 minutes).

    Attributes:
        resume_step: the optimizer steps the run has trained already, as
            its backup (or, without one, its newest checkpoint) records
            them when the folder is claimed: 0 for a new run. Seed the
            training data's shuffle with it (e.g. `seed + resume_step`), so
            that a resumed run does not draw the same first batches again.
        input_shard: `(num_workers, index)` of the training files this
            process reads: `(1, 0)` on one machine, its own share for a
            worker of `--strategy multiworker` (give it to the data code).
        policy: the Keras dtype policy set ("float32", "mixed_float16", ...).
        strategy: the `tf.distribute` strategy; build and compile the model
            in `strategy.scope()`.
        jit_compile: whether the training step can compile with XLA under it.
        monitor: the `LearningMonitor` of the last `fit`.
        train_seconds: seconds the run has trained, over all its starts: a
            resumed run adds those its backup (or, after its end, its
            `metrics.json`) recorded to those of this `fit`.

    Example:

    >>> import argparse, tempfile
    >>> import numpy as np, keras, tensorflow as tf
    >>> from keras_attention.tasks.training_run import TrainingRun
    >>> args = argparse.Namespace(output_dir=tempfile.mkdtemp(), export=None, overwrite=False,
    ...                           seed=0, mixed_precision=False, strategy="default")
    >>> run = TrainingRun(args)  # doctest: +ELLIPSIS
    /...: a new run, training starts at epoch 1
    >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    >>> model.compile("sgd", "mse")
    >>> data = tf.data.Dataset.from_tensor_slices((np.ones((6, 2)), np.ones(6))).batch(2)
    >>> run.resume_step, run.steps_per_epoch(data), run.steps_per_epoch(3)
    (0, 3, 3)
    >>> seconds = run.fit(model, data, data, 1, 1.0, "", run.steps_per_epoch(3), verbose=0)
    ... # doctest: +ELLIPSIS
    first training step done ... s after the run started
    >>> sorted(run.metrics(loss=0.5))[:3]
    ['dtype_policy', 'loss', 'not_learning_warnings']
    """

    def __init__(self, args):
        self._started = time.monotonic()  # the first-step line counts from here
        self._start = time.time()
        import keras

        set_quiet(getattr(args, "quiet", False))  # progress as lines, not bars
        state = run_setup.prepare_output(args)  # before any training: refuse unusable paths
        self.resume_step = run_setup.trained_steps(args.output_dir)
        keras.utils.set_random_seed(args.seed)
        self.args = args
        self.policy = run_setup.configure_precision(args.mixed_precision)
        self.strategy = run_setup.make_strategy(args.strategy)
        self.input_shard = run_setup.input_shard(args.strategy)
        self.jit_compile = run_setup.jit_compile_for(self.strategy)
        self.monitor = None
        # What the run recorded when it last ended: a rerun keeps its training seconds.
        self._earlier = _recorded_metrics(args.output_dir, state)
        self.train_seconds = self._earlier.get("train_seconds", 0.0)
        self._first_step = FirstStepLine(self._started)

    def steps_per_epoch(self, batches_per_pass):
        """Optimizer steps in an epoch: `--steps-per-epoch` if given, else `batches_per_pass`.

        Args:
            batches_per_pass: the batches of one pass over the training
                data, as an int (computed from the item count: the data are
                never counted) or a batched `tf.data.Dataset` whose length
                TensorFlow knows (`cardinality()`).

        Returns:
            int.

        Raises:
            ValueError: a dataset of unknown or infinite length, or no
                positive count.
        """
        flag = getattr(self.args, "steps_per_epoch", None)
        if flag is not None:
            return flag
        if hasattr(batches_per_pass, "cardinality"):
            count = known_length(batches_per_pass)
            if count is None:
                raise ValueError(
                    "`batches_per_pass` must be a count of batches or a dataset of known "
                    "length: counting a data set is a whole pass over it. Pass the count, "
                    "e.g. items // batch_size, or set --steps-per-epoch. Received: a "
                    "dataset of unknown or infinite length"
                )
            batches_per_pass = count
        check_positive_int("batches_per_pass", batches_per_pass)
        return batches_per_pass

    def fit(
        self,
        model,
        train,
        validation,
        epochs,
        baseline,
        hints,
        steps_per_epoch=None,
        patience=3,
        skipped=(),
        **fit_options,
    ):
        """Trains `model` with the run's callbacks and a `LearningMonitor`; returns its seconds.

        An epoch is `steps_per_epoch` optimizer steps over `train` streamed
        round and round (`fit_resuming`): a run killed and started again
        resumes at the step of its last backup, written at the end of every
        epoch and every `--backup-every` steps or minutes. After the first
        step one line says how long after the start of the run it came.

        Args:
            model: a compiled model.
            train: a finite, batched `tf.data.Dataset`, shuffled (reshuffled
                at each pass); its length is never counted.
            validation: a batched `tf.data.Dataset` run to its end after
                every epoch, or None.
            epochs: the epochs to train (a resumed run starts at its backup).
            baseline: the loss of a model that ignores its input, which a
                learning model leaves behind (see `LearningMonitor`).
            hints: what to try when it does not, for the monitor's warning.
            steps_per_epoch: `self.steps_per_epoch(...)`'s result, or what it
                is given: `--steps-per-epoch` always wins. None:
                `self.steps_per_epoch(train)`, for a dataset of known length.
            patience: epochs the monitor waits (at most `epochs`).
            skipped: the `SkippedItems` of the data's pipelines (undecodable
                images, malformed lines, pairs too long): one line per kind
                and epoch says how many were skipped (`SkippedItemsReport`);
                under `--strict` the first stops the run with one line.
            **fit_options: more `fit` arguments, e.g. `callbacks` to run
                before the run's own, or `verbose`.
        """
        steps = self.steps_per_epoch(train if steps_per_epoch is None else steps_per_epoch)
        self.monitor = LearningMonitor(baseline, patience=min(patience, epochs), hints=hints)
        training = run_setup.training_callbacks(self.args.output_dir)  # as wrappers call it
        run_setup.set_backup_frequency(training, getattr(self.args, "backup_every", None))
        backup = next(c for c in training if isinstance(c, SafeBackupAndRestore))
        backup.train_seconds_before = self.train_seconds  # unless the backup it restores says
        callbacks = [
            self._first_step,  # before the progress bar draws
            *fit_options.pop("callbacks", ()),
            *training,
            self.monitor,
            SkippedItemsReport(skipped),
        ]
        fit_options.setdefault("verbose", run_setup.progress_verbosity())
        with strict_errors_as_exit(), _stops_as_lines(self.args.output_dir):
            fit_resuming(
                model,
                train,
                epochs,
                steps,
                callbacks=callbacks,
                validation_data=validation,  # an unknown length is run to its end
                shuffle=False,  # the datasets shuffle themselves; True only adds a warning
                **fit_options,
            )
        self.train_seconds = backup.train_seconds()
        return self.train_seconds

    def metrics(self, **values):
        """`values` and what every run records: time, precision, replicas, monitor warnings."""
        monitor = self.monitor
        return {
            **values,
            "not_learning_warnings": [
                *self._earlier.get("not_learning_warnings", []),
                *(monitor.warnings if monitor is not None else []),
            ],
            "seconds": round(time.time() - self._start, 1),
            "train_seconds": round(self.train_seconds, 1),
            "dtype_policy": self.policy,
            "replicas": self.strategy.num_replicas_in_sync,
        }

    def finish(self, metrics, write_export):
        """Writes `metrics.json`, then the export with `write_export(folder)` if `--export`.

        Only then is the training backup removed (see `run_setup.finish_run`).

        Returns:
            `metrics`.
        """
        run_setup.finish_run(self.args, metrics, write_export)
        return metrics


def _recorded_metrics(output_dir, state):
    """The `metrics.json` of a run that resumes or trains on (`state`), or {}.

    Only its training seconds and not-learning warnings are read: what a
    rerun does not measure again. A file that does not read is passed over.
    """
    if state not in ("resume", "continue"):
        return {}
    try:
        with open(os.path.join(output_dir, "metrics.json"), encoding="utf-8") as file:
            recorded = json.load(file)
    except (OSError, ValueError):
        return {}
    if not isinstance(recorded, dict):
        return {}
    kept = {}
    seconds = recorded.get("train_seconds")
    if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and seconds >= 0:
        kept["train_seconds"] = float(seconds)
    warned = recorded.get("not_learning_warnings")
    if isinstance(warned, list) and all(isinstance(line, str) for line in warned):
        kept["not_learning_warnings"] = warned
    return kept


@contextlib.contextmanager
def _stops_as_lines(output_dir):
    """Training stopped by Ctrl-C, or by saved state that fits no longer: one line, no traceback.

    Ctrl-C exits with status 130, as a shell's interrupted command does.
    """
    try:
        yield
    except TrainingStateNotRestored as error:
        raise SystemExit(f"error: {error}") from None
    except KeyboardInterrupt:
        print(
            f"\ninterrupted: the same command resumes the run in {output_dir} from its last "
            "backup (written at the end of every epoch and every --backup-every)",
            file=sys.stderr,
        )
        raise SystemExit(130) from None


@contextlib.contextmanager
def script_stops_as_lines():
    """Around a training script's `main()`: how it stops, in one line instead of a traceback.

    `--strict`'s first unusable item (`strict_errors_as_exit`), and Ctrl-C
    wherever it falls (exit status 130; during `TrainingRun.fit` the line
    also says that the same command resumes the run).
    """
    try:
        with strict_errors_as_exit():
            yield
    except KeyboardInterrupt:
        print("\ninterrupted: the same command goes on where the run stopped", file=sys.stderr)
        raise SystemExit(130) from None
