"""What a training script's inputs cannot be read as ends it with one line, not a traceback.

Two kinds of refusal are the user's to act on, not the code's: a data set
that cannot be downloaded (`download_errors_as_exit`), and the `ValueError`
of a data loader or checkpoint reader, which names the file, the key or line
and the values (`input_errors_as_exit`). The scripts wrap only the steps that
read the user's data and checkpoints in the second, so that an error anywhere
else (training, evaluation, export) keeps its traceback.

Example:

>>> from keras_attention.data.tfds_download import DatasetDownloadError
>>> from keras_attention.training.input_errors import download_errors_as_exit
>>> from keras_attention.training.input_errors import input_errors_as_exit
>>> try:
...     with download_errors_as_exit():
...         raise DatasetDownloadError("tensorflow-datasets cannot download 'cifar10': ...")
... except SystemExit as stop:
...     print(stop)
error: tensorflow-datasets cannot download 'cifar10': ...
>>> try:
...     with input_errors_as_exit():
...         raise ValueError("pairs.tsv: no valid `source<TAB>target` line")
... except SystemExit as stop:
...     print(stop)
error: pairs.tsv: no valid `source<TAB>target` line
"""

import contextlib

from keras_attention.data.tfds_download import DatasetDownloadError


@contextlib.contextmanager
def download_errors_as_exit():
    """Turns a `DatasetDownloadError` into `SystemExit("error: ...")`, its one line."""
    try:
        yield
    except DatasetDownloadError as error:
        raise SystemExit(f"error: {error}") from None


@contextlib.contextmanager
def input_errors_as_exit():
    """Turns a `ValueError` (or a `DatasetDownloadError`) into `SystemExit("error: ...")`.

    For the steps of a script that read what the user named (`--dataset`,
    `--init-from`): their `ValueError`s are refusals of that input, already
    in words that say which file and what is wrong with it.
    """
    try:
        yield
    except (ValueError, DatasetDownloadError) as error:
        raise SystemExit(f"error: {error}") from None
