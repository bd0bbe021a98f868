"""What every training script does around its own model: start the run, fit it watched, finish it.

`TrainingRun(args)` claims the run's folders before anything is trained
(refusing unusable paths, resuming the same run), seeds Keras, sets the
precision and the distribution strategy of the flags; `fit` trains with the
callbacks every run has (checkpoints, the backup that resumes, TensorBoard
logs) and a `LearningMonitor` that says when training is not learning;
`metrics` adds what every `metrics.json` records; `finish` writes the
metrics, the export, and only then removes the training backup.

The family's own steps (data, model, evaluation, figures) stay in the
script, with `keras_attention.tasks.<family>`.
"""

import time

from keras_attention.callbacks.learning_monitor import LearningMonitor
from keras_attention.data.dataset_length import dataset_length
from keras_attention.data.dataset_length import with_known_length
from keras_attention.progress import set_quiet
from keras_attention.training import run_setup


class TrainingRun:
    """One run of a training script: its folder, precision, strategy, fit and results.

    Args:
        args: the parsed flags, with `output_dir`, `export`, `overwrite`,
            `seed`, `mixed_precision` and `strategy`.

    Attributes:
        policy: the Keras dtype policy set ("float32", "mixed_float16", ...).
        strategy: the `tf.distribute` strategy; build and compile the model
            in `strategy.scope()`.
        jit_compile: whether the training step can compile with XLA under it.
        monitor: the `LearningMonitor` of the last `fit`.
        train_seconds: seconds spent in the last `fit`.

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
    >>> data = tf.data.Dataset.from_tensor_slices((np.ones((4, 2)), np.ones(4))).batch(2)
    >>> seconds = run.fit(model, data, data, epochs=1, baseline=1.0, hints="", verbose=0)
    >>> sorted(run.metrics(loss=0.5))[:3]
    ['dtype_policy', 'loss', 'not_learning_warnings']
    """

    def __init__(self, args):
        import keras

        set_quiet(getattr(args, "quiet", False))  # progress as lines, not bars
        run_setup.prepare_output(args)  # before any training: refuse unusable paths now
        keras.utils.set_random_seed(args.seed)
        self.args = args
        self.policy = run_setup.configure_precision(args.mixed_precision)
        self.strategy = run_setup.make_strategy(args.strategy)
        self.jit_compile = run_setup.jit_compile_for(self.strategy)
        self.monitor = None
        self.train_seconds = 0.0
        self._start = time.time()

    @staticmethod
    def steps_per_epoch(batches):
        """Optimizer steps of one epoch over `batches` (counted once if unknown)."""
        return dataset_length(batches)

    def fit(self, model, train, validation, epochs, baseline, hints, patience=3, **fit_options):
        """`model.fit` with the run's callbacks and a `LearningMonitor`; returns its seconds.

        Args:
            model: a compiled model.
            train, validation: batched `tf.data.Dataset`s, shuffled already.
            epochs: the epochs to train (a resumed run starts after its backup).
            baseline: the loss of a model that ignores its input, which a
                learning model leaves behind (see `LearningMonitor`).
            hints: what to try when it does not, for the monitor's warning.
            patience: epochs the monitor waits (at most `epochs`).
            **fit_options: more `fit` arguments, e.g. `callbacks` to run
                before the run's own, or `verbose`.
        """
        self.monitor = LearningMonitor(baseline, patience=min(patience, epochs), hints=hints)
        callbacks = [
            *fit_options.pop("callbacks", ()),
            *run_setup.training_callbacks(self.args.output_dir),
            self.monitor,
        ]
        fit_options.setdefault("verbose", run_setup.progress_verbosity())
        start = time.time()
        model.fit(
            with_known_length(train),  # known lengths: no "ran out of data" warning
            validation_data=with_known_length(validation),
            epochs=epochs,
            shuffle=False,  # the datasets shuffle themselves; True only adds a warning
            callbacks=callbacks,
            **fit_options,
        )
        self.train_seconds = time.time() - start
        return self.train_seconds

    def metrics(self, **values):
        """`values` and what every run records: time, precision, replicas, monitor warnings."""
        monitor = self.monitor
        return {
            **values,
            "not_learning_warnings": monitor.warnings if monitor is not None else [],
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
