"""A data set that cannot be downloaded ends a training script with one line, not a traceback.

Example:

>>> from keras_attention.data.tfds_download import DatasetDownloadError
>>> from keras_attention.training.download_errors import download_errors_as_exit
>>> try:
...     with download_errors_as_exit():
...         raise DatasetDownloadError("tensorflow-datasets cannot download 'cifar10': ...")
... except SystemExit as stop:
...     print(stop)
error: tensorflow-datasets cannot download 'cifar10': ...
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
