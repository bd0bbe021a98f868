"""What a caption layout lists: images and their captions, by split.

Example:

>>> from keras_attention.tasks.captioning.layouts.caption_listing import CaptionListing
>>> listing = CaptionListing("captions.tsv", "/data", {"all": {"/data/a.png": ["a cat"]}})
>>> listing.has_own_splits, listing.num_images
(False, 1)
"""

import dataclasses

from keras_attention.data.dataset_paths import listed_image_paths

# The split of a layout that has none of its own.
ALL = "all"


@dataclasses.dataclass
class CaptionListing:
    """The images and captions a caption layout lists, by split.

    Args:
        layout: the layout and the files read, e.g. "COCO captions
            (annotations/captions_train2014.json, ...)".
        root: the data set's folder.
        images: dict split name -> dict image path -> list of captions.
            The split names are "train", "validation", "test" (a missing
            one is made later, and said so), or only `ALL` for a layout with
            no splits of its own.
        split_rule: how the layout's own files give the splits, e.g.
            "validation and test: val2014/ dealt alternately by file name".

    Raises:
        ValueError: an image is in two splits (it would be trained on and
            scored, with one split's captions for both).
    """

    layout: str
    root: str
    images: dict
    split_rule: str = ""

    def __post_init__(self):
        split_of = {}
        for split, images in self.images.items():
            for path in images:
                if split_of.setdefault(path, split) != split:
                    raise ValueError(
                        f"{self.layout}: image {path} is in two splits, {split_of[path]} and "
                        f"{split}; an image belongs to one split."
                    )

    @property
    def has_own_splits(self):
        """Whether the layout says which image is in which split."""
        return ALL not in self.images

    @property
    def num_images(self):
        """Images over all splits."""
        return sum(len(images) for images in self.images.values())


def add_caption(images, path, caption):
    """Appends `caption` to `images[path]`, starting the list where needed.

    Example:

    >>> from keras_attention.tasks.captioning.layouts.caption_listing import add_caption
    >>> images = {}
    >>> add_caption(images, "a.png", "one"); add_caption(images, "a.png", "two")
    >>> images
    {'a.png': ['one', 'two']}
    """
    images.setdefault(path, []).append(caption)


def captions_by_image(root, entries, source, allow_outside_paths, allow_outside_links):
    """`{image path: [captions]}` of a caption file's `(line number, name, caption)` entries.

    The names are relative to `root` and checked by `listed_image_paths`,
    which refuses (naming the lines of `source`) those that leave it unless
    allowed; an image named on several lines gets their captions in order.

    Example:

    >>> from keras_attention.tasks.captioning.layouts.caption_listing import captions_by_image
    >>> entries = [(1, "a.png", "a cat"), (2, "b.png", "a dog"), (3, "a.png", "a pet")]
    >>> captions_by_image("/d", entries, "captions.tsv", False, False)
    {'/d/a.png': ['a cat', 'a pet'], '/d/b.png': ['a dog']}
    """
    paths = listed_image_paths(
        root,
        [(number, name) for number, name, _ in entries],
        source,
        allow_outside_paths,
        allow_outside_links,
    )
    images = {}
    for path, (_, _, caption) in zip(paths, entries):
        add_caption(images, path, caption)
    return images


def one_line(text):
    """`text` with its runs of spaces, tabs and line ends made one space, and stripped.

    Example:

    >>> from keras_attention.tasks.captioning.layouts.caption_listing import one_line
    >>> one_line("  A man\\n riding a bike.  ")
    'A man riding a bike.'
    """
    return " ".join(str(text).split())
