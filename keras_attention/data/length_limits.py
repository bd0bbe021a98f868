"""Sequence lengths chosen from a sample with a percentile, as fairseq and tensor2tensor bound them.

The longest sentence of a crawled corpus may be a thousand tokens: set as
the model's length, it would pad every batch and size the position table.
A run measures a sample of its training items instead (every item of a
small data set) and takes the length that `LENGTH_PERCENTILE` percent of them
fit; the few longer items are dropped or cut, and counted.

Example:

>>> from keras_attention.data.length_limits import covering_length
>>> covering_length([3, 4, 4, 5, 1000] * 200 + [6] * 999_000)
6
"""

import numpy as np

# Share of the sampled items a derived length must fit, in percent.
LENGTH_PERCENTILE = 99.9


def covering_length(lengths, percentile=LENGTH_PERCENTILE):
    """The smallest length that `percentile` percent of `lengths` fit: one of them, at least 1.

    Args:
        lengths: the lengths of a sample of items (a sequence of ints).
        percentile: the share of the items it must fit, in percent (100:
            the longest).

    Returns:
        int.

    Example:

    >>> from keras_attention.data.length_limits import covering_length
    >>> covering_length([1, 2, 3, 50], 75), covering_length([1, 2, 3, 50], 100), covering_length([])
    (3, 50, 1)
    """
    if not 0 < percentile <= 100:
        raise ValueError(f"`percentile` must be in (0, 100]. Received: percentile={percentile!r}")
    lengths = np.asarray(lengths, dtype=np.int64).reshape(-1)
    if lengths.size == 0:
        return 1
    # The inverted empirical distribution: the smallest length at least
    # `percentile` percent of the lengths are at most.
    return max(1, int(np.percentile(lengths, percentile, method="inverted_cdf")))


def share_longer(lengths, limit):
    """The share of `lengths` above `limit`, a float in [0, 1] (0 for no lengths).

    Example:

    >>> from keras_attention.data.length_limits import share_longer
    >>> share_longer([1, 2, 3, 50], 3)
    0.25
    """
    lengths = np.asarray(lengths, dtype=np.int64).reshape(-1)
    return float(np.mean(lengths > limit)) if lengths.size else 0.0
