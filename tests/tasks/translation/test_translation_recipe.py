"""translation_training_recipe: the derived epochs of an epoch counted in steps."""

import math

import pytest

from keras_attention.tasks.translation.recipe import translation_training_recipe


def test_epochs_of_a_set_number_of_steps_count_the_pairs_those_steps_see():
    # 4.5M pairs but 100 steps an epoch: about 54,000 pairs seen over the run
    # means ceil(54_000 / (100 * batch)) epochs, within 3..100, not the 3 of one pass.
    recipe = translation_training_recipe(4_500_000, 20, 22, steps_per_epoch=100)
    assert recipe.steps_per_epoch == 100
    expected = min(100, max(3, math.ceil(54_000 / (100 * recipe.batch_size))))
    assert recipe.epochs == expected > 3


def test_one_pass_epochs_still_count_the_whole_set():
    recipe = translation_training_recipe(18_000, 20, 22)
    assert recipe.steps_per_epoch == 18_000 // recipe.batch_size
    assert recipe.epochs == 3


def test_reasons_say_the_steps_and_pairs_the_run_has():
    # 20 pairs give one batch of the smallest size: the reason says 1 step, as fit shows 1/1.
    recipe = translation_training_recipe(20, 5, 6)
    assert (recipe.batch_size, recipe.steps_per_epoch, recipe.epochs) == (16, 1, 100)
    assert recipe.reasons["batch_size"] == (
        "20 training pairs: too few for 50 steps a pass in batches of 16 or more, the smallest: "
        "1 step an epoch"
    )
    # 100 epochs of one batch of 16 see 1,600 pairs, not the 54,000 aimed at.
    assert recipe.reasons["epochs"] == (
        "the most epochs for the transformer model (between 3 and 100): 1600 sentence pairs "
        "seen over the run, "
        "not the 54000 aimed at"
    )
    assert recipe.reasons["warmup_steps"].startswith("a tenth of the 100 steps")
    large = translation_training_recipe(18_000, 20, 22)
    assert large.reasons["batch_size"].endswith(f": {large.steps_per_epoch} steps an epoch")
    assert large.reasons["epochs"].startswith("about 54000 sentence pairs seen")
    # The user's steps an epoch are the ones named.
    counted = translation_training_recipe(4_500_000, 20, 22, steps_per_epoch=100)
    assert counted.reasons["batch_size"].endswith(
        "70312 steps a pass, 100 an epoch (--steps-per-epoch)"
    )
    short = translation_training_recipe(18_000, 20, 22, batch_size=16, epochs=1, steps_per_epoch=5)
    assert short.warmup_steps == 1
    assert (
        short.reasons["warmup_steps"]
        == "a tenth of the 5 steps, at least 1, then cosine decay to 0"
    )


def test_the_rnn_gets_at_least_six_derived_epochs_and_the_transformer_three():
    # 18,000 pairs in batches of 64: 54,000 pairs seen is 3 epochs; the RNN's
    # attention needs more steps to lock on, so its floor is 6.
    transformer = translation_training_recipe(18000, 20, 22, model="transformer")
    rnn = translation_training_recipe(18000, 20, 22, model="rnn")
    assert (transformer.epochs, rnn.epochs) == (3, 6)
    assert "for the rnn model (between 6 and 100)" in rnn.reasons["epochs"]
    # Small sets reach the pairs aimed at above either floor: the same epochs.
    assert translation_training_recipe(4500, 9, 9, model="rnn").epochs == 12
    assert translation_training_recipe(18000, 20, 22, model="rnn", epochs=2).epochs == 2
    with pytest.raises(ValueError, match="`model` must be one of"):
        translation_training_recipe(18000, 20, 22, model="lstm")


def test_the_flags_recipe_follows_the_model_and_a_checkpoint_is_a_transformer():
    from keras_attention.tasks.translation.flags import parse_translation_arguments
    from keras_attention.tasks.translation.recipe_from_flags import apply_translation_recipe

    args = parse_translation_arguments(["--model", "rnn"])
    assert apply_translation_recipe(args, 18000, 20, 22).epochs == 6
    args = parse_translation_arguments(["--model", "rnn"])
    args.init_from = "/checkpoints/opus-mt-en-de"
    assert apply_translation_recipe(args, 18000, 20, 22).epochs == 3
