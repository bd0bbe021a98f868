"""The cluster a multi-worker run belongs to, read from the `TF_CONFIG` environment variable.

`TF_CONFIG` is the JSON text every TensorFlow worker reads to find the
others: the cluster (each task type's `host:port` addresses) and this
process's own task. Pure Python (no TensorFlow), so a script knows whether
it is the chief before it imports anything.

Example:

>>> import json
>>> from keras_attention.training.cluster_config import read_worker_role
>>> tf_config = json.dumps({
...     "cluster": {"worker": ["10.0.0.1:12345", "10.0.0.2:12345"]},
...     "task": {"type": "worker", "index": 1},
... })
>>> read_worker_role({"TF_CONFIG": tf_config})
WorkerRole(task_type='worker', task_index=1, is_chief=False, num_workers=2)
"""

import collections
import json
import os

# The task types MultiWorkerMirroredStrategy trains with.
TRAINING_TASK_TYPES = ("chief", "worker")

WorkerRole = collections.namedtuple(
    "WorkerRole", ["task_type", "task_index", "is_chief", "num_workers"]
)
WorkerRole.__doc__ = """This process's place in the cluster.

The chief is the task of type "chief", or worker 0 when the cluster has
none: it alone writes the run's results.
"""


def read_worker_role(environ=None):
    """This process's `WorkerRole`, from `TF_CONFIG`.

    Args:
        environ: mapping of environment variables (default: `os.environ`).

    Returns:
        a `WorkerRole`.

    Raises:
        ValueError: `TF_CONFIG` is missing, not JSON, or does not describe a
            cluster of "chief"/"worker" addresses and a task within it.

    Example:

    >>> from keras_attention.training.cluster_config import read_worker_role
    >>> read_worker_role({})
    Traceback (most recent call last):
    ...
    ValueError: --strategy multiworker needs the TF_CONFIG environment variable...
    """
    environ = os.environ if environ is None else environ
    text = environ.get("TF_CONFIG", "")
    if not text.strip():
        raise ValueError(
            "--strategy multiworker needs the TF_CONFIG environment variable, the JSON "
            'text naming the cluster and this worker, e.g. TF_CONFIG=\'{"cluster": '
            '{"worker": ["host1:12345", "host2:12345"]}, "task": {"type": "worker", '
            '"index": 0}}\'. Received: TF_CONFIG unset or empty'
        )
    try:
        config = json.loads(text)
    except ValueError as error:
        raise ValueError(
            f"TF_CONFIG must be JSON text ({error}). Received: TF_CONFIG={text!r}"
        ) from None
    if not isinstance(config, dict):
        raise ValueError(f"TF_CONFIG must be a JSON object. Received: TF_CONFIG={text!r}")
    cluster = _checked_cluster(config.get("cluster"), text)
    task = config.get("task")
    if not isinstance(task, dict) or set(task) - {"type", "index"}:
        raise ValueError(
            'TF_CONFIG["task"] must be an object {"type": ..., "index": ...}. '
            f"Received: TF_CONFIG={text!r}"
        )
    task_type, task_index = task.get("type"), task.get("index", 0)
    if task_type not in cluster:
        raise ValueError(
            f'TF_CONFIG["task"]["type"] must be one of the cluster\'s task types '
            f"{sorted(cluster)}. Received: {task_type!r}"
        )
    if type(task_index) is not int or not 0 <= task_index < len(cluster[task_type]):
        raise ValueError(
            f'TF_CONFIG["task"]["index"] must be an integer in [0, {len(cluster[task_type])}) '
            f'for the {len(cluster[task_type])} "{task_type}" address(es). '
            f"Received: {task_index!r}"
        )
    is_chief = task_type == "chief" or ("chief" not in cluster and task_index == 0)
    num_workers = sum(len(addresses) for addresses in cluster.values())
    return WorkerRole(task_type, task_index, is_chief, num_workers)


def worker_shard(environ=None):
    """`(num_workers, index)` of this process's share of the training files: the chief first.

    Every process of the cluster trains (the chief too); each reads the
    training files of its own index (`keras_attention.data.worker_shards`).

    Args:
        environ: mapping of environment variables (default: `os.environ`).

    Example:

    >>> import json
    >>> from keras_attention.training.cluster_config import worker_shard
    >>> cluster = {"chief": ["a:1"], "worker": ["b:2", "c:3"]}
    >>> tf_config = json.dumps({"cluster": cluster, "task": {"type": "worker", "index": 1}})
    >>> worker_shard({"TF_CONFIG": tf_config})
    (3, 2)
    """
    environ = os.environ if environ is None else environ
    role = read_worker_role(environ)
    chiefs = len(json.loads(environ["TF_CONFIG"])["cluster"].get("chief", []))
    index = 0 if role.task_type == "chief" else role.task_index + chiefs
    return role.num_workers, index


def _checked_cluster(cluster, text):
    if not isinstance(cluster, dict) or not cluster:
        raise ValueError(
            'TF_CONFIG["cluster"] must map task types to lists of "host:port" addresses. '
            f"Received: TF_CONFIG={text!r}"
        )
    for task_type, addresses in cluster.items():
        if task_type not in TRAINING_TASK_TYPES:
            raise ValueError(
                f"TF_CONFIG's cluster may hold only {TRAINING_TASK_TYPES} tasks for "
                f"--strategy multiworker. Received: task type {task_type!r}"
            )
        if (
            not isinstance(addresses, list)
            or not addresses
            or not all(isinstance(a, str) and a.rpartition(":")[2].isdigit() for a in addresses)
        ):
            raise ValueError(
                f'TF_CONFIG["cluster"]["{task_type}"] must be a non-empty list of "host:port" '
                f"addresses. Received: {addresses!r}"
            )
    if len(cluster.get("chief", [])) > 1:
        raise ValueError(
            f'TF_CONFIG["cluster"]["chief"] must hold one address. Received: {cluster["chief"]!r}'
        )
    return cluster
