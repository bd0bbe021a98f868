"""Training choices for a translator, derived from the data set.

The built-in corpus has 18,000 training pairs; a user's file may have 2,000
or 2 million, with sentences of 5 tokens or 80. A fixed number of epochs
and a fixed sequence length fit one of them: `translation_training_recipe`
derives the sequence length from the length the training sentences fit (the
longest, or a percentile of a sample: `data.length_limits`), the batch
size and epochs from the number of pairs (aiming at a number of sentence
pairs seen over the run), and the warm-up from the number of steps; every
choice comes with the reason it was made, and any value the user set is
kept.

Example:

>>> from keras_attention.tasks.translation.recipe import (
...     translation_training_recipe)
>>> recipe = translation_training_recipe(2000, source_length=14, target_length=11)
>>> recipe.max_length, recipe.batch_size, recipe.epochs, recipe.warmup_steps
(16, 32, 27, 167)
"""

import dataclasses
import math

from keras_attention.tasks import training_recipe
from keras_attention.validation import check_positive_int

# Sentence pairs seen over a run: enough for the built-in corpus and for small
# formatting tasks alike (the built-in corpus: 3 epochs of 18,000 pairs).
TARGET_PAIRS_SEEN = 54_000
# The RNN's additive attention locks on to the source later than the
# Transformer's: on 18,000 compound-word pairs, 3 epochs left it unaligned in 1
# run of 3 (seeds), 6 aligned it in every run.
EPOCHS_BY_MODEL = {
    "transformer": training_recipe.Bounds(3, 100),
    "rnn": training_recipe.Bounds(6, 100),
}
# Steps per epoch the batch size aims for, at least.
MIN_STEPS_PER_EPOCH = 50
BATCH_SIZES = training_recipe.Bounds(16, 64)
# Lengths are rounded up to a multiple of this (room for a little longer input).
LENGTH_MULTIPLE = 8
MAX_DERIVED_LENGTH = 256


@dataclasses.dataclass(kw_only=True)
class TranslationTrainingRecipe(training_recipe.TrainingRecipe):
    """The choices `translation_training_recipe` made, and why.

    A `TrainingRecipe` (batch size, epochs, steps, warm-up and the reasons)
    with the sequence length added.

    Args:
        max_length: tokens per source and per target sequence, the start or
            end token included.
        **recipe: the `TrainingRecipe` fields; `warmup_steps` are steps of
            linear warm-up before the cosine decay.

    Example:

    >>> from keras_attention.tasks.translation.recipe import (
    ...     translation_training_recipe)
    >>> translation_training_recipe(18000, 20, 22).summary_lines()[0]
    'max_length 24: the longest training sentence has 22 tokens, plus the start/end token'
    """

    max_length: int

    SUMMARY_FIELDS = ("max_length", "batch_size", "epochs", "warmup_steps")


def translation_training_recipe(
    num_train_pairs,
    source_length,
    target_length,
    *,
    max_length=None,
    batch_size=None,
    epochs=None,
    length_basis="the longest training sentence has",
    steps_per_epoch=None,
    model="transformer",
):
    """Sequence length, batch size, epochs and warm-up for a translation data set.

    One function on purpose: its length is this docstring and the arguments' checks;
    each choice is made by a helper, in the order they depend on one another.

    Args:
        num_train_pairs: number of training sentence pairs.
        source_length: tokens the training source sentences fit: the
            longest one's, or a percentile of a sample.
        target_length: the same for the target sentences.
        max_length: the user's sequence length, or None to derive it.
        batch_size: the user's batch size, or None to derive it.
        epochs: the user's number of epochs, or None to derive it.
        length_basis: what the lengths are, the words before "N tokens" in
            the reason of the sequence length.
        steps_per_epoch: the user's steps per epoch (`--steps-per-epoch`),
            or None for one pass over the pairs.
        model: "transformer" or "rnn", the model trained: the RNN gets at
            least 6 derived epochs (`EPOCHS_BY_MODEL`).

    Returns:
        a `TranslationTrainingRecipe`.

    Example:

    >>> from keras_attention.tasks.translation.recipe import (
    ...     translation_training_recipe)
    >>> recipe = translation_training_recipe(18000, 20, 22)
    >>> recipe.max_length, recipe.batch_size, recipe.epochs
    (24, 64, 3)
    >>> translation_training_recipe(18000, 20, 22, epochs=5).reasons["epochs"]
    'set by the user'
    >>> translation_training_recipe(18000, 20, 22, model="rnn").epochs
    6
    """
    check_positive_int("num_train_pairs", num_train_pairs)
    check_positive_int("source_length", source_length)
    check_positive_int("target_length", target_length)
    training_recipe.check_user_choices(max_length=max_length, batch_size=batch_size, epochs=epochs)
    if model not in EPOCHS_BY_MODEL:
        raise ValueError(
            f"`model` must be one of {sorted(EPOCHS_BY_MODEL)}. Received: model={model!r}"
        )
    reasons = {}
    longest = max(source_length, target_length)
    max_length = training_recipe.choose(
        reasons, "max_length", max_length, lambda: _derived_length(longest, length_basis)
    )
    derive_batch_size = batch_size is None
    batch_size = training_recipe.choose(
        reasons, "batch_size", batch_size, lambda: (_derived_batch_size(num_train_pairs), None)
    )
    # An epoch the user counts in steps sees that many batches, not the whole set.
    pairs_per_epoch = num_train_pairs if steps_per_epoch is None else steps_per_epoch * batch_size
    steps_per_epoch = training_recipe.epoch_steps(
        reasons, steps_per_epoch, num_train_pairs, batch_size, "pairs"
    )
    if derive_batch_size:
        reasons["batch_size"] = _batch_size_reason(num_train_pairs, batch_size, steps_per_epoch)
    epochs = training_recipe.choose(
        reasons,
        "epochs",
        epochs,
        lambda: _derived_epochs(
            pairs_per_epoch, steps_per_epoch * batch_size, EPOCHS_BY_MODEL[model], model
        ),
    )
    total_steps = epochs * steps_per_epoch
    warmup_steps = max(1, int(training_recipe.WARMUP_FRACTION * total_steps))
    reasons["warmup_steps"] = f"a tenth of the {total_steps} steps, then cosine decay to 0"
    if warmup_steps > training_recipe.WARMUP_FRACTION * total_steps:
        reasons["warmup_steps"] = (
            f"a tenth of the {total_steps} steps, at least 1, then cosine decay to 0"
        )
    steps = (batch_size, epochs, steps_per_epoch, warmup_steps)
    return TranslationTrainingRecipe.of_choices(reasons, *steps, max_length=int(max_length))


def _derived_length(longest, basis):
    """The sequence length that fits `longest` tokens and a start/end token, and why."""
    length = min(MAX_DERIVED_LENGTH, LENGTH_MULTIPLE * math.ceil((longest + 1) / LENGTH_MULTIPLE))
    reason = f"{basis} {longest} tokens, plus the start/end token" + (
        f" (cut to {MAX_DERIVED_LENGTH})" if longest + 1 > MAX_DERIVED_LENGTH else ""
    )
    return length, reason


def _derived_batch_size(num_train_pairs):
    """A power of two giving enough steps per epoch, within the bounds."""
    batch_size = BATCH_SIZES.clamp(num_train_pairs // MIN_STEPS_PER_EPOCH)
    return 2 ** int(math.log2(batch_size))


def _batch_size_reason(num_train_pairs, batch_size, steps_per_epoch):
    """Why `_derived_batch_size` chose `batch_size`, with the steps an epoch it gives."""
    steps = training_recipe.steps_an_epoch(steps_per_epoch, num_train_pairs, batch_size)
    if num_train_pairs // batch_size >= MIN_STEPS_PER_EPOCH:
        return (
            f"{num_train_pairs} training pairs: at least {MIN_STEPS_PER_EPOCH} steps a pass, "
            f"{BATCH_SIZES} pairs per step: {steps}"
        )
    return (
        f"{num_train_pairs} training pairs: too few for {MIN_STEPS_PER_EPOCH} steps a pass in "
        f"batches of {BATCH_SIZES.low} or more, the smallest: {steps}"
    )


def _derived_epochs(pairs_per_epoch, pairs_seen_per_epoch, bounds, model):
    """Epochs for about `TARGET_PAIRS_SEEN` pairs seen, within the model's bounds, and why.

    `pairs_per_epoch` aims the count; `pairs_seen_per_epoch` (whole
    batches) says what the run will see.
    """
    wanted = math.ceil(TARGET_PAIRS_SEEN / pairs_per_epoch)
    epochs = bounds.clamp(wanted)
    if epochs == wanted:
        reason = (
            f"about {TARGET_PAIRS_SEEN} sentence pairs seen over the run "
            f"({bounds} epochs for the {model} model)"
        )
    else:
        seen = epochs * pairs_seen_per_epoch
        bound = "most" if epochs < wanted else "fewest"
        reason = (
            f"the {bound} epochs for the {model} model ({bounds}): {seen} sentence pairs "
            "seen over the run, "
            f"{'not' if epochs < wanted else 'more than'} the {TARGET_PAIRS_SEEN} aimed at"
        )
    return epochs, reason
