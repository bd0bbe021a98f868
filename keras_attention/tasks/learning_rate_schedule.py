"""The learning-rate schedule the training scripts share: linear warm-up, then cosine decay.

Example:

>>> from keras_attention.tasks.learning_rate_schedule import warmup_cosine_decay
>>> schedule = warmup_cosine_decay(1e-3, total_steps=100, warmup_steps=10)
>>> [round(float(schedule(step)), 6) for step in (0, 5, 10, 100)]
[0.0, 0.0005, 0.001, 0.0]
"""

import keras

from keras_attention.validation import check_positive_int


def warmup_cosine_decay(peak_learning_rate, total_steps, warmup_steps):
    """From 0 up to `peak_learning_rate` over `warmup_steps`, then cosine decay to 0.

    The decay reaches 0 at `total_steps` (keras counts the decay steps after
    the warm-up).

    Args:
        peak_learning_rate: the learning rate at the end of the warm-up.
        total_steps: optimizer steps of the whole run.
        warmup_steps: steps of linear warm-up.

    Returns:
        a `keras.optimizers.schedules.CosineDecay`.

    Example:

    >>> from keras_attention.tasks.learning_rate_schedule import warmup_cosine_decay
    >>> round(float(warmup_cosine_decay(2e-3, 40, 4)(22)), 6)  # half way through the decay
    0.001
    """
    check_positive_int("total_steps", total_steps)
    check_positive_int("warmup_steps", warmup_steps)
    return keras.optimizers.schedules.CosineDecay(
        0.0,
        decay_steps=max(1, total_steps - warmup_steps),
        warmup_target=peak_learning_rate,
        warmup_steps=warmup_steps,
    )
