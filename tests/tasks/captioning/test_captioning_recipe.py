"""The captioner's image size, batch size, epochs and schedule, derived from the data."""

import pytest

from keras_attention.callbacks.decay_on_plateau import DecayOnPlateau
from keras_attention.tasks.captioning.flags import CAPTIONER_DEFAULTS
from keras_attention.tasks.captioning.recipe import captioning_training_recipe
from keras_attention.tasks.captioning.recipe import derived_image_size


def test_recipe_keeps_the_built_in_defaults():
    # 4000 built-in captions: batches of 64, 62 steps an epoch, at most 81 epochs
    # (5000 steps); the schedule stops sooner once the validation loss stalls.
    recipes = {
        name: captioning_training_recipe(
            4000, train_steps=CAPTIONER_DEFAULTS[name]["train_steps"], learning_rate=2e-3
        )
        for name in CAPTIONER_DEFAULTS
    }
    sat = recipes["show_attend_tell"]
    assert (sat.batch_size, sat.steps_per_epoch) == (64, 62)
    assert (sat.epochs, recipes["transformer"].epochs) == (81, 81)
    assert sat.warmup_steps == 150 and sat.patience == 5


def test_recipe_is_counted_in_steps_from_the_number_of_examples():
    recipe = captioning_training_recipe(2400, train_steps=870, learning_rate=1e-3)
    assert (recipe.batch_size, recipe.steps_per_epoch, recipe.epochs) == (64, 37, 24)
    # Warm-up: 10% of the steps, at most 150; patience: 250 steps in whole epochs.
    assert (recipe.total_steps, recipe.warmup_steps, recipe.patience) == (888, 89, 7)
    assert recipe.earliest_decay_step == 888  # the whole run: shorter than 2000 steps
    assert set(recipe.reasons) == {"batch_size", "steps_per_epoch", "epochs", "learning_rate"}
    assert recipe.reasons["steps_per_epoch"] == (
        "one pass over the 2400 training captions in whole batches of 64"
    )
    # Few examples: smaller batches, still whole ones, more epochs for the same steps.
    small = captioning_training_recipe(300, train_steps=870, learning_rate=1e-3)
    assert (small.batch_size, small.steps_per_epoch, small.epochs) == (8, 37, 24)
    tiny = captioning_training_recipe(5, train_steps=10, learning_rate=1e-3)
    assert (tiny.batch_size, tiny.steps_per_epoch, tiny.epochs) == (8, 1, 10)
    # What is given is kept.
    given = captioning_training_recipe(
        2400, train_steps=870, learning_rate=1e-3, batch_size=100, epochs=3
    )
    assert (given.batch_size, given.epochs, given.total_steps) == (100, 3, 72)
    assert given.reasons["batch_size"] == "given" and given.reasons["epochs"].startswith("given")


def test_each_captioner_holds_its_peak_learning_rate_for_its_own_least_steps():
    # The ViT captioner leaves its first plateau later than the CNN captioners: no stall
    # of the validation loss starts its decay before 4000 steps, theirs after 2000.
    holds = {}
    for name, defaults in CAPTIONER_DEFAULTS.items():
        recipe = captioning_training_recipe(
            4000,
            train_steps=defaults["train_steps"],
            learning_rate=2e-3,
            earliest_decay_step=defaults["earliest_decay_step"],
        )
        holds[name] = recipe.earliest_decay_step
        assert f"held for at least {holds[name]} steps" in recipe.reasons["learning_rate"]
        schedule = recipe.learning_rate_schedule()
        assert schedule.earliest_decay_step == holds[name]
    assert holds == {"show_attend_tell": 2000, "transformer": 2000, "vit": 4000}
    # Never later than the run itself: a short run decays within its own steps.
    short = captioning_training_recipe(2400, 870, 1e-3, earliest_decay_step=4000)
    assert short.earliest_decay_step == short.total_steps == 888


def test_recipe_numbers_follow_their_rules():
    # Independent of the implementation: the rules of the docstring, for many sizes.
    for count in (1, 7, 239, 240, 241, 480, 1919, 1920, 100_000):
        recipe = captioning_training_recipe(count, train_steps=3000, learning_rate=1e-3)
        fits = [b for b in (64, 32, 16, 8) if count // b >= 30]
        assert recipe.batch_size == (fits[0] if fits else 8)
        assert recipe.steps_per_epoch == max(1, count // recipe.batch_size)
        assert recipe.epochs == max(1, round(3000 / recipe.steps_per_epoch))
        assert recipe.total_steps == recipe.epochs * recipe.steps_per_epoch
        assert recipe.warmup_steps == min(150, max(1, round(0.1 * recipe.total_steps)))
        # The fewest whole epochs (at least 2) that cover 250 steps.
        assert recipe.patience * recipe.steps_per_epoch >= 250 or recipe.patience == 2
        assert (recipe.patience - 1) * recipe.steps_per_epoch < 250 or recipe.patience == 2


def test_an_unknown_or_bad_count_is_refused():
    # An unknown dataset length (cardinality -2) can no longer make a schedule of 1 step.
    with pytest.raises(
        ValueError, match=r"`num_examples` must be a positive int .* Received: num_examples=-2"
    ):
        captioning_training_recipe(-2, train_steps=870, learning_rate=1e-3)
    with pytest.raises(ValueError, match="num_examples=True"):
        captioning_training_recipe(True, train_steps=870, learning_rate=1e-3)
    with pytest.raises(ValueError, match="batch_size=0"):
        captioning_training_recipe(10, train_steps=870, learning_rate=1e-3, batch_size=0)
    with pytest.raises(ValueError, match="learning_rate=0"):
        captioning_training_recipe(10, train_steps=870, learning_rate=0)
    with pytest.raises(ValueError, match="earliest_decay_step=0"):
        captioning_training_recipe(10, 870, 1e-3, earliest_decay_step=0)


def test_summary_lines_say_each_choice_and_why():
    recipe = captioning_training_recipe(32, train_steps=5000, learning_rate=2e-3, epochs=2)
    lines = recipe.summary_lines()
    assert lines[0].startswith("batch size 8: the largest power of two")
    assert lines[0].endswith("the smallest, 8: the 32 give 4 steps an epoch")
    # Two epochs of 4 steps: no stall of 63 epochs can stop the run sooner.
    assert lines[1] == "epochs 2: given"
    assert lines[2].startswith("learning rate 0.002: linear warm-up 0 -> 0.002 over 1 steps")
    assert "held to the end of epoch 1, then cosine decay to 0 over the last 1 epoch" in lines[2]
    longer = captioning_training_recipe(4000, train_steps=5000, learning_rate=2e-3, epochs=90)
    assert longer.reasons["epochs"] == (
        "given (the most; fewer when the validation loss stops improving)"
    )
    assert "within 5 epochs, then cosine decay to 0 and stop" in longer.reasons["learning_rate"]


@pytest.mark.parametrize(
    "count, epochs, steps_per_epoch",
    [
        (48, 2, None),
        (48, None, None),
        (32, 1, None),
        (4000, None, None),
        (4000, 10, None),
        (2400, None, None),
        (4000, None, 100),
        (300, 30, None),
    ],
)
def test_reasons_say_what_the_run_will_do(count, epochs, steps_per_epoch):
    recipe = captioning_training_recipe(
        count, 5000, 2e-3, epochs=epochs, steps_per_epoch=steps_per_epoch
    )
    # The steps an epoch the batch size gives are the steps fit runs: no other count.
    said = recipe.reasons["batch_size"]
    assert f" {recipe.steps_per_epoch} an epoch" in said or said.endswith(
        f" {recipe.steps_per_epoch} steps an epoch"
    )
    if count // recipe.batch_size < 30:
        assert f"the smallest, 8: the {count} give" in said
    # The schedule, driven epoch by epoch, decays when the reason says it does.
    reason = recipe.reasons["learning_rate"]
    for stalled in (False, True):
        decay_after = _epoch_where_the_decay_starts(recipe, stalled)
        if "held to the end of epoch" in reason:
            assert f"held to the end of epoch {decay_after}," in reason
            assert not recipe.reasons["epochs"].endswith("sooner")
        elif "held to the end" in reason:
            assert decay_after is None  # nothing left to decay: none starts
        else:
            last = recipe.epochs - _epoch_where_the_decay_starts(recipe, False)
            assert f"over the last {last} epoch" in reason
            if stalled:
                assert decay_after < recipe.epochs - last  # a stall stops the run sooner
            assert "fewer when the validation loss stops improving" in recipe.reasons["epochs"]
    assert "within" not in reason or recipe.patience < recipe.epochs


def _epoch_where_the_decay_starts(recipe, stalled):
    """The epoch after which the recipe's schedule starts its decay, its loss stalled or not."""

    class Optimizer:
        iterations = 0

    class Model:
        optimizer = Optimizer()

    schedule = recipe.learning_rate_schedule()
    schedule.stream = False
    schedule.set_model(Model())
    schedule.set_params({"epochs": recipe.epochs, "steps": recipe.steps_per_epoch})
    for epoch in range(recipe.epochs):
        Optimizer.iterations = (epoch + 1) * recipe.steps_per_epoch
        loss = 2.0 if stalled else 1e9 * 0.98**epoch  # 2% better each epoch
        schedule.on_epoch_end(epoch, {"val_loss": loss})
        if schedule.decay_start is not None:
            return schedule.decay_start // recipe.steps_per_epoch
    return None


def test_schedule_is_a_decay_on_plateau_callback_of_the_recipe():
    recipe = captioning_training_recipe(2400, train_steps=870, learning_rate=2e-3)
    schedule = recipe.learning_rate_schedule()
    assert isinstance(schedule, DecayOnPlateau)
    assert (schedule.peak_learning_rate, schedule.warmup_steps, schedule.patience) == (2e-3, 89, 7)
    assert schedule.learning_rate_at(0) == 0.0 and schedule.learning_rate_at(89) == 2e-3
    assert schedule.learning_rate_at(44) == pytest.approx(2e-3 * 44 / 89)


def test_image_size_keeps_the_aspect_ratio_on_the_stride():
    size, reason = derived_image_size((32, 96), "small_cnn")
    assert size == (32, 96) and "8x24 feature grid" in reason
    assert reason.startswith("median training image 32x96, aspect ratio kept")
    assert derived_image_size((48, 48), "small_cnn")[0] == (48, 48)
    assert derived_image_size((31, 94), "small_cnn")[0] == (32, 96)  # multiples of 4
    # Large photos: the longer side scaled to 96, the ratio kept.
    assert derived_image_size((375, 500), "small_cnn")[0] == (72, 96)
    assert derived_image_size((375, 500), "MobileNetV2")[0] == (160, 224)
    assert derived_image_size((5, 200), "small_cnn")[0] == (8, 96)  # at least two cells a side
    size, reason = derived_image_size((48, 48), "small_cnn", "built-in scenes drawn at")
    assert reason.startswith("built-in scenes drawn at 48x48, aspect ratio kept")
    with pytest.raises(ValueError, match=r"median_size\[0\]"):
        derived_image_size((0, 48), "small_cnn")
