"""One worker of a multi-worker example run, as tests/training/test_multiworker.py starts it.

    TF_CONFIG=... python multiworker_process.py RECORD.npz SCRIPT_NAME [SCRIPT FLAGS...]

Runs `examples/SCRIPT_NAME.py`'s `main` unchanged, and records in RECORD.npz
what only this process can see: the model's weights when training ends,
the auto-shard policy of the data sets given to the strategy, and the size
of this worker's part of the first training batch.
"""

import importlib.util
import os
import pathlib
import sys

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from keras_attention.training import run_setup  # noqa: E402

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


class _RecordWeights(keras.callbacks.Callback):
    def __init__(self, record):
        super().__init__()
        self.record = record

    def on_train_end(self, logs=None):
        for index, weight in enumerate(self.model.get_weights()):
            self.record[f"weight_{index}"] = weight


def main(record_path, script, argv):
    sys.path.insert(0, str(EXAMPLES))
    spec = importlib.util.spec_from_file_location(script, EXAMPLES / f"{script}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    record = {"shard_policies": [], "local_batch_sizes": []}
    distribute = tf.distribute.MultiWorkerMirroredStrategy.experimental_distribute_dataset

    def recording_distribute(strategy, dataset, options=None):
        record["shard_policies"].append(
            int(dataset.options().experimental_distribute.auto_shard_policy)
        )
        distributed = distribute(strategy, dataset, options)
        first = next(iter(distributed))
        inputs = first[0] if isinstance(first, tuple) else first
        local = strategy.experimental_local_results(tf.nest.flatten(inputs)[0])[0]
        record["local_batch_sizes"].append(int(local.shape[0]))
        return distributed

    tf.distribute.MultiWorkerMirroredStrategy.experimental_distribute_dataset = recording_distribute
    callbacks = run_setup.training_callbacks  # what every example's TrainingRun.fit calls
    run_setup.training_callbacks = lambda folder: callbacks(folder) + [_RecordWeights(record)]
    module.main(argv)
    np.savez(record_path, **record)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
