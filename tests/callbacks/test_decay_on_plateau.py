"""DecayOnPlateau: warm-up, hold while the loss improves, cosine decay to 0, stop."""

import io
import math

import keras
import numpy as np
import pytest

from keras_attention.callbacks.decay_on_plateau import DecayOnPlateau


def _expected_rate(step, peak, warmup, decay_start, decay_steps):
    # The published shape, written out independently: linear warm-up, constant,
    # then peak * (1 + cos(pi * t)) / 2 for t in [0, 1].
    if step < warmup:
        return peak * step / warmup
    if decay_start is None or step < decay_start:
        return peak
    t = min(1.0, (step - decay_start) / decay_steps)
    return peak * (1 + np.cos(np.pi * t)) / 2


def test_learning_rate_follows_warmup_hold_and_cosine_decay():
    schedule = DecayOnPlateau(peak_learning_rate=3e-3, warmup_steps=20, stream=False)
    for step in (0, 1, 19, 20, 21, 400):
        assert schedule.learning_rate_at(step) == pytest.approx(
            _expected_rate(step, 3e-3, 20, None, None), abs=1e-12
        )
    schedule.start_decay(at_step=400, decay_epochs=3, steps_per_epoch=50)
    assert schedule.decay_steps == 150
    for step in (399, 400, 450, 475, 549, 550, 900):
        assert schedule.learning_rate_at(step) == pytest.approx(
            _expected_rate(step, 3e-3, 20, 400, 150), abs=1e-12
        )
    assert schedule.learning_rate_at(550) == 0.0


class _Optimizer:
    def __init__(self):
        self.iterations = keras.Variable(0, dtype="int64")
        self.learning_rate = None


class _Model:
    def __init__(self):
        self.optimizer = _Optimizer()
        self.stop_training = False


def _run(schedule, losses, steps_per_epoch=10, epochs=100):
    """Feeds `losses` as validation losses of successive epochs; returns the epochs run."""
    model = _Model()
    schedule.set_model(model)
    schedule.set_params({"epochs": epochs, "steps": steps_per_epoch})
    rates = []
    for epoch, loss in enumerate(losses):
        for _ in range(steps_per_epoch):
            schedule.on_train_batch_begin(0)
            rates.append(model.optimizer.learning_rate)
            model.optimizer.iterations.assign_add(1)
        schedule.on_epoch_end(epoch, {"loss": loss, "val_loss": loss})
        if model.stop_training:
            return epoch + 1, rates
    return len(losses), rates


def test_decay_starts_after_patience_epochs_without_improvement_and_training_stops():
    stream = io.StringIO()
    schedule = DecayOnPlateau(
        peak_learning_rate=1e-3,
        warmup_steps=5,
        patience=3,
        min_delta=0.01,
        decay_fraction=0.2,
        stream=stream,
    )
    # Improves for 10 epochs (on a long plateau it still improves), then stalls:
    # 0.995 of the best is not a 1% improvement.
    losses = [1.0 * 0.9**e for e in range(10)] + [0.9**9 * 0.995] * 30
    epochs_run, rates = _run(schedule, losses)
    # No improvement in epochs 11, 12, 13: the decay starts after 13 epochs,
    # lasts max(2, round(0.2 * 13)) = 3 epochs, and training stops after 16.
    assert schedule.decay_start == 130 and schedule.decay_steps == 30
    assert epochs_run == 16
    assert max(rates[5:130]) == min(rates[5:130]) == 1e-3  # held at the peak
    assert rates[130] == 1e-3 and 0 < rates[-1] < 1e-5
    assert np.all(np.diff(rates[130:]) < 0)
    assert "has not improved by 1% for 3 epochs" in stream.getvalue()


def _three_epochs_patient(**arguments):
    """A schedule that peaks after one step and waits three epochs without improvement."""
    return DecayOnPlateau(
        peak_learning_rate=1e-3, warmup_steps=1, patience=3, stream=False, **arguments
    )


def test_tiny_absolute_improvements_near_zero_do_not_hold_the_peak():
    # A loss halving every epoch near 0 improves by far more than 1% each time,
    # but by less than 0.005 after 0.0049: only min_absolute_delta ends the hold.
    losses = [0.5, 0.1, 0.0049] + [0.0049 * 0.5**e for e in range(1, 20)]
    relative_only = _three_epochs_patient()
    _run(relative_only, losses)
    assert relative_only.decay_start is None
    with_floor = _three_epochs_patient(min_absolute_delta=0.005)
    _run(with_floor, losses)
    assert with_floor.decay_start == 60  # after the 3 epochs that follow the best, the 3rd


def test_no_plateau_decay_before_the_earliest_decay_step():
    # A flat loss from the start: without the floor the decay starts after the
    # 3 patient epochs; with it, only once step 200 is reached.
    flat = [1.0] * 40
    eager = _three_epochs_patient()
    _run(eager, flat)
    assert eager.decay_start == 40
    patient = _three_epochs_patient(earliest_decay_step=200)
    _run(patient, flat)
    assert patient.decay_start == 200


def test_an_improving_loss_keeps_the_peak_until_the_epochs_left_just_fit_the_decay():
    schedule = DecayOnPlateau(
        peak_learning_rate=2e-3, warmup_steps=10, patience=3, decay_fraction=0.2, stream=False
    )
    epochs_run, rates = _run(schedule, [0.8**e for e in range(20)], epochs=20)
    # After epoch 17, 3 epochs are left and a decay after 17 epochs takes
    # round(0.2 * 17) = 3: it starts there and ends with the last epoch.
    assert schedule.decay_start == 170 and schedule.decay_steps == 30
    assert epochs_run == 20 and rates[169] == 2e-3
    assert rates[-1] == pytest.approx(_expected_rate(199, 2e-3, 10, 170, 30))
    assert "3 of the 20 epochs left" in schedule.decay_reason


def test_no_decay_before_the_warmup_ends_and_nan_losses_do_not_count():
    schedule = DecayOnPlateau(peak_learning_rate=1e-3, warmup_steps=100, patience=2, stream=False)
    epochs_run, _ = _run(schedule, [1.0, 1.0, 1.0, math.nan, 1.0, 1.0], steps_per_epoch=10)
    assert schedule.decay_start is None and epochs_run == 6


def test_fit_sets_the_optimizer_learning_rate_every_step():
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.0), loss="mse")
    x = np.random.default_rng(0).normal(size=(32, 3)).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    schedule = DecayOnPlateau(peak_learning_rate=0.05, warmup_steps=4, patience=2, stream=False)
    seen = []

    class Record(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            seen.append(float(keras.ops.convert_to_numpy(self.model.optimizer.learning_rate)))

    history = model.fit(x, y, batch_size=8, epochs=6, callbacks=[schedule, Record()], verbose=0)
    assert seen[:5] == pytest.approx([0.0, 0.0125, 0.025, 0.0375, 0.05])
    assert history.history["loss"][-1] < history.history["loss"][0]
    # The epochs left forced the decay: the last step's rate is near 0.
    assert schedule.decay_start is not None and seen[-1] < 0.01


def test_nothing_starts_after_the_last_epoch():
    # A run of one epoch, or one whose warm-up ends with its last epoch: no
    # step is left to decay, so no decay is started or announced.
    for epochs, warmup_steps in ((1, 1), (3, 30)):
        stream = io.StringIO()
        schedule = DecayOnPlateau(
            peak_learning_rate=1e-3, warmup_steps=warmup_steps, patience=1, stream=stream
        )
        epochs_run, _ = _run(schedule, [1.0] * epochs, epochs=epochs)
        assert (epochs_run, schedule.decay_start, stream.getvalue()) == (epochs, None, "")


def test_the_decay_line_starts_a_line_of_its_own_under_a_progress_bar(capsys):
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.0), loss="mse")
    x = np.ones((16, 3), "float32")
    schedule = DecayOnPlateau(peak_learning_rate=0.01, warmup_steps=1, patience=5)
    model.fit(x, x[:, :1], batch_size=8, epochs=3, callbacks=[schedule], verbose=1)
    lines = capsys.readouterr().out.splitlines()
    announced = [line for line in lines if "learning rate:" in line]
    assert announced and all(line.startswith("learning rate:") for line in announced)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(peak_learning_rate=0.0), "peak_learning_rate=0.0"),
        (dict(peak_learning_rate=float("nan")), "peak_learning_rate=nan"),
        (dict(warmup_steps=-1), "warmup_steps=-1"),
        (dict(patience=0), "patience=0"),
        (dict(min_delta=1.5), "min_delta=1.5"),
        (dict(decay_fraction=-0.1), "decay_fraction=-0.1"),
        (dict(min_absolute_delta=-1.0), "min_absolute_delta=-1.0"),
        (dict(earliest_decay_step=-5), "earliest_decay_step=-5"),
    ],
)
def test_bad_arguments_name_themselves(kwargs, message):
    arguments = dict(peak_learning_rate=1e-3, warmup_steps=10) | kwargs
    with pytest.raises(ValueError, match=message):
        DecayOnPlateau(**arguments)
