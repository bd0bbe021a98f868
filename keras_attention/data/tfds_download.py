"""tensorflow-datasets sets loaded with one clear error when they cannot be downloaded.

`load_tfds` is `tfds.load` with a check first: a data set that is not yet
prepared in the data directory needs its download hosts, and when none of
them answers, `DatasetDownloadError` says so at once, in one line naming the
data set, the host and what to do instead (a prepared copy under
`--data-dir`, or the files as downloaded through `folder:`). Without the
check tfds retries each address with a growing pause, more than three
minutes, and ends with a traceback of `requests` and `urllib3` errors.

Example:

>>> from keras_attention.data.tfds_download import DatasetDownloadError
>>> issubclass(DatasetDownloadError, ConnectionError)
True
"""

import socket
import urllib.parse

# Seconds to wait for a download host to accept a connection.
CONNECT_TIMEOUT = 10.0
# Hosts tried before a data set is declared out of reach.
_MAX_HOSTS = 3


class DatasetDownloadError(ConnectionError):
    """A tensorflow-datasets set that is not on disk and cannot be downloaded.

    Example:

    >>> from keras_attention.data.tfds_download import DatasetDownloadError
    >>> str(DatasetDownloadError("cifar10: the network is unreachable"))
    'cifar10: the network is unreachable'
    """


def download_error(name, reason, data_dir=None):
    """The one-line `DatasetDownloadError` for data set `name`, with what to do instead.

    Example:

    >>> from keras_attention.data.tfds_download import download_error
    >>> message = str(download_error("cifar10", "could not resolve www.cs.toronto.edu"))
    >>> message.split(":")[0]
    "tensorflow-datasets cannot download 'cifar10'"
    """
    where = f" (data directory {data_dir})" if data_dir else ""
    return DatasetDownloadError(
        f"tensorflow-datasets cannot download {name!r}{where}: the network is unreachable "
        f"({reason}). Prepare it where there is a network and pass its folder with "
        "--data-dir DIR, or point --dataset at a local copy of the files with folder:PATH"
    )


def _hosts(url_infos):
    """`[(host, port)]` of the download URLs, in first-seen order."""
    hosts = []
    for url in url_infos or ():
        parts = urllib.parse.urlsplit(url)
        if parts.hostname and parts.scheme in ("http", "https", "ftp"):
            port = parts.port or {"http": 80, "https": 443, "ftp": 21}[parts.scheme]
            if (parts.hostname, port) not in hosts:
                hosts.append((parts.hostname, port))
    return hosts


def unreachable_reason(urls, timeout=CONNECT_TIMEOUT):
    """Why none of the hosts of `urls` can be reached, or None when one answers.

    Each host (the first three) is resolved and connected to, with
    `timeout` seconds per connection; with no URL there is nothing to
    check (None).

    Args:
        urls: iterable of download URLs.
        timeout: seconds per connection attempt.

    Returns:
        None, or a short reason such as "could not resolve example.org".

    Example:

    >>> from keras_attention.data.tfds_download import unreachable_reason
    >>> unreachable_reason([]) is None
    True
    """
    reasons = []
    for host, port in _hosts(urls)[:_MAX_HOSTS]:
        try:
            addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError:
            reasons.append(f"could not resolve {host}")
            continue
        for family, kind, protocol, _, address in addresses[:2]:
            try:
                with socket.socket(family, kind, protocol) as connection:
                    connection.settimeout(timeout)
                    connection.connect(address)
                return None
            except OSError as error:
                reason = f"could not connect to {host}:{port}: {error.strerror or error}"
        reasons.append(reason)
    return "; ".join(reasons) or None


def _is_network_error(error):
    """Whether `error`, or an error it was raised from, is a failed connection."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, (ConnectionError, socket.gaierror, TimeoutError)):
            return True
        if type(error).__module__.split(".")[0] in ("requests", "urllib3"):
            return True
        error = error.__cause__ or error.__context__
    return False


def _downloads_for_real(builder):
    """False under `tfds.testing.mock_data`, which replaces the download with a no-op."""
    method = type(builder).download_and_prepare
    return getattr(method, "__module__", "").startswith("tensorflow_datasets.core")


def load_tfds(name, *, data_dir=None, **load_options):
    """`tfds.load(name, data_dir=data_dir, **load_options)`, failing fast when offline.

    Args:
        name: a tensorflow-datasets name, e.g. "cifar10".
        data_dir: tfds' data directory; None for its default
            (`~/tensorflow_datasets`).
        **load_options: passed to `tfds.load` (`split`, `as_supervised`, ...).

    Returns:
        what `tfds.load` returns.

    Raises:
        DatasetDownloadError: the data set is not prepared in `data_dir` and
            its download hosts cannot be reached (checked before tfds starts
            its retries), or the download failed for want of a connection.
    """
    import tensorflow_datasets as tfds  # Imported here: slow, and only tfds sources need it.

    builder = tfds.builder(name, data_dir=data_dir)
    if not builder.is_prepared() and _downloads_for_real(builder):
        reason = unreachable_reason(builder.url_infos or ())
        if reason:
            raise download_error(name, reason, data_dir)
    try:
        return tfds.load(name, data_dir=data_dir, **load_options)
    except Exception as error:
        if _is_network_error(error):
            raise download_error(name, f"{type(error).__name__}: {error}", data_dir) from None
        raise
