"""--strategy multiworker and tpu: TF_CONFIG, the chief's outputs, and two real workers on one machine."""

import argparse
import json
import os
import pathlib
import socket
import subprocess
import sys
import time
import types

import numpy as np
import pytest
import tensorflow as tf

from keras_attention.training import cluster_strategies
from keras_attention.training import run_lock
from keras_attention.training import run_setup
from keras_attention.training import worker_folders
from keras_attention.training.cluster_config import read_worker_role
from keras_attention.training.keras_reduce_workaround import ReduceEachValue

ROOT = pathlib.Path(__file__).resolve().parents[2]
WORKER = pathlib.Path(__file__).with_name("multiworker_process.py")
# Generous: each worker imports TensorFlow, trains, translates with XLA and exports.
WORKER_TIMEOUT_SECONDS = 600
# train_nmt.py's smallest settings (see tests/examples/test_train_nmt.py).
NMT_FLAGS = [
    "--builtin-pairs", "64", "--epochs", "1", "--batch-size", "8", "--max-length", "12",
    "--long-pairs", "truncate",
    "--hidden-dim", "8", "--num-layers", "1", "--num-heads", "2", "--vocabulary-size", "300",
    "--eval-sentences", "2", "--samples", "0", "--plots", "0", "--no-html",
]  # fmt: skip


def _tf_config(addresses, index):
    return json.dumps(
        {"cluster": {"worker": addresses}, "task": {"type": "worker", "index": index}}
    )


def test_worker_roles_from_tf_config():
    two = ["127.0.0.1:2001", "127.0.0.1:2002"]
    assert read_worker_role({"TF_CONFIG": _tf_config(two, 0)}) == ("worker", 0, True, 2)
    assert read_worker_role({"TF_CONFIG": _tf_config(two, 1)}) == ("worker", 1, False, 2)
    with_chief = {"chief": ["a:1"], "worker": ["b:2", "c:3"]}
    for task, is_chief in ((("chief", 0), True), (("worker", 0), False), (("worker", 1), False)):
        text = json.dumps({"cluster": with_chief, "task": {"type": task[0], "index": task[1]}})
        assert read_worker_role({"TF_CONFIG": text}) == (*task, is_chief, 3)


@pytest.mark.parametrize(
    "tf_config, message",
    [
        (None, "needs the TF_CONFIG environment variable"),
        ("  ", "needs the TF_CONFIG environment variable"),
        ("{cluster: 1}", "TF_CONFIG must be JSON text"),
        ("[1]", "must be a JSON object"),
        ('{"task": {"type": "worker", "index": 0}}', 'TF_CONFIG\\["cluster"\\] must map'),
        ('{"cluster": {"worker": "a:1"}, "task": {"type": "worker"}}', "non-empty list"),
        ('{"cluster": {"worker": ["a"]}, "task": {"type": "worker"}}', "host:port"),
        ('{"cluster": {"ps": ["a:1"]}, "task": {"type": "ps"}}', "task type 'ps'"),
        ('{"cluster": {"worker": ["a:1"]}}', 'TF_CONFIG\\["task"\\] must be an object'),
        ('{"cluster": {"worker": ["a:1"]}, "task": {"type": "chief"}}', "Received: 'chief'"),
        (
            '{"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 1}}',
            "in \\[0, 1\\)",
        ),
        ('{"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": "0"}}', "'0'"),
    ],
)
def test_missing_or_malformed_tf_config_is_refused(tf_config, message):
    environ = {} if tf_config is None else {"TF_CONFIG": tf_config}
    with pytest.raises(ValueError, match=message):
        read_worker_role(environ)


def test_multiworker_strategy_without_tf_config_names_it(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    with pytest.raises(ValueError, match="TF_CONFIG"):
        run_setup.make_strategy("multiworker")
    args = argparse.Namespace(output_dir="out", export=None, strategy="multiworker")
    with pytest.raises(ValueError, match="TF_CONFIG"):
        run_setup.prepare_output(args)


def test_only_the_chief_claims_the_output_folders(tmp_path, monkeypatch):
    shared, served = tmp_path / "run", tmp_path / "served"
    addresses = ["127.0.0.1:2001", "127.0.0.1:2002"]

    def prepare(index):
        monkeypatch.setenv("TF_CONFIG", _tf_config(addresses, index))
        args = argparse.Namespace(
            output_dir=str(shared), export=str(served), strategy="multiworker", overwrite=False
        )
        return run_setup.prepare_output(args), args

    state, chief = prepare(0)
    assert (state, chief.output_dir, chief.export) == ("new", str(shared), str(served))
    assert (shared / "run_arguments.json").exists()
    state, other = prepare(1)
    assert state == "worker"
    temporary = pathlib.Path(other.output_dir)
    assert temporary.is_dir() and not temporary.is_relative_to(tmp_path)
    assert pathlib.Path(other.export).parent == temporary
    assert worker_folders.shared_output_dir(other.output_dir) == str(shared)
    assert worker_folders.shared_output_dir(chief.output_dir) is None
    # The other worker restores the chief's backup and writes none of its own.
    backups = [c for c in run_setup.training_callbacks(other.output_dir) if hasattr(c, "backups")]
    assert [type(c).__name__ for c in backups] == ["RestoreOnlyBackup"]
    assert backups[0].backup_dir == str(shared / "backup")
    backups = [c for c in run_setup.training_callbacks(chief.output_dir) if hasattr(c, "backups")]
    assert [(type(c).__name__, c.backup_dir) for c in backups] == [
        ("SafeBackupAndRestore", str(shared / "backup"))
    ]
    assert sorted(os.listdir(shared)) == [".run.lock", "checkpoints", "run_arguments.json"]
    # The chief holds the shared folder's lock; the other worker took none.
    assert run_lock.holds_run_lock(chief.output_dir)
    assert not run_lock.holds_run_lock(other.output_dir)
    run_lock.release_run_lock(chief.output_dir)


def test_tpu_strategy_is_wired_through_the_cluster_resolver(monkeypatch):
    calls = []

    class FakeResolver:
        def __init__(self, *args, **kwargs):
            calls.append(("resolver", args, kwargs))

    def record(name):
        def call(*args, **kwargs):
            calls.append((name, args, kwargs))
            return name

        return call

    fake_tf = types.SimpleNamespace(
        distribute=types.SimpleNamespace(
            cluster_resolver=types.SimpleNamespace(TPUClusterResolver=FakeResolver),
            TPUStrategy=record("strategy"),
        ),
        config=types.SimpleNamespace(experimental_connect_to_cluster=record("connect")),
        tpu=types.SimpleNamespace(
            experimental=types.SimpleNamespace(initialize_tpu_system=record("initialize"))
        ),
    )
    # The fake stands for TensorFlow's real API, name for name.
    for path in (
        "distribute.cluster_resolver.TPUClusterResolver",
        "distribute.TPUStrategy",
        "config.experimental_connect_to_cluster",
        "tpu.experimental.initialize_tpu_system",
    ):
        real, fake = tf, fake_tf
        for name in path.split("."):
            real, fake = getattr(real, name), getattr(fake, name)
        assert callable(real) and callable(fake), path
    monkeypatch.setattr(cluster_strategies, "tf", fake_tf)
    assert run_setup.make_strategy("tpu") == "strategy"
    assert [name for name, _, _ in calls] == ["resolver", "connect", "initialize", "strategy"]
    assert calls[0][1:] == ((), {})  # the resolver finds the TPU itself (TPU VM or TPU_NAME)
    resolver = [args for name, args, _ in calls if name == "connect"][0][0]
    assert isinstance(resolver, FakeResolver)
    for name, args, kwargs in calls[1:]:
        assert (args, kwargs) == ((resolver,), {}), name


class _PerReplica:
    """Stands in for a `tf.distribute` per-replica value: one value per local replica."""

    def __init__(self, *values):
        self.values = values


class _RecordingStrategy:
    """Stands in for MultiWorkerMirroredStrategy: reductions recorded, structures refused."""

    def __init__(self):
        self.reductions = []

    def experimental_local_results(self, value):
        return value.values

    def reduce(self, reduce_op, value, axis):
        if not isinstance(value, _PerReplica):
            raise ValueError(f"Attempt to convert a value with an unsupported type {type(value)}")
        self.reductions.append((reduce_op, axis))
        reduce = np.sum if reduce_op == "SUM" else np.mean
        if axis is None:
            return reduce(value.values, axis=0)
        return reduce(np.concatenate(value.values, axis=axis), axis=axis)


def test_keras_reduce_workaround():
    class Strategy(ReduceEachValue, _RecordingStrategy):
        pass

    strategy = Strategy()
    # The scalar loss of two replicas: Keras asks for axis 0, the replicas' mean is meant.
    assert strategy.reduce("MEAN", _PerReplica(np.float32(1.0), np.float32(3.0)), axis=0) == 2.0
    assert strategy.reductions == [("MEAN", None)]
    # A dict batch (Keras builds the model from it): this worker's first replica, unreduced.
    batch = {
        "source": _PerReplica(np.ones((2, 5)), np.zeros((2, 5))),
        "target": _PerReplica(np.ones((2, 4)), np.ones((1, 4))),
    }
    built = strategy.reduce("MEAN", batch, axis=None)
    assert {name: value.shape for name, value in built.items()} == {
        "source": (2, 5),
        "target": (2, 4),
    }
    np.testing.assert_array_equal(built["source"], np.ones((2, 5)))
    assert strategy.reductions == [("MEAN", None)]  # no communication for it
    # A tensor with a real axis is reduced as asked.
    rows = _PerReplica(np.array([[1.0, 2.0]]), np.array([[3.0, 4.0]]))
    np.testing.assert_array_equal(strategy.reduce("SUM", rows, axis=0), [4.0, 6.0])
    assert strategy.reductions[-1] == ("SUM", 0)
    assert issubclass(cluster_strategies.ShardedMultiWorkerStrategy, ReduceEachValue)


def _free_addresses(count):
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [f"127.0.0.1:{sock.getsockname()[1]}" for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def _run_workers(tmp_path, script, flags, count=2):
    """Runs `count` workers of `examples/<script>.py` to the end; returns their records and logs."""
    addresses = _free_addresses(count)
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "KERAS_BACKEND": "tensorflow",
        "TF_CPP_MIN_LOG_LEVEL": "2",
    }
    workers = []
    for index in range(count):
        log = open(tmp_path / f"worker_{index}.log", "w")
        command = [sys.executable, str(WORKER), str(tmp_path / f"record_{index}.npz"), script]
        process = subprocess.Popen(
            command + flags,
            env={**environment, "TF_CONFIG": _tf_config(addresses, index)},
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=tmp_path,
        )
        workers.append((process, log))
    deadline = time.monotonic() + WORKER_TIMEOUT_SECONDS
    try:
        for process, _ in workers:
            process.wait(timeout=max(1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        pass
    finally:
        for process, log in workers:
            if process.poll() is None:
                process.kill()
                process.wait()
            log.close()
    logs = [(tmp_path / f"worker_{index}.log").read_text() for index in range(count)]
    failed = [i for i, (process, _) in enumerate(workers) if process.returncode != 0]
    if failed:
        pytest.fail(
            "\n".join(
                f"worker {i} ended with exit status {workers[i][0].returncode} (-9: killed "
                f"after {WORKER_TIMEOUT_SECONDS} s); its last output:\n{logs[i][-4000:]}"
                for i in failed
            )
        )
    records = [dict(np.load(tmp_path / f"record_{index}.npz")) for index in range(count)]
    return records, logs


def test_two_workers_read_their_own_files_train_the_same_weights_and_the_chief_exports(tmp_path):
    from keras_attention.serving.translation_export import load_translator
    from keras_attention.tasks.translation.builtin_corpus import builtin_translation_pairs

    # A parallel folder as users download it: each worker reads its own blocks of the
    # training files (tf.distribute's sharding off), and all of the held-out ones.
    folder = tmp_path / "corpus"
    folder.mkdir()
    pairs = builtin_translation_pairs(num_pairs=2200, seed=3)
    for split, chosen in (("train", pairs[:2048]), ("valid", pairs[2048:2120])):
        for index, lang in enumerate(("en", "es")):
            (folder / f"{split}.{lang}").write_text("".join(p[index] + "\n" for p in chosen))
    output_dir, export_dir = tmp_path / "run", tmp_path / "served"
    flags = NMT_FLAGS + ["--dataset", f"parallel:{folder}", "--source-lang", "en"]
    flags += ["--target-lang", "es", "--steps-per-epoch", "4", "--strategy", "multiworker"]
    flags += ["--output-dir", str(output_dir), "--export", str(export_dir)]
    records, logs = _run_workers(tmp_path, "train_nmt", flags)

    # Every worker ends with the same weights: the gradients were summed across them.
    weights = [[r[f"weight_{i}"] for i in range(len(r) - 2)] for r in records]
    assert len(weights[0]) == len(weights[1]) > 0
    for chief, other in zip(*weights, strict=True):
        np.testing.assert_array_equal(chief, other)
    # Each worker read its own files' blocks for training (sharding OFF) and its half of
    # every held-out batch (sharded by DATA), half of each global batch of 8.
    off = int(tf.data.experimental.AutoShardPolicy.OFF)
    data_policy = int(tf.data.experimental.AutoShardPolicy.DATA)
    for record in records:
        training, *held_out = record["shard_policies"].tolist()
        assert training == off and held_out and set(held_out) == {data_policy}
        assert record["local_batch_sizes"][0] == 4

    # Only the chief's results are kept, in the shared folders.
    metrics = json.loads((output_dir / "metrics.json").read_text())
    assert (metrics["replicas"], metrics["epochs"], metrics["batch_size"]) == (2, 1, 8)
    assert (output_dir / "checkpoints" / "epoch_001.keras").exists()
    assert not (output_dir / "backup").exists()  # removed once the results are written
    assert not any(name.startswith("worker_") for name in os.listdir(output_dir))
    temporary = [line for line in logs[1].splitlines() if "deleted at exit" in line]
    assert len(temporary) == 1 and "not the chief" in temporary[0]
    folder = temporary[0].split("writing to ")[1].split(", deleted at exit")[0]
    assert not os.path.exists(folder)  # the other worker's outputs are gone
    # The chief's export serves.
    serve = load_translator(export_dir)
    outputs = serve(["the dog sleeps", "a cat"])  # (B,) in: (B, T, S) attention out
    assert outputs["attention"].shape[:2] == (2, 12)
    assert outputs["translation"].shape == (2,)


def test_a_non_chief_worker_resumes_from_the_chiefs_backup_and_writes_none(tmp_path):
    import keras

    from keras_attention.callbacks.safe_backup import SafeBackupAndRestore
    from keras_attention.training.restore_only_backup import RestoreOnlyBackup

    x = np.arange(12, dtype="float32").reshape(4, 3) / 10
    y = x.sum(-1, keepdims=True)

    def model():
        m = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
        m.compile(keras.optimizers.SGD(0.1), "mse")
        return m

    class Stop(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            if epoch == 1:
                raise RuntimeError("the job was stopped")

    chief = model()
    with pytest.raises(RuntimeError, match="stopped"):
        chief.fit(x, y, epochs=5, verbose=0, callbacks=[SafeBackupAndRestore(tmp_path), Stop()])
    saved = sorted(os.listdir(tmp_path))
    assert saved == ["epoch_000002"]

    chief_weights = chief.get_weights()

    class RecordStart(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            self.weights = self.model.get_weights()

    restarted = model()  # other initial weights, as in a new process
    backup, start = RestoreOnlyBackup(str(tmp_path)), RecordStart()
    history = restarted.fit(x, y, epochs=3, verbose=0, callbacks=[backup, start])
    for got, want in zip(start.weights, chief_weights, strict=True):
        np.testing.assert_array_equal(got, want)
    assert len(history.history["loss"]) == 1  # epochs 1 and 2 came from the chief's backup
    assert backup.restored_from == str(tmp_path / "epoch_000002")
    assert sorted(os.listdir(tmp_path)) == saved  # nothing written, nothing removed


def test_every_worker_resumes_at_the_step_of_the_chiefs_backup(tmp_path):
    import keras

    from keras_attention.callbacks.safe_backup import SafeBackupAndRestore
    from keras_attention.training.restore_only_backup import RestoreOnlyBackup
    from keras_attention.training.resumable_fit import fit_resuming

    x = np.arange(16, dtype="float32").reshape(8, 2) / 10
    data = tf.data.Dataset.from_tensor_slices((x, x.sum(-1))).batch(4)  # 2 batches a pass

    def model():
        m = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
        m.compile(keras.optimizers.SGD(0.1), "mse")
        return m

    class Stop(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            if int(self.model.optimizer.iterations) == 7:
                raise RuntimeError("the job was stopped")

    chief = model()
    with pytest.raises(RuntimeError, match="stopped"):
        backup = SafeBackupAndRestore(tmp_path, False, every_steps=2)
        fit_resuming(chief, data, 3, 4, callbacks=[backup, Stop()], verbose=0)
    saved = sorted(os.listdir(tmp_path))
    assert saved == ["epoch_000001_step_000000002"]  # step 6: 1 epoch and 2 steps

    starts = []
    record = keras.callbacks.LambdaCallback(
        on_train_batch_begin=lambda batch, logs: starts.append(batch)
    )
    restarted = []
    for backup in (RestoreOnlyBackup(str(tmp_path), every_steps=1), SafeBackupAndRestore(tmp_path)):
        worker = model()
        fit_resuming(worker, data, 3, 4, callbacks=[backup, record], verbose=0)
        restarted.append((backup.resume_at, starts[0], int(worker.optimizer.iterations)))
        starts.clear()
        if isinstance(backup, RestoreOnlyBackup):
            assert sorted(os.listdir(tmp_path)) == saved  # nothing written, nothing removed
    assert restarted == [((1, 2), 2, 12)] * 2  # the other worker and the chief alike
