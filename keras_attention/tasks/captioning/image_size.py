"""The size of a caption source's own images, before a model's image size is chosen.

Example:

>>> from keras_attention.tasks.captioning.image_size import native_caption_image_size
>>> native_caption_image_size("builtin")
((48, 48), 'built-in scenes drawn at')
"""

from keras_attention.tasks.captioning.sources import BUILTIN_IMAGE_SIZE
from keras_attention.tasks.captioning.sources import load_caption_dataset
from keras_attention.tasks.captioning.sources import median_image_size


def native_caption_image_size(dataset, seed=0, **source_options):
    """The typical `(height, width)` of a `--dataset`'s training images, and its source.

    The built-in scenes are drawn at `BUILTIN_IMAGE_SIZE`; other sources are
    loaded at their own size and measured with `median_image_size`.

    Args:
        dataset: a `load_caption_dataset` source, e.g. "builtin" or "folder:PATH".
        seed: the seed of the source's split.
        **source_options: the other keyword arguments of
            `load_caption_dataset` (`strict`, `image_column`, ...).

    Returns:
        `((height, width), source)`, `source` the words that name the size in a
        reason, e.g. "median training image".
    """
    if dataset == "builtin":
        return (BUILTIN_IMAGE_SIZE, BUILTIN_IMAGE_SIZE), "built-in scenes drawn at"
    native = load_caption_dataset(dataset, None, seed=seed, **source_options)
    return median_image_size(native["train"]), "median training image"
