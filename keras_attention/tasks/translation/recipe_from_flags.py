"""The translation training recipe, chosen for the data and written back into the parsed flags.

After `apply_translation_recipe`, `args.max_length`, `args.batch_size` and
`args.epochs` hold numbers: the user's where given, derived from the
training set otherwise (see `translation_training_recipe`).

Example:

>>> from keras_attention.tasks.translation.flags import parse_translation_arguments
>>> from keras_attention.tasks.translation.recipe_from_flags import apply_translation_recipe
>>> args = parse_translation_arguments(["--epochs", "5"])
>>> recipe = apply_translation_recipe(args, 2000, source_length=14, target_length=11)
>>> args.max_length, args.batch_size, args.epochs, recipe.reasons["epochs"]
(16, 32, 5, 'set by the user')
"""

from keras_attention.tasks.translation.recipe import translation_training_recipe


def apply_translation_recipe(
    args, num_train_pairs, source_length, target_length, length_basis=None
):
    """Fills `args.max_length`, `args.batch_size` and `args.epochs`; returns the recipe.

    Args:
        args: the parsed flags (`parse_translation_arguments`).
        num_train_pairs: number of training sentence pairs.
        source_length, target_length: the tokens the training sentences
            fit (see `translation_training_recipe`).
        length_basis: what those lengths are, for the printed reason; None
            for the longest sentences.

    Returns:
        the `TranslationTrainingRecipe` (its `summary_lines()` say why).
    """
    recipe = translation_training_recipe(
        num_train_pairs,
        source_length,
        target_length,
        max_length=args.max_length,
        batch_size=args.batch_size,
        epochs=args.epochs,
        steps_per_epoch=getattr(args, "steps_per_epoch", None),
        model=_trained_model(args),
        **({} if length_basis is None else {"length_basis": length_basis}),
    )
    args.max_length, args.batch_size, args.epochs = (
        recipe.max_length,
        recipe.batch_size,
        recipe.epochs,
    )
    return recipe


def _trained_model(args):
    """The model `args` train, "transformer" or "rnn" (a checkpoint is a Transformer)."""
    if getattr(args, "init_from", None):
        return "transformer"
    return getattr(args, "model", "transformer")
