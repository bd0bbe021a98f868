"""Held-out splits for data sets without their own: a seeded draw, or every other item.

`seeded_split` draws the validation and test items of a data set that has
none, the same for the same items and seed; `every_other` halves a data set's
own held-out split into validation and test (COCO's val2014, an image
folder's `val/` without a `test/`), the same whatever the seed, so that every
run reports on the same test images.

Example:

>>> from keras_attention.data.held_out_splits import every_other, seeded_split
>>> every_other(["d.jpg", "a.jpg", "c.jpg", "b.jpg"])
(['a.jpg', 'c.jpg'], ['b.jpg', 'd.jpg'])
>>> [len(part) for part in seeded_split(list(range(10)), 0.2, 0.1, seed=0)]
[7, 2, 1]
"""

import numpy as np


def split_counts(count, validation_fraction, test_fraction):
    """`(train, validation, test)` sizes; a non-zero fraction gets at least one item of 3+.

    Example:

    >>> from keras_attention.data.held_out_splits import split_counts
    >>> split_counts(10, 0.1, 0.1), split_counts(3, 0.01, 0.01), split_counts(5, 0.0, 0.0)
    ((8, 1, 1), (1, 1, 1), (5, 0, 0))
    """
    num_validation = int(round(count * validation_fraction))
    num_test = int(round(count * test_fraction))
    if count >= 3:
        num_validation = max(num_validation, 1 if validation_fraction > 0 else 0)
        num_test = max(num_test, 1 if test_fraction > 0 else 0)
    return count - num_validation - num_test, num_validation, num_test


def seeded_split(items, validation_fraction, test_fraction, seed):
    """`(train, validation, test)` lists: a fixed permutation of `sorted(items)`, cut in three.

    Args:
        items: sortable, distinct items (file paths).
        validation_fraction, test_fraction: shares of the held-out splits.
        seed: the permutation's seed.

    Returns:
        three lists; train comes in the permuted order (shuffled), the
        held-out ones too.

    Example:

    >>> from keras_attention.data.held_out_splits import seeded_split
    >>> first = seeded_split(["a", "b", "c"], 0.34, 0.33, seed=3)
    >>> first == seeded_split(["c", "b", "a"], 0.34, 0.33, seed=3)  # the order given is ignored
    True
    """
    ordered = sorted(items)
    order = np.random.default_rng(seed).permutation(len(ordered))
    shuffled = [ordered[i] for i in order]
    num_train, num_validation, _ = split_counts(len(ordered), validation_fraction, test_fraction)
    return (
        shuffled[:num_train],
        shuffled[num_train : num_train + num_validation],
        shuffled[num_train + num_validation :],
    )


def every_other(items):
    """`(first, second)`: `sorted(items)` dealt alternately, the first getting the extra one.

    Example:

    >>> from keras_attention.data.held_out_splits import every_other
    >>> every_other([5, 1, 4, 2, 3])
    ([1, 3, 5], [2, 4])
    """
    ordered = sorted(items)
    return ordered[0::2], ordered[1::2]
