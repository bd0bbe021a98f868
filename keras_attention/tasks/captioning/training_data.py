"""A captioner's data from its flags: the splits, the vocabulary, the recipe and the batches.

`load_caption_splits(args)` reads `--dataset` once, prints which layout it
recognised and how its splits were made, derives `--image-size` from the
training images where it was left out (the median image, its aspect ratio
kept, on the model's stride) and prints it with its reason.
`prepare_caption_data(splits, args)` then learns the vocabulary of the
training captions, derives the caption length and the training recipe, and
makes the teacher-forcing batches.

Example:

>>> from keras_attention.tasks.captioning.flags import (
...     build_captioning_parser, with_captioner_defaults)
>>> from keras_attention.tasks.captioning.training_data import load_caption_splits
>>> parser = build_captioning_parser()
>>> args = with_captioner_defaults(parser.parse_args(["--builtin-sizes", "4", "2", "2"]))
>>> splits = load_caption_splits(args)
data: built-in scenes: train 4 images, validation 2, test 2
image size 48x48: built-in scenes drawn at 48x48, ...: a 12x12 feature grid
>>> splits.sizes
{'train': 4, 'validation': 2, 'test': 2}
"""

import dataclasses

from keras_attention.data.dataset_splits import check_scored_split
from keras_attention.data.image_decoding import undecodable_images
from keras_attention.data.worker_shards import ONE_WORKER
from keras_attention.losses.prior_cross_entropy import prior_cross_entropy
from keras_attention.models.checkpoints.checkpoint_readers import checkpoint_model_type
from keras_attention.models.checkpoints.swin_checkpoints import swin_checkpoint_input
from keras_attention.models.checkpoints.vit_checkpoints import vit_checkpoint_input
from keras_attention.tasks.captioning.batches import fits_in_memory
from keras_attention.tasks.captioning.batches import training_and_validation_batches
from keras_attention.tasks.captioning.flags import source_options
from keras_attention.tasks.captioning.recipe import captioning_training_recipe
from keras_attention.tasks.captioning.recipe import derived_image_size
from keras_attention.tasks.captioning.sources import BUILTIN_IMAGE_SIZE
from keras_attention.tasks.captioning.sources import load_caption_dataset
from keras_attention.tasks.captioning.sources import median_image_size
from keras_attention.tasks.captioning.vocabulary import caption_length
from keras_attention.tasks.captioning.vocabulary import caption_token_ids
from keras_attention.tasks.captioning.vocabulary import train_caption_vocabulary
from keras_attention.tasks.run_vocabulary import kept_tokenizers
from keras_attention.training.input_errors import download_errors_as_exit


def _derive(args, native_size, source):
    size, reason = derived_image_size(native_size, args.backbone, source, args.patch_size)
    args.image_size = size
    return reason


def load_caption_splits(args, shuffle_seed=None, shard=ONE_WORKER):
    """The `(image, caption)` splits of `args.dataset` at the model's image size.

    Fills `args.image_size` where it was left out. A data set's files are
    listed and checked once: without a given size they are loaded at their
    own size, measured, then made at the derived size.

    Args:
        args: the parsed flags (`build_captioning_parser`, with the model's
            defaults).
        shuffle_seed: the seed of the training images' order (default
            `args.seed`; a resumed run passes another). The splits depend
            on `args.seed` only.
        shard: `(num_workers, index)`: this worker's share of the training
            images (`TrainingRun.input_shard`).

    Returns:
        the `DatasetSplits` of `load_caption_dataset`.

    Raises:
        SystemExit: a tensorflow-datasets set cannot be downloaded (one line).
    """
    reason = "given"
    if args.image_size is None and getattr(args, "init_from", None):
        args.image_size = checkpoint_image_size(args.init_from)
        reason = f"the checkpoint's ({args.init_from}), the images resized to it"
    if args.image_size is None and args.dataset == "builtin":
        native = (BUILTIN_IMAGE_SIZE, BUILTIN_IMAGE_SIZE)
        reason = _derive(args, native, "built-in scenes drawn at")
    undecodable = undecodable_images(args.output_dir, args.strict)
    with download_errors_as_exit():
        splits = load_caption_dataset(
            args.dataset,
            args.image_size,
            skipped=undecodable,
            shuffle_seed=shuffle_seed,
            shard=shard,
            **source_options(args),
        )
        print(f"data: {splits.summary()}")
        if args.image_size is None:
            reason = _derive(args, median_image_size(splits["train"]), "median training image")
            splits = splits.resized(args.image_size)
    print(f"image size {args.image_size[0]}x{args.image_size[1]}: {reason}")
    return splits


def checkpoint_image_size(folder):
    """`(height, width)` the image classifier of a checkpoint folder reads (ViT or Swin)."""
    _, model_type = checkpoint_model_type(folder)
    read_input = swin_checkpoint_input if model_type == "swin" else vit_checkpoint_input
    try:
        return tuple(read_input(folder)[1])
    except ValueError as error:
        raise SystemExit(f"--init-from {folder}: {error}") from None


@dataclasses.dataclass
class CaptionData:
    """What `prepare_caption_data` made of a captioner's splits.

    Args:
        splits: the `DatasetSplits` of `(image, caption)` pairs.
        encoder: the `ReversibleTokenizer` of the training captions.
        max_length: tokens per caption, the start and end tokens included.
        recipe: the `CaptioningTrainingRecipe` (batch size, epochs, schedule).
        unigram_loss: the loss of predicting the caption words' frequencies,
            which a captioner that looks at the images goes below.
        train, validation: the teacher-forcing batches.
        skipped: the `SkippedItems` of the images the pipelines cannot
            decode, for a run to report once an epoch.
    """

    splits: object
    encoder: object
    max_length: int
    recipe: object
    unigram_loss: float
    train: object
    validation: object
    skipped: tuple = ()


def prepare_caption_data(splits, args, shuffle_seed=None):
    """The vocabulary, caption length, recipe and batches of a captioner's splits.

    Prints the vocabulary and the recipe's choices with their reasons. The
    vocabulary is saved under `args.output_dir`; a run that has trained
    keeps the one it saved (`run_vocabulary.kept_tokenizers`). The
    vocabulary, caption length and unigram loss come from the training
    captions (`splits.sample`, at most a sample of them), never from
    decoding an image.

    Args:
        splits: what `load_caption_splits(args)` returned.
        args: the parsed flags.
        shuffle_seed: the seed of the training batches' shuffle (default
            `args.seed`).

    Returns:
        a `CaptionData`.
    """
    check_scored_split(splits.sizes, "test", "images", splits.layout)  # before any training
    captions = splits.sample
    kept = kept_tokenizers(args.output_dir, ("",))  # a run that goes on keeps its own
    if kept is None:
        kept = (train_caption_vocabulary(captions, args.vocabulary_size, args.output_dir),)
    encoder = kept[0]
    max_length = caption_length(captions, encoder, args.max_length)
    print(f"vocabulary: {encoder.vocabulary_size} tokens; captions of up to {max_length} tokens")
    num_examples = splits.elements["train"]
    recipe = captioning_training_recipe(
        num_examples,
        args.train_steps,
        args.learning_rate,
        args.batch_size,
        args.epochs,
        args.earliest_decay_step,
        getattr(args, "steps_per_epoch", None),
    )
    print("\n".join(recipe.summary_lines()))
    cache = args.dataset == "builtin" or fits_in_memory(num_examples, args.image_size)
    seed = args.seed if shuffle_seed is None else shuffle_seed
    train, validation = training_and_validation_batches(
        splits, encoder, recipe.batch_size, max_length, seed, cache
    )
    unigram_loss = prior_cross_entropy(caption_token_ids(captions, encoder))
    return CaptionData(
        splits, encoder, max_length, recipe, unigram_loss, train, validation, splits.skipped
    )
