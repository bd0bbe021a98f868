"""A learning-rate schedule that decides when to decay from the validation loss.

Warm-up, then the peak learning rate held as long as the validation loss
improves, then a cosine decay to 0, after which training stops: the
warm-up-stable-decay shape (Hu et al. 2024, "MiniCPM",
https://arxiv.org/abs/2404.06395, section 4), with the start of the decay
chosen by a plateau of the monitored loss instead of fixed in advance.
Attention models often sit on a plateau for a data-dependent number of
steps before they learn where to look; a schedule fixed in steps either
wastes time on easy data or decays before the model has learned on hard
data.
"""

import math
import sys

import keras

from keras_attention.callbacks.epoch_end_line import epoch_end_line
from keras_attention.validation import check_finite_number
from keras_attention.validation import check_non_negative_int
from keras_attention.validation import check_positive_int
from keras_attention.validation import check_rate


class DecayOnPlateau(keras.callbacks.Callback):
    """Warm up, hold the peak learning rate until the loss stalls, then decay and stop.

    The learning rate follows the optimizer's step count:

    - steps `[0, warmup_steps)`: linear from 0 to `peak_learning_rate`;
    - then `peak_learning_rate`, until `monitor` has not improved by the
      fraction `min_delta` of its best value (and by `min_absolute_delta`)
      for `patience` epochs, but not before step `earliest_decay_step`;
    - then a cosine decay to 0 over `decay_fraction` of the epochs trained
      so far (at least `min_decay_epochs`), and training stops at its end.

    The decay also starts when the epochs left (of `fit`'s `epochs`) are just
    enough for it, so that every run ends with the learning rate at 0. The
    optimizer must have a plain (float) learning rate, not a schedule: this
    callback sets it before every batch. One line is printed when the decay
    starts, with the reason. After a run is resumed from a backup, the
    warm-up and any decay follow the restored step count; the plateau count
    starts again.

    Args:
        peak_learning_rate: the learning rate held between warm-up and decay.
        warmup_steps: optimizer steps of linear warm-up (>= 0).
        patience: epochs without improvement that start the decay.
        min_delta: the fraction of the best value an epoch must improve on
            to count as an improvement.
        min_absolute_delta: the least improvement that counts, in the units
            of `monitor`: near a loss of 0, relative improvements of noise
            would otherwise hold the peak learning rate for ever.
        earliest_decay_step: no plateau starts the decay before this
            optimizer step: early in training a flat loss is often the
            plateau before the model learns where to look, not the end.
        decay_fraction: length of the decay as a fraction of the epochs
            trained before it.
        min_decay_epochs: the shortest decay, in epochs.
        monitor: the log to watch: "val_loss" (default), falling back to
            "loss" when there is no validation data.
        stream: where the decay line is printed (default None: standard output;
            `False`: print nothing).

    Example:

    >>> from keras_attention.callbacks.decay_on_plateau import DecayOnPlateau
    >>> schedule = DecayOnPlateau(peak_learning_rate=1e-3, warmup_steps=10, patience=2,
    ...                           stream=False)
    >>> schedule.learning_rate_at(5), schedule.learning_rate_at(500)
    (0.0005, 0.001)
    >>> schedule.start_decay(at_step=500, decay_epochs=4, steps_per_epoch=10)
    >>> round(schedule.learning_rate_at(520), 6), schedule.learning_rate_at(540)
    (0.0005, 0.0)
    """

    def __init__(
        self,
        peak_learning_rate,
        warmup_steps,
        patience=3,
        min_delta=0.01,
        min_absolute_delta=0.0,
        earliest_decay_step=0,
        decay_fraction=0.2,
        min_decay_epochs=2,
        monitor="val_loss",
        stream=None,
    ):
        """Checks the arguments (see the class docstring); no decay is scheduled yet."""
        super().__init__()
        check_finite_number("peak_learning_rate", peak_learning_rate, positive=True)
        check_finite_number("min_absolute_delta", min_absolute_delta)
        check_non_negative_int("warmup_steps", warmup_steps)
        check_non_negative_int("earliest_decay_step", earliest_decay_step)
        check_positive_int("patience", patience)
        check_positive_int("min_decay_epochs", min_decay_epochs)
        check_rate("min_delta", min_delta)
        check_rate("decay_fraction", decay_fraction)
        self.peak_learning_rate = float(peak_learning_rate)
        self.warmup_steps = warmup_steps
        self.earliest_decay_step = earliest_decay_step
        self.patience = patience
        self.min_delta = float(min_delta)
        self.min_absolute_delta = float(min_absolute_delta)
        self.decay_fraction = float(decay_fraction)
        self.min_decay_epochs = min_decay_epochs
        self.monitor = monitor
        self.stream = stream
        self.decay_start = None  # optimizer step where the decay began
        self.decay_steps = None
        self.decay_reason = None
        self._best = math.inf
        self._epochs_without_improvement = 0

    def learning_rate_at(self, step):
        """The learning rate of optimizer step `step` (0-based)."""
        if step < self.warmup_steps:
            return self.peak_learning_rate * step / self.warmup_steps
        if self.decay_start is None or step < self.decay_start:
            return self.peak_learning_rate
        progress = min(1.0, (step - self.decay_start) / self.decay_steps)
        return self.peak_learning_rate * 0.5 * (1.0 + math.cos(math.pi * progress))

    def decay_epochs_after(self, epochs_trained):
        """Length of a decay that starts after `epochs_trained` epochs, in epochs."""
        return max(self.min_decay_epochs, round(self.decay_fraction * epochs_trained))

    def start_decay(self, at_step, decay_epochs, steps_per_epoch, reason="requested"):
        """Begins a cosine decay to 0 over `decay_epochs` epochs at optimizer step `at_step`."""
        self.decay_start = int(at_step)
        self.decay_steps = max(1, int(decay_epochs * steps_per_epoch))
        self.decay_reason = reason
        if self.stream is not False:
            print(
                epoch_end_line(
                    self.params,
                    f"learning rate: {reason}; cosine decay to 0 over {decay_epochs} epochs "
                    f"({self.decay_steps} steps), then training stops",
                ),
                file=self.stream or sys.stdout,
                flush=True,
            )

    def _step(self):
        return int(keras.ops.convert_to_numpy(self.model.optimizer.iterations))

    def on_train_batch_begin(self, batch, logs=None):
        self.model.optimizer.learning_rate = self.learning_rate_at(self._step())

    def on_epoch_end(self, epoch, logs=None):
        """Stops after a finished decay, or starts one on a plateau or near the last epoch.

        The monitored value improves when it falls by more than `min_delta` of
        the best (and `min_absolute_delta`); `patience` epochs without that,
        past warm-up and `earliest_decay_step`, start the decay, as does
        reaching the epochs the decay needs at the end of training.
        """
        logs = logs or {}
        step = self._step()
        if self.decay_start is not None:
            if step >= self.decay_start + self.decay_steps:
                self.model.stop_training = True
            return
        value = logs.get(self.monitor, logs.get("loss"))
        if value is not None and math.isfinite(value):
            needed = max(self.min_delta * self._best, self.min_absolute_delta)
            if not math.isfinite(self._best) or value < self._best - needed:
                self._best = value
                self._epochs_without_improvement = 0
            else:
                self._epochs_without_improvement += 1
        epochs_trained = epoch + 1
        steps_per_epoch = (self.params or {}).get("steps") or max(1, step // epochs_trained)
        decay_epochs = self.decay_epochs_after(epochs_trained)
        epochs_left = (self.params or {}).get("epochs", math.inf) - epochs_trained
        if step < self.warmup_steps or epochs_left <= 0:
            return  # never decay before the peak is reached, nor after the last epoch
        if self._epochs_without_improvement >= self.patience and step >= self.earliest_decay_step:
            self.start_decay(
                step,
                decay_epochs,
                steps_per_epoch,
                f"{self.monitor} has not improved by {self.min_delta:.0%} for "
                f"{self.patience} epochs (best {self._best:.4f}) after {epochs_trained} epochs",
            )
        elif epochs_left <= decay_epochs:
            # The decay fits in the epochs left: end it with them.
            self.start_decay(
                step,
                epochs_left,
                steps_per_epoch,
                f"{epochs_left} of the {self.params['epochs']} epochs left",
            )
