"""Training choices derived from the data set's statistics, checked on numbers."""

import doctest

import pytest

from keras_attention.tasks.image_classification import recipe as recipe_module
from keras_attention.tasks.image_classification.recipe import vit_input_shape
from keras_attention.tasks.image_classification.recipe import vit_training_recipe
from keras_attention.tasks.image_classification.recipe import warmup_steps_for
from keras_attention.tasks.training_recipe import count_of


def test_small_glyph_set():
    # 1350 images of 32 x 32 with 10% validation and 10% test: 1080 to train.
    recipe = vit_training_recipe(num_train_images=1080, image_size=32)
    assert recipe.image_size == (32, 32) and recipe.patch_size == 4  # 8 x 8 grid
    assert recipe.batch_size == 32 and recipe.steps_per_epoch == 33
    assert recipe.epochs == 93  # about 100,000 images seen
    assert recipe.total_steps == 93 * 33 and recipe.warmup_steps == 306


@pytest.mark.parametrize(
    "num_train_images, batch_size, epochs",
    [
        (10, 10, 200),
        (100, 16, 200),
        (1080, 32, 93),
        (5000, 32, 20),  # 128 would give 780 steps, 32 gives 3120
        (6144, 32, 16),
        (45000, 128, 10),
        (2_000_000, 128, 10),
    ],
)
def test_batch_size_and_epochs_follow_the_number_of_images(num_train_images, batch_size, epochs):
    recipe = vit_training_recipe(num_train_images=num_train_images, image_size=32)
    assert (recipe.batch_size, recipe.epochs) == (batch_size, epochs)
    assert recipe.steps_per_epoch == max(1, num_train_images // batch_size)
    # At least 3000 steps, or the smallest batch; and never a batch that could double.
    assert recipe.total_steps >= 3000 or recipe.batch_size <= 16
    assert (
        batch_size == 128
        or epochs * (num_train_images // (2 * batch_size)) < 3000
        or (num_train_images // (2 * batch_size) < 32)
    )


@pytest.mark.parametrize(
    "image_size, native_size, expected_size, expected_patch",
    [
        (32, None, (32, 32), 4),
        (64, None, (64, 64), 8),
        (28, (28, 28), (28, 28), 4),  # 7 x 7 grid
        (32, (480, 640), (24, 32), 4),  # landscape: 6 x 8 grid, not squashed
        (32, (640, 480), (32, 24), 4),  # portrait
        (224, (375, 500), (160, 224), 16),  # 10 x 14 grid
        ((24, 40), (300, 300), (24, 40), 4),  # a (height, width) is kept as given
    ],
)
def test_input_shape_keeps_the_aspect_ratio(image_size, native_size, expected_size, expected_patch):
    size, patch, reasons = vit_input_shape(image_size, native_size)
    assert (size, patch) == (expected_size, expected_patch)
    assert size[0] % patch == 0 and size[1] % patch == 0
    assert set(reasons) == {"image_size", "patch_size"}


def test_user_values_are_kept_and_said_so():
    recipe = vit_training_recipe(
        num_train_images=1080, image_size=32, patch_size=8, batch_size=64, epochs=40
    )
    assert (recipe.patch_size, recipe.batch_size, recipe.epochs) == (8, 64, 40)
    assert recipe.steps_per_epoch == 16 and recipe.total_steps == 640 and recipe.warmup_steps == 64
    assert all(
        recipe.reasons[name] == "set by the user" for name in ("patch_size", "batch_size", "epochs")
    )


def test_summary_has_one_line_per_choice_with_its_reason():
    lines = vit_training_recipe(num_train_images=1080, image_size=32).summary_lines()
    assert [line.split(" ")[0] for line in lines] == [
        "image_size",
        "patch_size",
        "batch_size",
        "epochs",
        "warmup_steps",
    ]
    assert all(": " in line and "\n" not in line for line in lines)
    assert lines[2] == (
        "batch_size 32: 1080 training images: 33 steps an epoch, 3,069 in all (at least 32 a "
        "pass and 3,000 in all where batches between 16 and 128 allow)"
    )


@pytest.mark.parametrize(
    "arguments",
    [
        dict(num_train_images=24, epochs=2, patch_size=8),
        dict(num_train_images=24),
        dict(num_train_images=14, epochs=1),
        dict(num_train_images=1080),
        dict(num_train_images=45_000, image_size=64),
        dict(num_train_images=1_281_167, steps_per_epoch=200),
    ],
)
def test_reasons_say_the_steps_and_images_the_run_has(arguments):
    recipe = vit_training_recipe(**{"image_size": 32, **arguments})
    count, steps, total = arguments["num_train_images"], recipe.steps_per_epoch, recipe.total_steps
    batch = recipe.reasons["batch_size"]
    # The steps fit runs, no other count of steps an epoch.
    assert f" {steps} an epoch" in batch or f" {count_of(steps, 'steps')} an epoch" in batch
    assert f"{total:,} in all" in batch
    # Aims that the run misses are said to be missed.
    assert ("fewer than the 32 steps a pass" in batch) == (count // recipe.batch_size < 32)
    assert ("3,000 in all aimed at" in batch) == (total < 3000)
    epochs = recipe.reasons["epochs"]
    seen = recipe.epochs * steps * recipe.batch_size
    if epochs.startswith("about 100,000 images seen"):
        assert 50_000 <= seen <= 150_000
    elif epochs != "set by the user":
        assert f"{seen:,} images seen in all" in epochs
    warmup = recipe.reasons["warmup_steps"]
    assert f"over {count_of(recipe.warmup_steps, 'steps')} (" in warmup or (
        f"a tenth of the {total} steps" in warmup and recipe.warmup_steps == total // 10
    )


def test_a_checkpoint_s_sizes_are_said_to_be_its_own():
    checkpoint = {"image_size": "the checkpoint's", "patch_size": "the checkpoint's"}
    recipe = vit_training_recipe(
        num_train_images=24,
        image_size=(24, 32),
        native_size=(30, 40),
        patch_size=8,
        sources=checkpoint,
    )
    assert recipe.image_size == (24, 32) and recipe.patch_size == 8
    assert recipe.summary_lines()[:2] == [
        "image_size (24, 32): the checkpoint's",
        "patch_size 8: the checkpoint's",
    ]
    # Without sources, given values are the user's.
    plain = vit_training_recipe(num_train_images=24, image_size=(24, 32), patch_size=8)
    assert plain.reasons["image_size"] == plain.reasons["patch_size"] == "set by the user"


def test_warmup_is_a_tenth_at_most_ten_epochs():
    assert warmup_steps_for(1000, 10) == 100
    assert warmup_steps_for(100_000, 100) == 1000
    assert warmup_steps_for(5, 5) == 1


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (
            {"num_train_images": 0},
            r"`num_train_images` must be a positive integer( or None)?. Received: num_train_images=0",
        ),
        (
            {"batch_size": 2.5},
            r"`batch_size` must be a positive integer( or None)?. Received: batch_size=2.5",
        ),
        (
            {"epochs": True},
            r"`epochs` must be a positive integer( or None)?. Received: epochs=True",
        ),
        (
            {"image_size": (32,)},
            r"`image_size` must be a positive integer or a \(height, width\) pair of them. Received: image_size=\(32,\)",
        ),
        (
            {"patch_size": 5},
            r"`patch_size` must divide both sides of `image_size`. Received: patch_size=5, image_size=32",
        ),
        (
            {"native_size": (0, 3)},
            r"`native_size` must be a positive integer or a \(height, width\) pair of them. Received: native_size=\(0, 3\)",
        ),
    ],
)
def test_bad_arguments(kwargs, message):
    arguments = {"num_train_images": 100, "image_size": 32, **kwargs}
    with pytest.raises(ValueError, match=message):
        vit_training_recipe(**arguments)


def test_docstring_examples():
    results = doctest.testmod(recipe_module, optionflags=doctest.ELLIPSIS)
    assert results.attempted > 0 and results.failed == 0


def test_epochs_of_a_set_number_of_steps_count_the_images_those_steps_see():
    # 1.28M images, 200 steps of the derived batch an epoch: about 100,000
    # images seen in all means round(100_000 / (200 * batch)) epochs, within 10..200.
    recipe = vit_training_recipe(num_train_images=1_281_167, image_size=32, steps_per_epoch=200)
    assert recipe.steps_per_epoch == 200
    expected = min(200, max(10, round(100_000 / (200 * recipe.batch_size))))
    assert recipe.epochs == expected
    assert f"{200 * recipe.batch_size} an epoch" in recipe.reasons["epochs"]
