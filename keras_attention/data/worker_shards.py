"""One worker's share of a data set's files, read by that worker alone.

Under `tf.distribute.MultiWorkerMirroredStrategy` every worker builds the
same input pipeline. Left to itself, tf.distribute shards a pipeline of
file names or line blocks by element (`AutoShardPolicy.DATA`): every
worker would read and decode every image, then keep its share. Sharding the
file names (or blocks of lines) before they are read, and turning
tf.distribute's own sharding off, gives each worker its own files, as
`AutoShardPolicy.FILE` does for record files; tf.distribute still splits
each worker's batches of the global batch size among the replicas.

A shard is `(num_workers, index)`: `(1, 0)` for a run on one machine.

Example:

>>> import tensorflow as tf
>>> from keras_attention.data.worker_shards import shard_for_worker
>>> paths = tf.data.Dataset.from_tensor_slices(["a.jpg", "b.jpg", "c.jpg", "d.jpg"])
>>> [p.decode() for p in shard_for_worker(paths, (2, 1)).as_numpy_iterator()]
['b.jpg', 'd.jpg']
>>> policy = shard_for_worker(paths, (2, 1)).options().experimental_distribute.auto_shard_policy
>>> policy == tf.data.experimental.AutoShardPolicy.OFF
True
"""

import numbers

import tensorflow as tf

ONE_WORKER = (1, 0)


def check_shard(shard):
    """`shard` as `(num_workers, index)` ints, or a ValueError naming it.

    Example:

    >>> from keras_attention.data.worker_shards import check_shard
    >>> check_shard((2, 2))
    Traceback (most recent call last):
    ...
    ValueError: `shard` must be (num_workers, index), index < num_workers. Received: shard=(2, 2)
    """
    try:
        num_workers, index = shard
    except (TypeError, ValueError):
        num_workers, index = 0, 0
    integers = all(
        isinstance(value, numbers.Integral) and not isinstance(value, bool)
        for value in (num_workers, index)
    )
    if not integers or num_workers < 1 or not 0 <= index < num_workers:
        raise ValueError(
            f"`shard` must be (num_workers, index), index < num_workers. Received: shard={shard!r}"
        )
    return int(num_workers), int(index)


def shard_for_worker(dataset, shard=ONE_WORKER):
    """The elements of `dataset` for worker `index` of `num_workers`, tf.distribute's sharding off.

    Apply it to the file names (or line blocks) before anything is read.

    Args:
        dataset: a `tf.data.Dataset`, usually of file names.
        shard: `(num_workers, index)`.

    Returns:
        `dataset` itself for one worker; otherwise every `num_workers`-th
        element from `index` on, with `AutoShardPolicy.OFF`.
    """
    num_workers, index = check_shard(shard)
    if num_workers == 1:
        return dataset
    return sharded_already(dataset.shard(num_workers, index), shard)


def sharded_already(dataset, shard=ONE_WORKER):
    """`dataset`, marked as one worker's share already: tf.distribute's sharding off.

    For a pipeline whose source was sharded before it became a dataset (a
    worker's rows of a table); nothing changes for one worker.

    Example:

    >>> import tensorflow as tf
    >>> from keras_attention.data.worker_shards import sharded_already
    >>> rows = sharded_already(tf.data.Dataset.range(3), (2, 0))
    >>> rows.options().experimental_distribute.auto_shard_policy.name
    'OFF'
    """
    if check_shard(shard)[0] == 1:
        return dataset
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
    return dataset.with_options(options)
