"""Karpathy's split files: `dataset_coco.json`, `dataset_flickr8k.json`, `dataset_flickr30k.json`.

The splits that captioning papers report on. Each image entry names its
`split` ("train", "restval", "val" or "test"; restval counts as train), its
`filename` (and, for COCO, its `filepath`, e.g. "val2014"), and its
`sentences`, whose `raw` texts are the captions:

    ROOT/
      dataset_flickr8k.json
      Images/1000268201_693b08cb0e.jpg ...   (or ROOT/, images/, Flicker8k_Dataset/, ...)

    ROOT/
      dataset_coco.json
      train2014/... val2014/...             (`filepath/filename`, relative to ROOT)

The images are looked for in ROOT, then in the usual image folders
(`IMAGE_FOLDERS`); the first that holds the listed files is used. An image
listed under two splits is refused: it would be trained on and scored.

Example:

>>> from keras_attention.tasks.captioning.layouts.karpathy_splits import KARPATHY_SPLITS
>>> KARPATHY_SPLITS["restval"]
'train'
"""

import os

from keras_attention.data.dataset_paths import listed_image_paths
from keras_attention.data.json_files import read_json
from keras_attention.tasks.captioning.layouts.caption_listing import CaptionListing
from keras_attention.tasks.captioning.layouts.caption_listing import add_caption
from keras_attention.tasks.captioning.layouts.caption_listing import one_line

KARPATHY_FILE_PREFIX = "dataset_"
KARPATHY_SPLITS = {"train": "train", "restval": "train", "val": "validation", "test": "test"}
# Folders the images may be in, under ROOT, after ROOT itself.
IMAGE_FOLDERS = (
    "images",
    "Images",
    "Flicker8k_Dataset",
    "Flickr8k_Dataset",
    "flickr30k_images",
)
# Listed images looked at to choose the image folder.
_PROBED_IMAGES = 20


def karpathy_split_files(root):
    """Paths of the `dataset_*.json` files in `root`, sorted."""
    if not os.path.isdir(root):
        return []
    return [
        os.path.join(root, name)
        for name in sorted(os.listdir(root))
        if name.startswith(KARPATHY_FILE_PREFIX) and name.endswith(".json")
    ]


def _entries(path):
    """`[(split, relative image path, [captions], the file's split)]` of a Karpathy split file."""
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("images"), list):
        raise ValueError(f"{path} must be a Karpathy split file: a JSON object with 'images'.")
    entries = []
    for index, image in enumerate(data["images"]):
        try:
            split = KARPATHY_SPLITS[image["split"]]
            name = os.path.join(image.get("filepath", ""), image["filename"])
            captions = [
                one_line(s["raw"] if "raw" in s else " ".join(s["tokens"]))
                for s in image["sentences"]
            ]
        except (KeyError, TypeError) as error:
            raise ValueError(
                f"{path}: image entry {index} must have a 'split' (one of "
                f"{', '.join(KARPATHY_SPLITS)}), a 'filename' and 'sentences' with 'raw' "
                f"texts; it lacks or misreads {error}."
            ) from None
        captions = [caption for caption in captions if caption]
        entries.append((split, name, captions, image["split"]))
    return entries


def _check_one_split_each(path, paths, entries):
    """Raises a ValueError naming an image that the file lists under two of its splits."""
    first = {}
    for index, (resolved, (_, name, _, split)) in enumerate(zip(paths, entries)):
        first_split, first_index = first.setdefault(resolved, (split, index))
        if first_split != split:
            raise ValueError(
                f"{path}: image {name} is listed in two splits, {first_split} (image entry "
                f"{first_index}) and {split} (image entry {index}); an image belongs to one split."
            )


def _image_base(root, names):
    """The folder under `root` (or `root`) that holds the first listed images."""
    probe = names[:_PROBED_IMAGES]
    for base in ("",) + IMAGE_FOLDERS:
        if any(os.path.isfile(os.path.join(root, base, name)) for name in probe):
            return base
    return ""


def read_karpathy_splits(path, strict=False, allow_outside_paths=False, allow_outside_links=False):
    """The images, captions and splits of a Karpathy split file.

    Args:
        path: `ROOT/dataset_NAME.json`.
        strict: unused (a JSON file is read whole or refused).
        allow_outside_paths: accept image paths that leave ROOT.
        allow_outside_links: accept image paths that resolve outside
            ROOT through a symbolic link.

    Returns:
        a `CaptionListing` with "train" (train and restval), "validation"
        and "test".
    """
    del strict
    root = os.path.dirname(os.path.abspath(path))
    entries = _entries(path)
    base = _image_base(root, [name for _, name, _, _ in entries])
    paths = listed_image_paths(
        root,
        [(None, os.path.join(base, name)) for _, name, _, _ in entries],
        path,
        allow_outside_paths,
        allow_outside_links,
    )
    _check_one_split_each(path, paths, entries)
    images = {"train": {}, "validation": {}, "test": {}}
    for resolved, (split, _, captions, _) in zip(paths, entries):
        for caption in captions:
            add_caption(images[split], resolved, caption)
    where = os.path.join(base, "") if base else "ROOT/"
    return CaptionListing(
        f"Karpathy split file {os.path.basename(path)} (images in {where})",
        root,
        images,
        "the file's own splits; restval counts as train",
    )
