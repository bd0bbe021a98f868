"""A Vision Transformer's training data: images at the model's shape, the recipe and the batches.

`prepare_vit_data` loads the `--dataset` at the shape the model works at
(keeping a folder's aspect ratio), fills in the flags left out with
`resolve_vit_recipe`, and makes the batches: training ones shuffled and
augmented (`vit_augmentation`), validation and test ones as they are.
"""

import dataclasses

from keras_attention.data.dataset_length import dataset_length
from keras_attention.data.dataset_splits import check_scored_split
from keras_attention.data.image_decoding import undecodable_images
from keras_attention.data.worker_shards import ONE_WORKER
from keras_attention.tasks.image_classification.batches import make_classification_batches
from keras_attention.tasks.image_classification.evaluation import class_prior_loss
from keras_attention.tasks.image_classification.flags import vit_augmentation
from keras_attention.tasks.image_classification.recipe_from_flags import resolve_vit_recipe
from keras_attention.tasks.image_classification.recipe_from_flags import vit_model_input_shape
from keras_attention.tasks.image_classification.sources import list_image_folder
from keras_attention.tasks.image_classification.sources import load_image_classification_dataset
from keras_attention.tasks.image_classification.sources import native_image_size
from keras_attention.tasks.run_vocabulary import keep_class_names
from keras_attention.training.input_errors import download_errors_as_exit

# The run's file of the images its pipelines cannot decode.


@dataclasses.dataclass
class ViTData:
    """What `prepare_vit_data` made of a run's images.

    Args:
        splits: dict "train", "validation", "test" -> unbatched `(image, label)` pairs.
        class_names: list of str, one per class.
        image_shape: `(height, width)` the model works at.
        augmentation: the augmentation kind of the training batches.
        recipe: the `ViTTrainingRecipe`.
        train: shuffled, augmented `(images, one-hot labels)` batches.
        validation: validation batches.
        test: test batches, in order.
        split_sizes: dict split name -> number of images.
        class_counts: dict split name -> images per class (in label
            order), where the listing of the files gives them.
        source_lines: what was read: the layout, the classes and the images
            of each split, one line each.
        skipped: the `SkippedItems` of the images the pipelines cannot
            decode, for a run to report once an epoch.
        class_prior_loss: the loss of predicting the training class
            frequencies, which a learning model leaves behind.
    """

    splits: dict
    class_names: list
    image_shape: tuple
    augmentation: str
    recipe: object
    train: object
    validation: object
    test: object
    split_sizes: dict
    source_lines: list
    skipped: tuple = ()
    class_prior_loss: float = None
    class_counts: dict = None

    @property
    def num_classes(self):
        """Number of classes, `len(class_names)`."""
        return len(self.class_names)

    def summary_lines(self):
        """The data, the recipe's choices and the augmentation, one line each, to print."""
        return (
            self.source_lines
            + self.recipe.summary_lines()
            + [
                f"augmentation {self.augmentation}: training batches only, never at evaluation "
                "or export"
            ]
        )


def prepare_vit_data(args, shuffle_seed=None, shard=ONE_WORKER):
    """Images, recipe and batches of the run `args` describes.

    Fills `args.recipe`, `args.patch_size`, `args.batch_size` and
    `args.epochs` where `parse_vit_arguments` could not yet (a data set
    whose size is known once loaded).

    Args:
        args: the parsed flags (`parse_vit_arguments`).
        shuffle_seed: the seed of the training images' order and augmentation
            (default `args.seed`; a resumed run passes another, not to see the
            same batches again). The splits depend on `args.seed` alone.
        shard: `(num_workers, index)`: this worker's share of the training files.

    Returns:
        a `ViTData`.

    Example:

    >>> from keras_attention.tasks.image_classification.recipe_from_flags import parse_vit_arguments
    >>> from keras_attention.tasks.image_classification.training_data import prepare_vit_data
    >>> args = parse_vit_arguments(["--builtin-sizes", "64", "8", "8", "--epochs", "2"])
    >>> data = prepare_vit_data(args)
    >>> data.image_shape, data.num_classes, args.batch_size, data.summary_lines()[-1][:15]
    ((32, 32), 12, 16, 'augmentation no')
    >>> data.split_sizes, data.summary_lines()[0]
    ({'train': 64, 'validation': 8, 'test': 8}, 'data: built-in shapes')
    """
    listing = None
    if args.dataset.startswith("folder:"):  # listed once: the size and the splits read it
        listing = list_image_folder(args.dataset, args.strict, args.allow_outside_links)
    native_size = native_image_size(args.dataset, strict=args.strict, listing=listing)
    image_shape = vit_model_input_shape(args, native_size)
    with download_errors_as_exit():
        loaded = load_image_classification_dataset(
            args.dataset,
            image_shape,
            seed=args.seed,
            builtin_sizes=args.builtin_sizes,
            data_dir=args.data_dir,
            strict=args.strict,
            skipped=undecodable_images(args.output_dir, args.strict),
            shuffle_seed=shuffle_seed,
            shard=shard,
            listing=listing,
        )
    check_scored_split(loaded.split_sizes, "test", "images", loaded.layout)  # before training
    keep_class_names(args.output_dir, loaded.class_names, args.dataset)  # as it trained on them
    if args.recipe is None:
        num_train = loaded.split_sizes.get("train")
        if num_train is None:  # a tfds split of unknown length: counted once
            num_train = dataset_length(loaded.splits["train"])
        resolve_vit_recipe(args, num_train, native_size)
    augmentation = vit_augmentation(args)

    def batches(split, **training):
        return make_classification_batches(
            loaded.splits[split], args.batch_size, loaded.num_classes, **training
        )

    class_counts = dict(loaded.class_counts or {})  # per split, where the listing gives them
    return ViTData(
        splits=loaded.splits,
        class_names=loaded.class_names,
        image_shape=image_shape,
        augmentation=augmentation,
        recipe=args.recipe,
        train=batches(
            "train",
            shuffle_seed=args.seed if shuffle_seed is None else shuffle_seed,
            augmentation=augmentation,
        ),
        validation=batches("validation"),
        test=batches("test"),
        split_sizes=dict(loaded.split_sizes),
        source_lines=loaded.summary_lines(),
        skipped=tuple(loaded.skipped),
        class_prior_loss=class_prior_loss(loaded.splits["train"], class_counts.get("train")),
        class_counts=class_counts,
    )
