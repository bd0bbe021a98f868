"""A tiny training run, killed at a chosen step or not, as test_mid_epoch_resume.py starts it.

    python resume_process.py RECORD.json KILL_AT_STEP [COMMON FLAGS...]

Trains through `TrainingRun` with the common flags given (`--epochs`,
`--steps-per-epoch`, `--backup-every`, `--output-dir`, ...): 5 batches a pass,
all alike, an SGD whose learning rate decays linearly with the step count.
With KILL_AT_STEP > 0 the process kills itself (SIGKILL: no clean-up runs)
when the optimizer reaches that step, before the next step. Otherwise it
writes RECORD.json: where training started (`resume_step`, the restored
optimizer step and learning rate), the steps of every epoch, the final step
count and learning rate, and the weights.
"""

import argparse
import json
import os
import signal
import sys

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from keras_attention.tasks.training_run import TrainingRun  # noqa: E402
from keras_attention.training.command_line import add_common_arguments  # noqa: E402

BATCHES_PER_PASS = 5
DECAY_STEPS = 100


def tiny_model():
    """A Dense layer trained by SGD from 0.1 down to 0 over `DECAY_STEPS` steps."""
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    schedule = keras.optimizers.schedules.PolynomialDecay(0.1, DECAY_STEPS, 0.0)
    model.compile(keras.optimizers.SGD(schedule), "mse")
    return model


def tiny_data():
    """`BATCHES_PER_PASS` equal batches, so that any order trains the same weights."""
    x = np.tile(np.array([[0.5, -1.0, 2.0], [1.0, 0.0, -0.5]], "float32"), (BATCHES_PER_PASS, 1))
    y = x.sum(-1, keepdims=True)
    return tf.data.Dataset.from_tensor_slices((x, y)).batch(2)


class _Watch(keras.callbacks.Callback):
    def __init__(self, kill_at, record):
        super().__init__()
        self.kill_at, self.record = kill_at, record

    def on_epoch_begin(self, epoch, logs=None):
        self.record["epoch_steps"].append([epoch, 0])

    def on_train_batch_begin(self, batch, logs=None):
        iterations = int(self.model.optimizer.iterations)
        if "start_iterations" not in self.record:  # the state restored, before any step
            self.record["start_iterations"] = iterations
            self.record["start_learning_rate"] = float(self.model.optimizer.learning_rate)
            self.record["start_batch"] = batch
        if iterations == self.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    def on_train_batch_end(self, batch, logs=None):
        self.record["epoch_steps"][-1][1] += 1


def main(record_path, kill_at, argv):
    args = add_common_arguments(
        argparse.ArgumentParser(), epochs=3, batch_size=2, output_dir="run"
    ).parse_args(argv)
    args.seed = 0
    record = {"epoch_steps": []}
    run = TrainingRun(args)
    record["resume_step"] = run.resume_step
    model = tiny_model()
    steps = run.steps_per_epoch(BATCHES_PER_PASS)
    watch = _Watch(kill_at, record)
    run.fit(model, tiny_data(), None, args.epochs, 10.0, "", steps, callbacks=[watch], verbose=2)
    record["iterations"] = int(model.optimizer.iterations)
    record["learning_rate"] = float(model.optimizer.learning_rate)
    record["weights"] = [w.tolist() for w in model.get_weights()]
    with open(record_path, "w") as file:
        json.dump(record, file)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3:])
