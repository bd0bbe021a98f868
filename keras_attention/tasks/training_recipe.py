"""What every task's training recipe shares: the batches, epochs and warm-up, and why.

Each model family derives its training choices from its data set
(`translation_training_recipe`, `vit_training_recipe`,
`captioning_training_recipe`); their results are `TrainingRecipe`s with
the family's own fields added, and each choice comes with the reason it
was made. `choose` keeps a value the user set and derives the others.

Example:

>>> from keras_attention.tasks.training_recipe import choose
>>> reasons = {}
>>> choose(reasons, "epochs", None, lambda: (3, "three passes"))
3
>>> choose(reasons, "batch_size", 16, lambda: (64, "unused"))
16
>>> reasons
{'epochs': 'three passes', 'batch_size': 'set by the user'}
"""

import dataclasses

from keras_attention.validation import check_positive_int

USER_SET = "set by the user"
# Every recipe warms the learning rate up over this fraction of its steps (some cap it).
WARMUP_FRACTION = 0.1


@dataclasses.dataclass(frozen=True)
class Bounds:
    """The smallest and largest value a derived choice may take.

    Example:

    >>> from keras_attention.tasks.training_recipe import Bounds
    >>> epochs = Bounds(3, 100)
    >>> epochs.clamp(1), epochs.clamp(40), f"({epochs} epochs)"
    (3, 40, '(between 3 and 100 epochs)')
    """

    low: int
    high: int

    def clamp(self, value):
        """`value` moved into `low..high`."""
        return max(self.low, min(self.high, value))

    def __str__(self):
        return f"between {self.low} and {self.high}"


@dataclasses.dataclass(kw_only=True)
class TrainingRecipe:
    """The optimizer steps of a training run, and why each choice was made.

    Args:
        batch_size: examples per optimizer step.
        epochs: passes over the training examples.
        steps_per_epoch: full batches per epoch.
        total_steps: `epochs * steps_per_epoch`, the schedule's length.
        warmup_steps: steps of linear learning-rate warm-up.
        reasons: dict name -> one line saying why (or that the user set it).

    Example:

    >>> from keras_attention.tasks.training_recipe import TrainingRecipe
    >>> recipe = TrainingRecipe(
    ...     batch_size=8, epochs=2, steps_per_epoch=5, total_steps=10, warmup_steps=1,
    ...     reasons={"epochs": "two passes"})
    >>> recipe.SUMMARY_FIELDS = ("epochs",)
    >>> recipe.summary_lines()
    ['epochs 2: two passes']
    """

    batch_size: int
    epochs: int
    steps_per_epoch: int
    total_steps: int
    warmup_steps: int
    reasons: dict

    # The fields `summary_lines` prints, in order (a class attribute, not a field).
    SUMMARY_FIELDS = ()

    @classmethod
    def of_choices(cls, reasons, batch_size, epochs, steps_per_epoch, warmup_steps, **fields):
        """The recipe of these choices as ints, `total_steps` being `epochs * steps_per_epoch`.

        `**fields` are the family's own fields, kept as they are.

        Example:

        >>> from keras_attention.tasks.training_recipe import TrainingRecipe
        >>> recipe = TrainingRecipe.of_choices({}, 8.0, epochs=2, steps_per_epoch=5, warmup_steps=1)
        >>> recipe.batch_size, recipe.total_steps
        (8, 10)
        """
        return cls(
            batch_size=int(batch_size),
            epochs=int(epochs),
            steps_per_epoch=int(steps_per_epoch),
            total_steps=int(epochs) * int(steps_per_epoch),
            warmup_steps=int(warmup_steps),
            reasons=reasons,
            **fields,
        )

    def summary_lines(self):
        """One line per choice of `SUMMARY_FIELDS`: `name value: reason`."""
        return [self._summary_line(name, getattr(self, name)) for name in self.SUMMARY_FIELDS]

    def _summary_line(self, name, value):
        return f"{name} {value}: {self.reasons[name]}"


def check_user_choices(**choices):
    """Checks that every choice the user may leave out is None or a positive int.

    Example:

    >>> from keras_attention.tasks.training_recipe import check_user_choices
    >>> check_user_choices(batch_size=None, epochs=0)
    Traceback (most recent call last):
    ...
    ValueError: `epochs` must be a positive integer or None. Received: epochs=0
    """
    for name, value in choices.items():
        check_positive_int(name, value, allow_none=True)


def choose(reasons, name, value, derive, user_reason=USER_SET):
    """`value` where the user set it, else the value `derive()` gives; records the reason.

    Args:
        reasons: the recipe's dict name -> reason, updated in place.
        name: the choice's name in `reasons`.
        value: the user's value, or None to derive it.
        derive: a function of no argument returning `(value, reason)`.
        user_reason: the reason recorded for a value the user set.

    Returns:
        the chosen value.

    Example:

    >>> from keras_attention.tasks.training_recipe import choose
    >>> reasons = {}
    >>> choose(reasons, "epochs", 5, lambda: (3, "derived"), user_reason="given")
    5
    >>> reasons["epochs"]
    'given'
    """
    if value is None:
        value, reasons[name] = derive()
    else:
        reasons[name] = user_reason
    return value


def count_of(count, unit):
    """`count` and its unit, singular for 1.

    Example:

    >>> from keras_attention.tasks.training_recipe import count_of
    >>> count_of(1, "steps"), count_of(6, "steps")
    ('1 step', '6 steps')
    """
    return f"{count} {unit[:-1] if count == 1 and unit.endswith('s') else unit}"


def steps_an_epoch(steps_per_epoch, count, batch_size):
    """What an epoch's steps are, for the reason of a batch size: what `fit` runs.

    Args:
        steps_per_epoch: the steps of an epoch (`epoch_steps`).
        count: the training examples.
        batch_size: examples per step.

    Example:

    >>> from keras_attention.tasks.training_recipe import steps_an_epoch
    >>> steps_an_epoch(6, 48, 8), steps_an_epoch(100, 48, 8)
    ('6 steps an epoch', '6 steps a pass, 100 an epoch (--steps-per-epoch)')
    """
    one_pass = max(1, count // batch_size)
    if steps_per_epoch == one_pass:
        return f"{count_of(steps_per_epoch, 'steps')} an epoch"
    return f"{count_of(one_pass, 'steps')} a pass, {steps_per_epoch} an epoch (--steps-per-epoch)"


def epoch_steps(reasons, steps_per_epoch, count, batch_size, unit):
    """The steps of an epoch: the user's (`--steps-per-epoch`), else one pass in whole batches.

    Args:
        reasons: the recipe's dict name -> reason, updated in place.
        steps_per_epoch: the user's steps per epoch, or None.
        count: the training examples (images, pairs, captions).
        batch_size: examples per step; the last partial batch is dropped
            while training (one compiled step shape), but one step remains.
        unit: what `count` counts, for the reason.

    Example:

    >>> from keras_attention.tasks.training_recipe import epoch_steps
    >>> reasons = {}
    >>> epoch_steps(reasons, None, 100, 32, "images"), reasons["steps_per_epoch"]
    (3, 'one pass over the 100 training images in whole batches of 32')
    >>> epoch_steps(reasons, 500, 100, 32, "images"), reasons["steps_per_epoch"]
    (500, 'set by the user')
    """
    check_positive_int("steps_per_epoch", steps_per_epoch, allow_none=True)
    return choose(
        reasons,
        "steps_per_epoch",
        steps_per_epoch,
        lambda: (
            max(1, count // batch_size),
            f"one pass over the {count} training {unit} in whole batches of {batch_size}",
        ),
    )
