"""A callback that says, once and clearly, when training is not learning."""

import math
import sys

import keras

from keras_attention.callbacks.epoch_end_line import epoch_end_line
from keras_attention.validation import check_finite_number
from keras_attention.validation import check_positive_int

# Epochs of evidence before the monitor judges, whatever the patience.
MIN_EPOCHS = 2


class LearningMonitor(keras.callbacks.Callback):
    """Warns when the monitored loss stays at a trivial baseline, or diverges.

    After `patience` epochs (and never after fewer than `MIN_EPOCHS`: one
    epoch, often spent warming up, says nothing about learning), if the best
    value of `monitor` is not clearly below `baseline` (by the fraction
    `margin`), the model is doing no better than one that ignores its
    inputs: the monitor prints one warning with the numbers and what to try.
    If the loss becomes NaN or infinite, or grows past `divergence_factor`
    times its first value, it prints one warning that training diverges.
    It never stops training; `warnings` keeps what was said. Each warning is
    a line of its own: under `fit(verbose=1)` it starts on a new line, as
    keras' own callbacks do, not at the end of the progress bar.

    Args:
        baseline: the loss a trivial model reaches, e.g.
            `prior_cross_entropy` of the training labels (the unigram loss
            for captions and translations, the class prior for classifiers).
        monitor: the log to watch: "val_loss" (default), falling back to
            "loss" when there is no validation data.
        patience: epochs to wait before judging (at least `MIN_EPOCHS` are
            waited for).
        margin: how far below the baseline counts as learning (0.05: 5%).
        divergence_factor: a loss this many times the first epoch's counts
            as diverging.
        hints: text of what to try, added to the not-learning warning.
        stream: where warnings are printed (default: standard error).

    Example:

    >>> import io
    >>> from keras_attention.callbacks.learning_monitor import LearningMonitor
    >>> stream = io.StringIO()
    >>> monitor = LearningMonitor(baseline=2.3, patience=2, stream=stream)
    >>> for epoch, loss in enumerate([2.31, 2.30, 2.30]):
    ...     monitor.on_epoch_end(epoch, {"loss": loss, "val_loss": loss})
    >>> print(stream.getvalue().split(":")[0])
    WARNING
    >>> len(monitor.warnings)
    1
    """

    def __init__(
        self,
        baseline,
        monitor="val_loss",
        patience=3,
        margin=0.05,
        divergence_factor=3.0,
        hints=None,
        stream=None,
    ):
        """Checks the arguments (see the class docstring) and starts with nothing seen."""
        super().__init__()
        check_finite_number("baseline", baseline, positive=True)
        check_positive_int("patience", patience)
        if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not 0 <= margin < 1:
            raise ValueError(f"`margin` must be a number in [0, 1). Received: margin={margin!r}")
        if (
            isinstance(divergence_factor, bool)
            or not isinstance(divergence_factor, (int, float))
            or divergence_factor <= 1
        ):
            raise ValueError(
                "`divergence_factor` must be a number above 1. "
                f"Received: divergence_factor={divergence_factor!r}"
            )
        self.baseline = float(baseline)
        self.monitor = monitor
        self.patience = patience
        self.margin = float(margin)
        self.divergence_factor = float(divergence_factor)
        self.hints = hints
        self.stream = stream
        self.warnings = []
        self._first_loss = None
        self._best = math.inf
        self._epochs_seen = 0
        self._warned_stall = False
        self._warned_divergence = False

    def on_epoch_end(self, epoch, logs=None):
        """Warns once on divergence, and once after `patience` epochs (at least
        `MIN_EPOCHS`) near the baseline."""
        logs = logs or {}
        name = self.monitor if self.monitor in logs else "loss"
        if name not in logs:
            return
        value = float(logs[name])
        self._epochs_seen += 1
        if self._first_loss is None:
            self._first_loss = value
        diverging = not math.isfinite(value) or (
            self._first_loss > 0 and value > self.divergence_factor * self._first_loss
        )
        if diverging and not self._warned_divergence:
            self._warned_divergence = True
            self._warn(
                f"training diverges: {name} is {value:.4g} at epoch {epoch + 1} (it was "
                f"{self._first_loss:.4g} after the first epoch). Try a lower --learning-rate, "
                "a longer warm-up, or float32 instead of mixed precision."
            )
        if math.isfinite(value):
            self._best = min(self._best, value)
        learned = self._best < self.baseline * (1 - self.margin)
        judged = self._epochs_seen >= max(self.patience, MIN_EPOCHS)
        if judged and not learned and not self._warned_stall:
            self._warned_stall = True
            self._warn(
                f"training is not learning: after {self._epochs_seen} epochs the best {name} is "
                f"{self._best:.4f}, not below {self.baseline:.4f}, the loss of a model that "
                "ignores its inputs and predicts label frequencies. "
                + (
                    self.hints
                    or "Try another --learning-rate, more epochs or a larger model, "
                    "and check that the inputs and labels match."
                )
            )

    def _warn(self, message):
        self.warnings.append(message)
        print(
            epoch_end_line(self.params, f"WARNING: {message}"),
            file=self.stream or sys.stderr,
            flush=True,
        )
