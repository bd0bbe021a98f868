"""The shared warm-up and cosine schedule, against its closed form."""

import math

import numpy as np
import pytest

from keras_attention.tasks.learning_rate_schedule import warmup_cosine_decay


@pytest.mark.parametrize("total_steps, warmup_steps", [(100, 10), (7, 1), (1, 1)])
def test_warmup_then_cosine_decay_as_its_closed_form(total_steps, warmup_steps):
    schedule = warmup_cosine_decay(0.5, total_steps, warmup_steps)
    decay_steps = max(1, total_steps - warmup_steps)
    for step in range(total_steps + 1):
        if step < warmup_steps:
            expected = 0.5 * step / warmup_steps
        else:
            expected = 0.25 * (
                1 + math.cos(math.pi * min(step - warmup_steps, decay_steps) / decay_steps)
            )
        np.testing.assert_allclose(float(schedule(step)), expected, atol=1e-7)


def test_bad_step_counts_are_named():
    with pytest.raises(ValueError, match="total_steps"):
        warmup_cosine_decay(1e-3, 0, 1)
    with pytest.raises(ValueError, match="warmup_steps"):
        warmup_cosine_decay(1e-3, 10, 0)
