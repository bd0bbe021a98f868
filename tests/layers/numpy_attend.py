"""The attention step after the scores, in NumPy, for tests: masked softmax then weighted sum."""

import numpy as np


def numpy_attend(scores, value, mask):
    """Masked softmax over keys and weighted sum; rows with no visible key are 0.

    scores (B, Tq, S), value (B, S, Dv), mask (B, Tq, S) bool ->
    outputs (B, Tq, Dv) and weights (B, Tq, S).
    """
    weights = np.zeros_like(scores)
    for b, t in np.ndindex(*scores.shape[:2]):
        visible = mask[b, t]
        if visible.any():
            exponentials = np.exp(scores[b, t, visible] - scores[b, t, visible].max())
            weights[b, t, visible] = exponentials / exponentials.sum()
    return np.einsum("bts,bsd->btd", weights, value), weights  # (B, Tq, Dv), (B, Tq, S)
