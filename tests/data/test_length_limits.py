"""covering_length and share_longer: the length a share of a sample fits, and the share above it."""

import numpy as np
import pytest

from keras_attention.data.length_limits import LENGTH_PERCENTILE
from keras_attention.data.length_limits import covering_length
from keras_attention.data.length_limits import share_longer


def smallest_fitting(lengths, percentile):
    """The smallest of `lengths` that at least `percentile` percent of them are at most."""
    ordered = sorted(lengths)
    for length in ordered:
        if sum(other <= length for other in ordered) * 100 >= percentile * len(ordered):
            return max(1, length)
    raise AssertionError("unreachable: the longest fits every length")


def random_lengths(seed, size):
    rng = np.random.default_rng(seed)
    return [int(length) for length in rng.integers(0, 60, size)]


@pytest.mark.parametrize("percentile", [1, 10, 25, 50, 75, 90, 99, 99.9, 100])
@pytest.mark.parametrize("size", [1, 2, 5, 37, 400])
def test_at_least_the_percentile_fits_and_the_length_is_one_of_them(size, percentile):
    lengths = random_lengths(size, size)
    length = covering_length(lengths, percentile)
    assert isinstance(length, int)
    assert length in lengths or (length == 1 and min(lengths) < 1)
    fitting = sum(other <= length for other in lengths)
    assert fitting * 100 >= percentile * len(lengths)
    assert share_longer(lengths, length) <= 1 - percentile / 100 + 1e-12


def test_the_length_is_the_smallest_that_the_percentile_fits():
    # The docstring's rule: "the smallest length that `percentile` percent of `lengths` fit"
    # (numpy's method="inverted_cdf"), as its own example (1, 2, 3, 50) at 75 -> 3 says.
    wrong = []
    for size in (1, 2, 4, 5, 37, 400):
        lengths = random_lengths(100 + size, size)
        for percentile in (1, 10, 25, 50, 75, 90, 99, 99.9, 100):
            expected = smallest_fitting(lengths, percentile)
            inverted_cdf = np.percentile(lengths, percentile, method="inverted_cdf")
            assert expected == max(1, int(inverted_cdf))
            got = covering_length(lengths, percentile)
            if got != expected:
                wrong.append(f"{size} lengths at {percentile}%: expected {expected}, got {got}")
    assert not wrong, "\n".join(wrong)


def test_the_docstring_examples():
    assert covering_length([1, 2, 3, 50], 75) == 3
    assert covering_length([1, 2, 3, 50], 100) == 50
    assert covering_length([3, 4, 4, 5, 1000] * 200 + [6] * 999_000) == 6


def test_the_default_percentile_drops_the_rare_long_items():
    lengths = [10] * 9_995 + [500] * 5  # 0.05% are long
    assert LENGTH_PERCENTILE == 99.9
    assert covering_length(lengths) == 10
    assert covering_length(lengths + [500] * 20) == 500  # 0.25% are long: they must fit
    expected = int(np.percentile(lengths, LENGTH_PERCENTILE, method="higher"))
    assert covering_length(lengths) == expected == 10


def test_100_percent_is_the_longest_and_a_large_sample_agrees_with_numpy():
    lengths = random_lengths(7, 10_001)
    assert covering_length(lengths, 100) == max(lengths)
    # 10,000 gaps: every method of numpy.percentile picks the same rank here.
    for percentile in (50, 90, 99, 99.9):
        expected = int(np.percentile(lengths, percentile, method="higher"))
        assert covering_length(lengths, percentile) == expected


def test_edge_cases():
    assert covering_length([]) == 1
    assert covering_length([0, 0, 0]) == 1  # at least 1
    assert covering_length([7]) == 7
    assert covering_length(np.array([[2, 9], [4, 4]]), 100) == 9  # any shape, flattened
    assert covering_length((5, 5, 5, 5), 0.001) == 5


@pytest.mark.parametrize("percentile", [0, -5, 100.5, 1000])
def test_a_percentile_outside_0_100_is_refused(percentile):
    with pytest.raises(ValueError, match=r"`percentile` must be in \(0, 100\]") as error:
        covering_length([1, 2, 3], percentile)
    assert f"percentile={percentile!r}" in str(error.value)


def test_share_longer_counts_the_lengths_above_the_limit():
    lengths = random_lengths(3, 999)
    for limit in (-1, 0, 10, 30, 59, 60, 100):
        expected = sum(length > limit for length in lengths) / len(lengths)
        got = share_longer(lengths, limit)
        assert isinstance(got, float)
        assert got == pytest.approx(expected, abs=1e-12)
    assert share_longer([], 3) == 0.0
    assert share_longer([4, 4], 4) == 0.0
    assert share_longer([5], 4) == 1.0
