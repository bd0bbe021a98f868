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
(`IMAGE_FOLDERS`); the first that holds the listed files is used.

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
    """`[(split, relative image path, [captions])]` of a Karpathy split file."""
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
        entries.append((split, name, [caption for caption in captions if caption]))
    return entries


def _image_base(root, names):
    """The folder under `root` (or `root`) that holds the first listed images."""
    probe = names[:_PROBED_IMAGES]
    for base in ("",) + IMAGE_FOLDERS:
        if any(os.path.isfile(os.path.join(root, base, name)) for name in probe):
            return base
    return ""


def read_karpathy_splits(path, strict=False, allow_outside_paths=False):
    """The images, captions and splits of a Karpathy split file.

    Args:
        path: `ROOT/dataset_NAME.json`.
        strict: unused (a JSON file is read whole or refused).
        allow_outside_paths: accept image paths that leave ROOT.

    Returns:
        a `CaptionListing` with "train" (train and restval), "validation"
        and "test".
    """
    del strict
    root = os.path.dirname(os.path.abspath(path))
    entries = _entries(path)
    base = _image_base(root, [name for _, name, _ in entries])
    paths = listed_image_paths(
        root,
        [(None, os.path.join(base, name)) for _, name, _ in entries],
        path,
        allow_outside_paths,
    )
    images = {"train": {}, "validation": {}, "test": {}}
    for resolved, (split, _, captions) in zip(paths, entries):
        for caption in captions:
            add_caption(images[split], resolved, caption)
    where = os.path.join(base, "") if base else "ROOT/"
    return CaptionListing(
        f"Karpathy split file {os.path.basename(path)} (images in {where})",
        root,
        images,
        "the file's own splits; restval counts as train",
    )
