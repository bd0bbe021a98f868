"""Training choices for an image captioner, derived from the data set.

The built-in scenes are 48 x 48 pixels and 4,000 captions; a user's folder
may hold 16 x 48 glyph strips or 500 x 375 photographs, 40 captions or
400,000. `derived_image_size` turns the median training image into the size
the model sees (its aspect ratio kept, its sides on the CNN's stride), and
`captioning_training_recipe` turns the number of training captions into a
batch size, the most epochs and a learning-rate schedule counted in
optimizer steps: a linear warm-up, the peak learning rate held while the
validation loss improves, then a cosine decay to 0 (`DecayOnPlateau`,
which `CaptioningTrainingRecipe.learning_rate_schedule` builds). Every
choice comes with the reason it was made, and any value the user set is
kept.

Example:

>>> from keras_attention.tasks.captioning.recipe import (
...     captioning_training_recipe, derived_image_size)
>>> derived_image_size((32, 96), "small_cnn")[0]
(32, 96)
>>> lines = captioning_training_recipe(4000, 5000, 2e-3).summary_lines()
>>> [line.split(":")[0] for line in lines]
['batch size 64', 'epochs 81', 'learning rate 0.002']
"""

import dataclasses
import math
import numbers

from keras_attention.callbacks.decay_on_plateau import DecayOnPlateau
from keras_attention.models.captioning.image_backbones import backbone_stride
from keras_attention.tasks import training_recipe
from keras_attention.validation import check_finite_number
from keras_attention.validation import check_positive_int

# Derived batch sizes: the largest power of two up to MAX_BATCH_SIZE that still gives
# MIN_STEPS_PER_EPOCH steps an epoch, and at least MIN_BATCH_SIZE.
MAX_BATCH_SIZE = 64
MIN_BATCH_SIZE = 8
MIN_STEPS_PER_EPOCH = 30
# The longer side of a derived image size at most: the attention's cost grows with the
# cells of the feature grid (96 pixels are 24 cells of the small CNN).
MAX_DERIVED_SIDE = {"small_cnn": 96}
MAX_DERIVED_SIDE_APPLICATIONS = 224
WARMUP_STEPS = 150
# Steps without a 1% better validation loss that start the final decay (in whole epochs).
PATIENCE_STEPS = 250
# No stall starts the decay before this many steps: attention models can sit on a
# plateau for 1000 steps or more before they learn where to look (a decay started
# after 650 steps on 80x60 object-relation scenes left Show, Attend and Tell there).
EARLIEST_DECAY_STEP = 2000
# Smaller improvements of the validation loss (nats a token) do not hold the peak
# learning rate: near 0 they are noise, and the captions no longer change.
MIN_LOSS_IMPROVEMENT = 0.005
# The reason of epochs the user gave: the schedule may stop sooner.
_GIVEN_EPOCHS = "given (the most; fewer when the validation loss stops improving)"


def derived_image_size(median_size, backbone, source="median training image", patch_size=None):
    """The image size a model sees: the median image, its aspect ratio kept, on the stride.

    Sides are rounded to multiples of the backbone's stride, or of
    `patch_size` for a model cutting the image into patches (so every grid
    cell covers whole pixels) after scaling a large image down until its
    longer side fits `MAX_DERIVED_SIDE` (`MAX_DERIVED_SIDE_APPLICATIONS`
    for a `keras.applications` backbone); every side keeps at least two
    grid cells and 8 pixels.

    Args:
        median_size: `(height, width)` of the typical training image.
        backbone: "small_cnn" or a `keras.applications` name (its largest
            side also applies to patches).
        source: where `median_size` comes from, for the reason.
        patch_size: None, or the patch side that replaces the stride.

    Returns:
        `((height, width), reason)`, `reason` one line saying why.

    Example:

    >>> from keras_attention.tasks.captioning.recipe import derived_image_size
    >>> size, reason = derived_image_size((375, 500), "small_cnn")
    >>> size
    (72, 96)
    >>> reason.split(", ")[1]
    'scaled by 0.19 to a longer side of at most 96'
    """
    height, width = median_size
    check_positive_int("median_size[0]", height)
    check_positive_int("median_size[1]", width)
    stride = backbone_stride(backbone)
    check_positive_int("patch_size", patch_size, allow_none=True)
    cell = "the CNN's stride" if patch_size is None else "the patch size"
    stride = stride if patch_size is None else patch_size
    most = MAX_DERIVED_SIDE.get(backbone, MAX_DERIVED_SIDE_APPLICATIONS)
    scale = min(1.0, most / max(height, width))
    # At least two cells a side, and the 8 pixels a backbone needs.
    smallest = max(2 * stride, 8)
    size = tuple(
        max(smallest, int(round(side * scale / stride)) * stride) for side in (height, width)
    )
    grid = (size[0] // stride, size[1] // stride)
    reason = f"{source} {height}x{width}"
    reason += f", scaled by {scale:.2f} to a longer side of at most {most}" if scale < 1 else ""
    reason += (
        f", aspect ratio kept, sides multiples of {cell} {stride}: "
        f"a {grid[0]}x{grid[1]} feature grid"
    )
    return size, reason


@dataclasses.dataclass(kw_only=True)
class CaptioningTrainingRecipe(training_recipe.TrainingRecipe):
    """The choices `captioning_training_recipe` made, and why.

    A `TrainingRecipe` (batch size, epochs, steps, warm-up and the reasons)
    with the learning-rate schedule's own choices added. Its `epochs` are
    the most: the schedule stops sooner once the validation loss stalls;
    its `warmup_steps` go linearly from 0 to `learning_rate`; its reasons
    are those of "batch_size", "epochs" and "learning_rate".

    Args:
        patience: epochs without improvement that start the decay.
        earliest_decay_step: no stall starts the decay before this step.
        learning_rate: the peak learning rate.
        **recipe: the `TrainingRecipe` fields.

    Example:

    >>> from keras_attention.tasks.captioning.recipe import (
    ...     CaptioningTrainingRecipe, captioning_training_recipe)
    >>> recipe = CaptioningTrainingRecipe(
    ...     batch_size=8, epochs=10, steps_per_epoch=1, total_steps=10, warmup_steps=1,
    ...     patience=250, earliest_decay_step=10, learning_rate=1e-3, reasons={})
    >>> recipe.learning_rate_schedule().learning_rate_at(1)
    0.001
    >>> recipe = captioning_training_recipe(100, train_steps=10, learning_rate=1e-3)
    >>> recipe.summary_lines()[2].split(",")[0]
    'learning rate 0.001: linear warm-up 0 -> 0.001 over 1 steps'
    """

    patience: int
    earliest_decay_step: int
    learning_rate: float

    SUMMARY_FIELDS = ("batch_size", "epochs", "learning_rate")

    def _summary_line(self, name, value):
        return f"{name.replace('_', ' ')} {value:g}: {self.reasons[name]}"

    def learning_rate_schedule(self):
        """The `DecayOnPlateau` callback that sets the learning rate before every step.

        Compile the model with a plain learning rate (any value): the
        callback overwrites it.
        """
        return DecayOnPlateau(
            peak_learning_rate=self.learning_rate,
            warmup_steps=self.warmup_steps,
            patience=self.patience,
            min_absolute_delta=MIN_LOSS_IMPROVEMENT,
            earliest_decay_step=self.earliest_decay_step,
        )


def captioning_training_recipe(
    num_examples,
    train_steps,
    learning_rate,
    batch_size=None,
    epochs=None,
    earliest_decay_step=EARLIEST_DECAY_STEP,
    steps_per_epoch=None,
):
    """Batch size, epochs and learning-rate schedule from the number of training captions.

    What is given is kept; the rest is derived:

    - batch size: the largest power of two up to `MAX_BATCH_SIZE` that still
      gives `MIN_STEPS_PER_EPOCH` steps an epoch (at least `MIN_BATCH_SIZE`);
    - epochs: at most enough for about `train_steps` optimizer steps;
    - schedule: a linear warm-up from 0 over `WARMUP_STEPS` (at most
      `training_recipe.WARMUP_FRACTION` of the steps) to `learning_rate`, held for at least
      `earliest_decay_step` steps and while the validation loss improves,
      then a cosine decay to 0 once it has not improved for about
      `PATIENCE_STEPS` steps (or when the epochs left are just enough for
      the decay); training stops when the decay ends.

    Args:
        num_examples: training `(image, caption)` pairs, a positive int.
        train_steps: the most optimizer steps when `epochs` is None.
        learning_rate: the peak learning rate.
        batch_size: None to derive it.
        epochs: None to derive them (the most epochs).
        earliest_decay_step: no stall of the validation loss starts the
            decay before this many steps (a positive int); models slow to
            leave their first plateau need more.
        steps_per_epoch: the user's steps per epoch (`--steps-per-epoch`),
            or None for one pass over the captions.

    Returns:
        a `CaptioningTrainingRecipe`.

    Example:

    >>> from keras_attention.tasks.captioning.recipe import (
    ...     captioning_training_recipe)
    >>> recipe = captioning_training_recipe(2400, train_steps=3000, learning_rate=2e-3)
    >>> recipe.batch_size, recipe.steps_per_epoch, recipe.epochs, recipe.warmup_steps
    (64, 37, 81, 150)
    >>> recipe.patience  # the whole epochs that cover 250 steps
    7
    """
    _check_recipe_arguments(
        num_examples, train_steps, learning_rate, batch_size, epochs, earliest_decay_step
    )
    count = int(num_examples)
    reasons = {}
    batch_size, steps_per_epoch = _batch_size_and_epoch_steps(
        reasons, count, batch_size, steps_per_epoch
    )
    derive_epochs = epochs is None
    epochs = epochs or max(1, int(round(train_steps / steps_per_epoch)))
    recipe = _recipe_with_schedule(
        reasons, batch_size, epochs, steps_per_epoch, learning_rate, earliest_decay_step
    )
    _explain_epochs_and_schedule(recipe, train_steps if derive_epochs else None)
    return recipe


def _batch_size_and_epoch_steps(reasons, count, batch_size, steps_per_epoch):
    """The batch size (given, or `_derived_batch_size`) and the steps an epoch, with reasons."""
    derive_batch_size = batch_size is None
    batch_size = training_recipe.choose(
        reasons, "batch_size", batch_size, lambda: (_derived_batch_size(count), None), "given"
    )
    steps_per_epoch = training_recipe.epoch_steps(
        reasons, steps_per_epoch, count, batch_size, "captions"
    )
    if derive_batch_size:
        # Said once the steps an epoch are known: the reason names them.
        reasons["batch_size"] = _batch_size_reason(count, batch_size, steps_per_epoch)
    return batch_size, steps_per_epoch


def _recipe_with_schedule(
    reasons, batch_size, epochs, steps_per_epoch, learning_rate, earliest_decay_step
):
    """The recipe of these choices with its schedule's warm-up, patience and earliest decay."""
    total_steps = epochs * steps_per_epoch
    warmup_steps = max(
        1, min(WARMUP_STEPS, int(round(training_recipe.WARMUP_FRACTION * total_steps)))
    )
    return CaptioningTrainingRecipe.of_choices(
        reasons,
        batch_size,
        epochs,
        steps_per_epoch,
        warmup_steps,
        patience=max(2, math.ceil(PATIENCE_STEPS / steps_per_epoch)),
        earliest_decay_step=min(earliest_decay_step, total_steps),
        learning_rate=learning_rate,
    )


def _explain_epochs_and_schedule(recipe, train_steps):
    """Writes the reasons of "epochs" and "learning_rate": what the schedule does in this run.

    `train_steps` is the aim the epochs were derived from, None when they
    were given.
    """
    decay_epoch, first_stall = _decay_plan(
        recipe.learning_rate_schedule(), recipe.epochs, recipe.steps_per_epoch
    )
    stops_sooner = first_stall is not None
    if train_steps is not None:
        recipe.reasons["epochs"] = (
            f"at most about {train_steps} optimizer steps at {recipe.steps_per_epoch} steps "
            "an epoch"
            + ("; fewer when the validation loss stops improving sooner" if stops_sooner else "")
        )
    else:
        recipe.reasons["epochs"] = _GIVEN_EPOCHS if stops_sooner else "given"
    recipe.reasons["learning_rate"] = _schedule_reason(recipe, decay_epoch, first_stall)


def _decay_plan(schedule, epochs, steps_per_epoch):
    """When the `DecayOnPlateau` schedule decays in a run of `epochs` epochs.

    Returns:
        `(decay_epoch, first_stall)`: the epoch after which the decay starts
        when the validation loss keeps improving (`epochs`: no decay), and
        the first epoch after which a stalled loss could start it sooner
        (None: none can, the run is too short for the patience or for
        `earliest_decay_step`).
    """
    decay_epoch = epochs
    for trained in range(1, epochs + 1):
        past_warmup = trained * steps_per_epoch >= schedule.warmup_steps
        if past_warmup and epochs - trained <= schedule.decay_epochs_after(trained):
            decay_epoch = trained
            break
    # The first epoch sets the best value; `patience` more without improvement stall.
    least_steps = max(schedule.warmup_steps, schedule.earliest_decay_step)
    first_stall = max(schedule.patience + 1, math.ceil(least_steps / steps_per_epoch))
    return decay_epoch, (first_stall if first_stall < decay_epoch else None)


def _schedule_reason(recipe, decay_epoch, first_stall):
    """The line saying how the learning rate rises, holds and decays in this run."""
    epochs = recipe.epochs
    warmup = f"linear warm-up 0 -> {recipe.learning_rate:g} over {recipe.warmup_steps} steps"
    last = training_recipe.count_of(epochs - decay_epoch, "epochs")
    last_all = training_recipe.count_of(epochs, "epochs")
    if first_stall is not None:
        return (
            f"{warmup}, held for at least {recipe.earliest_decay_step} steps and while the "
            f"validation loss improves by 1% (and {MIN_LOSS_IMPROVEMENT}) within "
            f"{recipe.patience} epochs, then cosine decay to 0 and stop (at the latest over "
            f"the last {last} of {epochs})"
        )
    if decay_epoch >= epochs:
        return f"{warmup}, then held to the end (no room for a decay in {last_all})"
    return (
        f"{warmup}, held to the end of epoch {decay_epoch}, then cosine decay to 0 over the last "
        f"{last} (too few epochs for a stalled validation loss to start it sooner: "
        f"{recipe.patience} epochs without improvement, from step {recipe.earliest_decay_step})"
    )


def _derived_batch_size(count):
    """The largest power of two giving `MIN_STEPS_PER_EPOCH` steps, within the bounds."""
    batch_size = MAX_BATCH_SIZE
    while batch_size > MIN_BATCH_SIZE and count // batch_size < MIN_STEPS_PER_EPOCH:
        batch_size //= 2
    return batch_size


def _batch_size_reason(count, batch_size, steps_per_epoch):
    """Why `_derived_batch_size` chose `batch_size`, with the steps an epoch it gives."""
    steps = training_recipe.steps_an_epoch(steps_per_epoch, count, batch_size)
    aim = (
        f"the largest power of two <= {MAX_BATCH_SIZE} giving at least {MIN_STEPS_PER_EPOCH} "
        "steps a pass over the"
    )
    if count // batch_size >= MIN_STEPS_PER_EPOCH:
        return f"{aim} {count} training captions: {steps}"
    return f"{aim} training captions, or the smallest, {MIN_BATCH_SIZE}: the {count} give {steps}"


def _check_recipe_arguments(
    num_examples, train_steps, learning_rate, batch_size, epochs, earliest_decay_step
):
    """Refuses arguments of `captioning_training_recipe` it cannot derive a recipe from."""
    count = num_examples
    if isinstance(count, bool) or not isinstance(count, numbers.Integral) or count < 1:
        # Also catches a dataset's cardinality of -2 (unknown), which would make 1 step.
        raise ValueError(
            "`num_examples` must be a positive int (the training pairs). "
            f"Received: num_examples={num_examples!r}"
        )
    check_positive_int("train_steps", train_steps)
    check_finite_number("learning_rate", learning_rate, positive=True)
    training_recipe.check_user_choices(batch_size=batch_size, epochs=epochs)
    check_positive_int("earliest_decay_step", earliest_decay_step)
