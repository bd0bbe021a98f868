"""shard_for_worker, sharded_already, check_shard: one worker's share of a data set's files."""

import numpy as np
import pytest
import tensorflow as tf

from keras_attention.data.worker_shards import ONE_WORKER
from keras_attention.data.worker_shards import check_shard
from keras_attention.data.worker_shards import shard_for_worker
from keras_attention.data.worker_shards import sharded_already

OFF = tf.data.experimental.AutoShardPolicy.OFF
AUTO = tf.data.experimental.AutoShardPolicy.AUTO


def policy(dataset):
    return dataset.options().experimental_distribute.auto_shard_policy


def names(dataset):
    return [name.decode() for name in dataset.as_numpy_iterator()]


@pytest.mark.parametrize("num_workers", [1, 2, 3, 4])
def test_the_shards_are_disjoint_and_cover_every_element(num_workers):
    paths = [f"images/{index:03d}.jpg" for index in range(23)]
    dataset = tf.data.Dataset.from_tensor_slices(paths)
    shares = [names(shard_for_worker(dataset, (num_workers, i))) for i in range(num_workers)]
    for index, share in enumerate(shares):
        # Every num_workers-th element from `index` on, in order.
        assert share == [
            path for position, path in enumerate(paths) if position % num_workers == index
        ]
    together = [path for share in shares for path in share]
    assert sorted(together) == paths
    assert len(set(together)) == len(together)
    sizes = [len(share) for share in shares]
    assert max(sizes) - min(sizes) <= 1


@pytest.mark.parametrize("num_workers", [1, 2, 3, 4])
def test_tf_distribute_sharding_is_off_only_for_several_workers(num_workers):
    dataset = tf.data.Dataset.range(10)
    assert policy(dataset) == AUTO
    for index in range(num_workers):
        share = shard_for_worker(dataset, (num_workers, index))
        already = sharded_already(dataset, (num_workers, index))
        expected = OFF if num_workers > 1 else AUTO
        assert policy(share) == expected
        assert policy(already) == expected
        # sharded_already marks, it does not shard.
        assert list(already.as_numpy_iterator()) == list(range(10))
    assert policy(shard_for_worker(dataset.map(lambda x: x + 1), (3, 2)).map(tf.identity)) == OFF


def test_one_worker_is_the_dataset_itself():
    dataset = tf.data.Dataset.range(5)
    assert shard_for_worker(dataset) is dataset
    assert shard_for_worker(dataset, (1, 0)) is dataset
    assert sharded_already(dataset) is dataset
    assert ONE_WORKER == (1, 0)


def test_check_shard_gives_ints():
    assert check_shard((3, 2)) == (3, 2)
    assert check_shard([4, 0]) == (4, 0)
    assert all(type(value) is int for value in check_shard((np.int64(2), np.int32(1))))


@pytest.mark.parametrize(
    "shard",
    [
        (2, 2),
        (2, -1),
        (0, 0),
        (-1, 0),
        (1,),
        (1, 0, 0),
        None,
        "ab",
        ("two", 0),
        3,
        ("2", "1"),
        (2.0, 1),
    ],
)
def test_check_shard_refuses_what_is_not_a_shard(shard):
    with pytest.raises(
        ValueError, match=r"`shard` must be \(num_workers, index\), index < num_workers"
    ) as error:
        check_shard(shard)
    assert f"shard={shard!r}" in str(error.value)
    with pytest.raises(ValueError, match="`shard` must be"):
        shard_for_worker(tf.data.Dataset.range(3), shard)
    with pytest.raises(ValueError, match="`shard` must be"):
        sharded_already(tf.data.Dataset.range(3), shard)
