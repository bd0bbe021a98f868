"""The data and the scoring of benchmarks/alibi_extrapolation.py (no training)."""

import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import alibi_extrapolation  # noqa: E402


def test_sequences_repeat_a_pattern_of_distinct_tokens():
    rng = np.random.default_rng(0)
    sequences, periods = alibi_extrapolation.periodic_sequences(rng, 50, 20, 16, (3, 8))
    assert sequences.shape == (50, 21) and sequences.dtype == np.int32
    assert periods.min() >= 3 and periods.max() <= 8
    for sequence, period in zip(sequences, periods):
        assert len(set(sequence[:period])) == period
        np.testing.assert_array_equal(sequence[period:], sequence[:-period])


def test_only_targets_after_a_whole_period_are_scored():
    scored = alibi_extrapolation.determined_positions(np.array([3, 5]), 8)
    np.testing.assert_array_equal(scored[0], [0, 0, 0, 1, 1, 1, 1, 1])
    np.testing.assert_array_equal(scored[1], [0, 0, 0, 0, 0, 1, 1, 1])


class _Oracle:
    """Predicts the token `period` steps back, as a model that solved the task would."""

    def __init__(self, periods):
        self.periods = periods

    def __call__(self, inputs):
        logits = np.zeros(inputs.shape + (16,), "float32")
        for row, period in enumerate(self.periods):
            for t in range(inputs.shape[1]):
                source = t + 1 - period
                if source >= 0:
                    logits[row, t, inputs[row, source]] = 10.0
        return logits


def test_score_of_a_perfect_predictor_is_full_accuracy():
    rng = np.random.default_rng(1)
    sequences, periods = alibi_extrapolation.periodic_sequences(rng, 8, 30, 16, (3, 8))
    result = alibi_extrapolation.score(_Oracle(periods), sequences, periods)
    assert result["ran"] and result["accuracy"] == 1.0
    assert result["loss"] < 1e-3
    assert result["scored_tokens"] == int((30 - periods).sum())
