"""Training choices for a small Vision Transformer, derived from the data set.

ViTs trained from scratch on a few thousand images need small patches (a
grid of about 8 x 8 tokens), enough optimizer steps and a warm-up counted in
steps (Lee et al. 2021, https://arxiv.org/abs/2112.13492; Hassani et al.
2021, https://arxiv.org/abs/2104.05704). `vit_training_recipe` turns the
number of training images and their size into those choices, each with the
reason it was made, and keeps any value the user set.

Example:

>>> from keras_attention.tasks.image_classification.recipe import vit_training_recipe
>>> recipe = vit_training_recipe(num_train_images=1080, image_size=(32, 32))
>>> recipe.patch_size, recipe.batch_size, recipe.epochs, recipe.total_steps
(4, 32, 93, 3069)
"""

import dataclasses
import math

from keras_attention.models.image_classification.vit_image_preprocessing import image_size_pair
from keras_attention.tasks import training_recipe
from keras_attention.validation import check_positive_int

USER_SET = training_recipe.USER_SET

# About this many tokens per side: enough positions for attention to matter,
# few enough to train on a CPU.
TARGET_GRID_SIDE = 8
# Steps per epoch the batch size aims for (at most): the schedule's warm-up
# and decay need room on small data.
TARGET_STEPS_PER_EPOCH = 32
# Optimizer steps a run has at least where a smaller batch can give them: the
# 6144 built-in images for 16 epochs in batches of 128 are 768 steps and reached
# 95.7% test accuracy; in batches of 32 (3072 steps) 96.7%.
MIN_TOTAL_STEPS = 3000
BATCH_SIZES = training_recipe.Bounds(16, 128)
# Images seen over the whole run: small sets get many epochs, large ones few.
TARGET_IMAGES_SEEN = 100_000
EPOCHS = training_recipe.Bounds(10, 200)
MAX_WARMUP_EPOCHS = 10


@dataclasses.dataclass(kw_only=True)
class ViTTrainingRecipe(training_recipe.TrainingRecipe):
    """The choices `vit_training_recipe` made, and why.

    A `TrainingRecipe` (batch size, epochs, steps, warm-up and the reasons)
    with the model's input shape added.

    Args:
        image_size: `(height, width)` the model works at.
        patch_size: patch side in pixels; divides both image sides.
        **recipe: the `TrainingRecipe` fields; the last partial batch of an
            epoch is dropped, and `warmup_steps` are steps of linear
            learning-rate warm-up before the cosine decay.

    Example:

    >>> from keras_attention.tasks.image_classification.recipe import ViTTrainingRecipe
    >>> recipe = ViTTrainingRecipe(
    ...     image_size=(32, 32), patch_size=4, batch_size=32, epochs=10, steps_per_epoch=33,
    ...     total_steps=330, warmup_steps=33, reasons={})
    >>> recipe.warmup_steps
    33
    >>> from keras_attention.tasks.image_classification.recipe import vit_training_recipe
    >>> vit_training_recipe(num_train_images=1080, image_size=32).summary_lines()[1]
    'patch_size 4: a 8 x 8 patch grid on 32 x 32 images (about 8 patches a side)'
    """

    image_size: tuple
    patch_size: int

    SUMMARY_FIELDS = ("image_size", "patch_size", "batch_size", "epochs", "warmup_steps")


def _divisors(value):
    return [d for d in range(1, value + 1) if value % d == 0]


def _nearest(candidates, target):
    """The candidate closest to `target` by ratio; ties go to the larger (fewer tokens)."""
    return min(candidates, key=lambda c: (abs(math.log(c / max(target, 1e-9))), -c))


def vit_input_shape(image_size, native_size=None, patch_size=None, sources=None):
    """The `(height, width)` a ViT works at, and its patch size.

    An int `image_size` is the longer side; the shorter side keeps the
    aspect ratio of `native_size` (the images' own `(height, width)`),
    rounded to a whole number of patches, so non-square images get a
    non-square patch grid instead of being squashed. Without `native_size`
    the images are taken as square. A `(height, width)` `image_size` is
    used as it is. The derived patch size divides the longer side and gives
    about 8 patches along the shorter one.

    Args:
        image_size: the longer side in pixels, or `(height, width)`.
        native_size: `(height, width)` of the data set's images, or None.
        patch_size: the user's patch size, or None to derive it.
        sources: dict "image_size" / "patch_size" -> where a given value
            comes from, for its reason (default: set by the user), e.g. a
            checkpoint's patch size; a `(height, width)` `image_size` or a
            `patch_size` it names is given.

    Returns:
        `((height, width), patch_size, reasons)`, `reasons` a dict with one
        line for "image_size" and one for "patch_size".

    Example:

    >>> from keras_attention.tasks.image_classification.recipe import vit_input_shape
    >>> vit_input_shape(32, native_size=(480, 640))[:2]
    ((24, 32), 4)
    >>> vit_input_shape((24, 32), (30, 40), 8, {"image_size": "the checkpoint's"})[2]
    {'image_size': "the checkpoint's", 'patch_size': 'set by the user'}
    """
    sources = {**{"image_size": USER_SET, "patch_size": USER_SET}, **(sources or {})}
    user_pair = isinstance(image_size, (tuple, list))
    height, width = image_size_pair(image_size)
    if native_size is not None:
        native_height, native_width = image_size_pair(native_size, "native_size")
    reasons = {}
    if user_pair or native_size is None or native_height == native_width:
        exact = (float(height), float(width))
        reasons["image_size"] = sources["image_size"] if user_pair else "square images"
    else:
        # The longer side is `image_size`; the other keeps the aspect ratio.
        ratio = min(native_height, native_width) / max(native_height, native_width)
        short = height * ratio
        exact = (short, float(width)) if native_height < native_width else (float(height), short)
        reasons["image_size"] = (
            f"keeps the {native_height} x {native_width} images' aspect ratio, longer side {height}"
        )
    longer = int(max(exact))
    if patch_size is None:
        patch_size = _nearest(_divisors(longer), min(exact) / TARGET_GRID_SIDE)
        reasons["patch_size"] = None  # filled in once the grid is known
    else:
        check_positive_int("patch_size", patch_size)
        reasons["patch_size"] = sources["patch_size"]
    if user_pair:
        size = (height, width)
    else:
        # Whole patches along the shorter side, at least one.
        size = tuple(
            longer if side == longer else max(1, int(round(side / patch_size))) * patch_size
            for side in exact
        )
    if size[0] % patch_size or size[1] % patch_size:
        raise ValueError(
            "`patch_size` must divide both sides of `image_size`. "
            f"Received: patch_size={patch_size}, image_size={image_size!r}"
        )
    if reasons["patch_size"] is None:
        reasons["patch_size"] = (
            f"a {size[0] // patch_size} x {size[1] // patch_size} patch grid on "
            f"{size[0]} x {size[1]} images (about {TARGET_GRID_SIDE} patches a side)"
        )
    return (int(size[0]), int(size[1])), int(patch_size), reasons


def warmup_steps_for(total_steps, steps_per_epoch):
    """Linear warm-up length: a tenth of all steps, at most 10 epochs, at least 1.

    Args:
        total_steps: optimizer steps of the whole run.
        steps_per_epoch: optimizer steps per epoch.

    Returns:
        int.

    Example:

    >>> from keras_attention.tasks.image_classification.recipe import warmup_steps_for
    >>> warmup_steps_for(1320, 33), warmup_steps_for(20000, 100)
    (132, 1000)
    """
    check_positive_int("total_steps", total_steps)
    check_positive_int("steps_per_epoch", steps_per_epoch)
    return max(
        1,
        min(
            int(total_steps * training_recipe.WARMUP_FRACTION), MAX_WARMUP_EPOCHS * steps_per_epoch
        ),
    )


def _power_of_two_at_most(value):
    return 2 ** int(math.floor(math.log2(max(value, 1))))


def vit_training_recipe(
    *,
    num_train_images,
    image_size,
    native_size=None,
    patch_size=None,
    batch_size=None,
    epochs=None,
    steps_per_epoch=None,
    sources=None,
):
    """Derives image size, patch size, batch size, epochs and warm-up from the data.

    - `image_size` and `patch_size`: as `vit_input_shape`, a grid of about
      8 patches along the shorter side (patch 4 at 32 px, 8 at 64 px),
      keeping the images' aspect ratio: ViTs learn small data far better
      with small patches.
    - `batch_size`: the largest power of two giving at least 32 steps per
      epoch and 3,000 steps in all, between 16 and 128 (and no more than
      the images).
    - `epochs`: about 100,000 images seen in all, between 10 and 200 epochs.
    - `warmup_steps`: a tenth of all steps, at most 10 epochs' worth.

    A value the user set is kept (and the reason says so); the others are
    derived from it, e.g. the steps from a user's batch size.

    One function on purpose: its length is the rules above and their arguments; the code
    applies them in the order they depend on one another, each through a helper.

    Args:
        num_train_images: number of training images.
        image_size: the longer side in pixels, or `(height, width)`.
        native_size: `(height, width)` of the data set's images, or None
            (square).
        patch_size: the user's patch size, or None to derive it.
        batch_size: the user's batch size, or None to derive it.
        epochs: the user's number of epochs, or None to derive it.
        steps_per_epoch: the user's steps per epoch (`--steps-per-epoch`),
            or None for one pass over the images.
        sources: where a given image size or patch size comes from, for
            its reason (see `vit_input_shape`).

    Returns:
        `ViTTrainingRecipe`.

    Example:

    >>> from keras_attention.tasks.image_classification.recipe import vit_training_recipe
    >>> recipe = vit_training_recipe(
    ...     num_train_images=45000, image_size=64, native_size=(300, 600), epochs=30)
    >>> recipe.image_size, recipe.patch_size, recipe.batch_size, recipe.epochs
    ((32, 64), 4, 128, 30)
    >>> recipe.reasons["epochs"]
    'set by the user'
    """
    check_positive_int("num_train_images", num_train_images)
    training_recipe.check_user_choices(batch_size=batch_size, epochs=epochs)
    image_size, patch_size, reasons = vit_input_shape(image_size, native_size, patch_size, sources)
    epochs_derived = epochs is None
    batch_size_derived = batch_size is None
    images_per_epoch = num_train_images
    epochs = training_recipe.choose(
        reasons, "epochs", epochs, lambda: (_derived_epochs(images_per_epoch), None)
    )
    batch_size = training_recipe.choose(
        reasons,
        "batch_size",
        batch_size,
        lambda: (_derived_batch_size(num_train_images, epochs), None),
    )
    if epochs_derived and steps_per_epoch is not None:
        # An epoch the user counts in steps sees that many batches, not the whole set.
        images_per_epoch = steps_per_epoch * batch_size
        epochs = _derived_epochs(images_per_epoch)
    steps_per_epoch = training_recipe.epoch_steps(
        reasons, steps_per_epoch, num_train_images, batch_size, "images"
    )
    total_steps = epochs * steps_per_epoch
    # The reasons say what the run will do: its steps, and the images its whole batches see.
    if epochs_derived:
        reasons["epochs"] = _epochs_reason(images_per_epoch, epochs, steps_per_epoch * batch_size)
    if batch_size_derived:
        reasons["batch_size"] = _batch_size_reason(
            num_train_images, batch_size, steps_per_epoch, total_steps
        )
    warmup_steps = warmup_steps_for(total_steps, steps_per_epoch)
    reasons["warmup_steps"] = _warmup_reason(warmup_steps, total_steps, steps_per_epoch)
    choices = (reasons, batch_size, epochs, steps_per_epoch, warmup_steps)
    return ViTTrainingRecipe.of_choices(*choices, image_size=image_size, patch_size=int(patch_size))


def _derived_epochs(images_per_epoch):
    """Epochs for about `TARGET_IMAGES_SEEN` images seen, within the bounds."""
    return int(EPOCHS.clamp(int(round(TARGET_IMAGES_SEEN / images_per_epoch))))


def _epochs_reason(images_per_epoch, epochs, images_seen_per_epoch):
    """Why `_derived_epochs(images_per_epoch)` is `epochs`, with the images the run sees.

    `images_seen_per_epoch` are those of an epoch's whole batches.
    """
    wanted = int(round(TARGET_IMAGES_SEEN / images_per_epoch))
    if EPOCHS.low <= wanted <= EPOCHS.high:
        return (
            f"about {TARGET_IMAGES_SEEN:,} images seen in all, {images_seen_per_epoch} an epoch "
            f"({EPOCHS} epochs)"
        )
    seen = epochs * images_seen_per_epoch
    bound, than = ("most", "fewer than") if wanted > epochs else ("fewest", "more than")
    return (
        f"the {bound} epochs ({EPOCHS}): {seen:,} images seen in all, {images_seen_per_epoch} "
        f"an epoch, {than} the {TARGET_IMAGES_SEEN:,} aimed at"
    )


def _derived_batch_size(num_train_images, epochs):
    """A power of two giving enough steps per epoch and in all, within the bounds."""
    batch_size = _power_of_two_at_most(num_train_images / TARGET_STEPS_PER_EPOCH)
    batch_size = int(min(BATCH_SIZES.clamp(batch_size), num_train_images))
    # A ViT from scratch needs optimizer steps more than large batches: halve
    # the batch until the run has MIN_TOTAL_STEPS (the images seen stay the same).
    while (
        batch_size > BATCH_SIZES.low and epochs * (num_train_images // batch_size) < MIN_TOTAL_STEPS
    ):
        batch_size //= 2
    return batch_size


def _batch_size_reason(num_train_images, batch_size, steps_per_epoch, total_steps):
    """Why `_derived_batch_size` chose `batch_size`: the run's steps, and what was aimed at."""
    steps = training_recipe.steps_an_epoch(steps_per_epoch, num_train_images, batch_size)
    said = f"{num_train_images} training images: {steps}, {total_steps:,} in all"
    short = []
    if num_train_images // batch_size < TARGET_STEPS_PER_EPOCH:
        short.append(f"{TARGET_STEPS_PER_EPOCH} steps a pass")
    if total_steps < MIN_TOTAL_STEPS:
        short.append(f"{MIN_TOTAL_STEPS:,} in all")
    if not short:
        return (
            f"{said} (at least {TARGET_STEPS_PER_EPOCH} a pass and {MIN_TOTAL_STEPS:,} in all "
            f"where batches {BATCH_SIZES} allow)"
        )
    if batch_size < BATCH_SIZES.low:
        cause = f"all {num_train_images} images in one batch"
    elif batch_size == BATCH_SIZES.low:
        cause = f"the smallest batch, {BATCH_SIZES.low}"
    else:  # the steps of an epoch are the user's, not a pass
        cause = f"{steps_per_epoch} steps an epoch"
    return f"{said}: fewer than the {' and '.join(short)} aimed at, with {cause}"


def _warmup_reason(warmup_steps, total_steps, steps_per_epoch):
    """Why `warmup_steps_for(total_steps, steps_per_epoch)` is `warmup_steps`."""
    tenth = f"a tenth of the {training_recipe.count_of(total_steps, 'steps')}"
    if warmup_steps < int(total_steps * training_recipe.WARMUP_FRACTION):
        length = f"{training_recipe.count_of(warmup_steps, 'steps')} ({MAX_WARMUP_EPOCHS} "
        length += f"epochs, the most; {tenth} is more)"
    elif warmup_steps > total_steps * training_recipe.WARMUP_FRACTION:
        length = f"{training_recipe.count_of(warmup_steps, 'steps')} ({tenth}, at least 1)"
    else:
        length = tenth
    return f"linear warm-up over {length}, then cosine decay to 0"
