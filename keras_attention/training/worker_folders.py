"""Where the workers of a multi-worker run write: the chief to the run's folders, others elsewhere.

Every worker runs the same script, which writes checkpoints, figures,
metrics and an export. Only the chief's are kept: another worker's
`--output-dir` and `--export` are moved into a temporary folder, deleted
when the process exits (TensorFlow's documented pattern for
`MultiWorkerMirroredStrategy`). Such a worker still resumes from the chief's
backup in the shared `--output-dir` (`shared_output_dir`), so every worker
restarts at the same epoch.

Example:

>>> import argparse, os
>>> from keras_attention.training.cluster_config import WorkerRole
>>> args = argparse.Namespace(output_dir="/shared/run", export="/shared/served")
>>> redirect_outputs(args, WorkerRole("worker", 1, False, 2))
True
>>> args.output_dir != "/shared/run", shared_output_dir(args.output_dir)
(True, '/shared/run')
>>> os.path.dirname(args.export) == args.output_dir
True
"""

import atexit
import os
import shutil
import tempfile

# A non-chief worker's temporary output folder -> the run's shared --output-dir.
_SHARED_FOLDERS = {}


def redirect_outputs(args, role):
    """Points a non-chief worker's `args.output_dir` and `args.export` into a temporary folder.

    Args:
        args: the parsed `argparse.Namespace` (`output_dir`, `export`);
            changed in place.
        role: this process's `WorkerRole`.

    Returns:
        True when the outputs were redirected (a non-chief worker), else False.
    """
    if role.is_chief:
        return False
    folder = tempfile.mkdtemp(prefix=f"worker_{role.task_type}_{role.task_index}_")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    _SHARED_FOLDERS[folder] = args.output_dir
    args.output_dir = folder
    if args.export:
        args.export = os.path.join(folder, "export")
    return True


def shared_output_dir(output_dir):
    """The run's shared `--output-dir` when `output_dir` is a non-chief worker's temporary one.

    Returns:
        the shared folder path, or None for any other folder.
    """
    return _SHARED_FOLDERS.get(output_dir)
