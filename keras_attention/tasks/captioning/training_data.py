"""A captioner's data from its flags: the splits, at the image size the model sees.

`load_caption_splits(args)` reads `--dataset` once, prints which layout it
recognised and how its splits were made, derives `--image-size` from the
training images where it was left out (the median image, its aspect ratio
kept, on the model's stride) and prints it with its reason.

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

from keras_attention.tasks.captioning.flags import source_options
from keras_attention.tasks.captioning.recipe import derived_image_size
from keras_attention.tasks.captioning.sources import BUILTIN_IMAGE_SIZE
from keras_attention.tasks.captioning.sources import load_caption_dataset
from keras_attention.tasks.captioning.sources import median_image_size
from keras_attention.training.download_errors import download_errors_as_exit


def _derive(args, native_size, source):
    size, reason = derived_image_size(native_size, args.backbone, source, args.patch_size)
    args.image_size = size
    return reason


def load_caption_splits(args):
    """The `(image, caption)` splits of `args.dataset` at the model's image size.

    Fills `args.image_size` where it was left out. A data set's files are
    listed and checked once: without a given size they are loaded at their
    own size, measured, then made at the derived size.

    Args:
        args: the parsed flags (`build_captioning_parser`, with the model's
            defaults).

    Returns:
        the `DatasetSplits` of `load_caption_dataset`.

    Raises:
        SystemExit: a tensorflow-datasets set cannot be downloaded (one line).
    """
    reason = "given"
    if args.image_size is None and args.dataset == "builtin":
        native = (BUILTIN_IMAGE_SIZE, BUILTIN_IMAGE_SIZE)
        reason = _derive(args, native, "built-in scenes drawn at")
    with download_errors_as_exit():
        splits = load_caption_dataset(args.dataset, args.image_size, **source_options(args))
        print(f"data: {splits.summary()}")
        if args.image_size is None:
            reason = _derive(args, median_image_size(splits["train"]), "median training image")
            splits = splits.resized(args.image_size)
    print(f"image size {args.image_size[0]}x{args.image_size[1]}: {reason}")
    return splits
