"""Strategies that train on more than one machine: several workers, or a Cloud TPU.

- `make_multi_worker_strategy`: `tf.distribute.MultiWorkerMirroredStrategy`
  over the workers `TF_CONFIG` names; every worker runs the same command,
  each reads its share of every global batch (tf.data auto-sharding by
  DATA), and gradients are summed across them after each step.
- `make_tpu_strategy`: `tf.distribute.TPUStrategy` on the TPU that
  `TPUClusterResolver` finds (a TPU VM's own, or the one `TPU_NAME` names).

Both are created at program start, before TensorFlow runs anything else.
"""

import atexit
import sys

import tensorflow as tf

from keras_attention.training.cluster_config import read_worker_role
from keras_attention.training.keras_reduce_workaround import ReduceEachValue


class ShardedMultiWorkerStrategy(ReduceEachValue, tf.distribute.MultiWorkerMirroredStrategy):
    """`MultiWorkerMirroredStrategy` that shards data sets by element and reduces as Keras asks.

    A data set that leaves its auto-shard policy at AUTO is sharded by DATA:
    every worker runs the whole input pipeline and keeps its share of each
    global batch. The examples' data sets are built in memory (no files to
    split by), and each worker shuffles them with the same seed, so the
    workers' shares are disjoint and cover the batch. `reduce` takes
    structures and scalars the way Keras' `fit` passes them
    (`ReduceEachValue`).
    """

    def experimental_distribute_dataset(self, dataset, options=None):
        if (
            dataset.options().experimental_distribute.auto_shard_policy
            == tf.data.experimental.AutoShardPolicy.AUTO
        ):
            by_element = tf.data.Options()
            by_element.experimental_distribute.auto_shard_policy = (
                tf.data.experimental.AutoShardPolicy.DATA
            )
            dataset = dataset.with_options(by_element)
        return super().experimental_distribute_dataset(dataset, options)


def make_multi_worker_strategy(environ=None):
    """A `ShardedMultiWorkerStrategy` for the cluster in `TF_CONFIG`.

    Call it before TensorFlow runs any operation: the workers' collective
    operations are set up when TensorFlow starts.

    Args:
        environ: mapping of environment variables (default: `os.environ`).

    Returns:
        a `ShardedMultiWorkerStrategy`.

    Raises:
        ValueError: `TF_CONFIG` is missing or malformed (see `read_worker_role`).
        RuntimeError: TensorFlow already ran operations in this process.
    """
    read_worker_role(environ)  # a clear message before TensorFlow's own
    try:
        strategy = ShardedMultiWorkerStrategy()
    except RuntimeError as error:
        raise RuntimeError(
            "--strategy multiworker must be set up before TensorFlow runs anything in "
            f"this process: call make_strategy first ({error})"
        ) from None
    atexit.register(leave_together, strategy)
    return strategy


def leave_together(strategy):
    """Waits until every worker has finished its script (called at exit).

    The chief serves the cluster's coordination service: a worker still
    running TensorFlow when the chief's process ends loses it and hangs
    instead of exiting. A process that ends with an error does not wait:
    the others learn of its loss from the coordination service.
    """
    if getattr(sys, "last_value", None) is not None:
        return
    strategy.reduce("SUM", tf.function(lambda: strategy.run(tf.ones, [()]))(), axis=None)


def make_tpu_strategy():
    """A `tf.distribute.TPUStrategy` on the TPU `TPUClusterResolver` finds.

    Connects to the TPU's cluster and initializes the TPU system first, as
    TensorFlow requires. On a TPU VM the resolver finds the local TPU; on a
    TPU node, set `TPU_NAME` to its name or `grpc://` address.

    Returns:
        a `tf.distribute.TPUStrategy`.

    Raises:
        SystemExit: no TPU is found, in one line that says where one is looked for.
    """
    try:
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver()
    except ValueError as error:  # "Please provide a TPU Name to connect to."
        raise SystemExit(
            f"error: --strategy tpu found no TPU ({error}): run on a TPU VM, or set TPU_NAME "
            "to a TPU node's name or grpc:// address"
        ) from None
    tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)
    return tf.distribute.TPUStrategy(resolver)
