"""translation_training_recipe: the derived epochs of an epoch counted in steps."""

import math

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
