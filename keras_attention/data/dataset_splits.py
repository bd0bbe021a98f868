"""The splits a data source gives, with their sizes and the layout they were read from.

Example:

>>> import tensorflow as tf
>>> from keras_attention.data.dataset_splits import DatasetSplits
>>> pairs = tf.data.Dataset.from_tensor_slices((["a", "b"], ["x", "y"]))
>>> splits = DatasetSplits(
...     {"train": pairs, "validation": pairs.take(0), "test": pairs.take(0)},
...     {"train": 2, "validation": 0, "test": 0},
...     "tsv:pairs.tsv",
...     unit="sentence pairs",
... )
>>> sorted(splits), splits.sizes["train"]
(['test', 'train', 'validation'], 2)
>>> splits.summary()
'tsv:pairs.tsv: train 2 sentence pairs, validation 0, test 0'
"""

SPLIT_NAMES = ("train", "validation", "test")


class DatasetSplits(dict):
    """`{split name: tf.data.Dataset}`, with the size of each split and where it came from.

    A dict, so code that indexes the splits by name keeps working; the
    extra attributes are what a run reports (`metrics.json`'s
    `split_sizes`) and prints (`summary`).

    Args:
        datasets: dict split name -> `tf.data.Dataset`.
        sizes: dict split name -> number of images (or sentence pairs).
        layout: what was read, e.g. "COCO captions (annotations/...)".
        split_rule: how the splits were made, e.g. "a seeded random split";
            "" where the source gives them.
        unit: what `sizes` counts, for `summary`.
        rebuild: None, or a function of an image size that makes these
            splits again at that size (see `resized`).
        sample: None, or a list of training items read before training (a
            source that streams its files learns vocabularies and lengths
            from it): all of them for a small data set.
        estimated: whether `sizes` are estimates, from a sample of a data
            set too large to count before training.
        skipped: the `SkippedItems` the splits' pipelines tell of what they
            skip, for a run to report once an epoch.
        elements: dict split name -> the elements of its dataset where they
            are not `sizes` (an image's captions are one element each); by
            default `sizes`.
    """

    def __init__(
        self,
        datasets,
        sizes,
        layout,
        split_rule="",
        unit="images",
        rebuild=None,
        *,
        sample=None,
        estimated=False,
        skipped=(),
        elements=None,
    ):
        super().__init__(datasets)
        self.sizes = {name: int(size) for name, size in sizes.items()}
        self.layout = layout
        self.split_rule = split_rule
        self.unit = unit
        self._rebuild = rebuild
        self.sample = sample
        self.estimated = bool(estimated)
        self.skipped = tuple(skipped)
        self.elements = dict(self.sizes if elements is None else elements)

    def resized(self, image_size):
        """The same splits with images at `image_size`, the listing not read again.

        Splits loaded at their own size (`image_size=None`) are measured,
        then made at the size chosen from them, without listing and
        checking every file a second time.
        """
        if self._rebuild is None:
            raise ValueError(
                f"These splits ({self.layout}) cannot be made at another image size. "
                f"Received: image_size={image_size!r}"
            )
        return self._rebuild(image_size)

    def summary(self):
        """One line: the layout, the size of each split, and how the splits were made."""
        about = "about " if self.estimated else ""
        counts = [f"{name} {about}{self.sizes.get(name, 0)}" for name in SPLIT_NAMES]
        counts[0] += f" {self.unit}"
        rule = f" ({self.split_rule})" if self.split_rule else ""
        return f"{self.layout}: {', '.join(counts)}{rule}"


def check_scored_split(sizes, scored, unit, source):
    """Stops before training when the split a run is scored on holds nothing.

    A data set of a few items (a file of 2 sentence pairs, one image per
    class) leaves its held-out splits empty; the run would train, then fail
    when it scores. This says so first.

    Args:
        sizes: dict split name -> number of items (None where unknown).
        scored: the split the run is scored on ("test" or "validation").
        unit: what the items are, e.g. "sentence pairs".
        source: the data set, as its summary line names it.

    Raises:
        ValueError: `sizes[scored]` is 0; the message gives every split's size.

    Example:

    >>> from keras_attention.data.dataset_splits import check_scored_split
    >>> check_scored_split({"train": 8, "test": 1}, "test", "images", "folder:pets")
    >>> check_scored_split({"train": 2, "validation": 0, "test": 0}, "test", "sentence pairs",
    ...                    "tsv file pairs.tsv")
    Traceback (most recent call last):
    ...
    ValueError: `dataset` must leave sentence pairs for the test split, ... test 0: ...
    """
    if sizes.get(scored) != 0:
        return
    counts = ", ".join(f"{name} {count}" for name, count in sizes.items())
    raise ValueError(
        f"`dataset` must leave {unit} for the {scored} split, which the run is scored on; "
        f"{source} gives {counts}: give it more {unit}, or a layout with its own {scored} "
        f"split. Received: sizes={sizes}"
    )
