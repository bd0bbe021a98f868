"""Which caption layout a `folder:` path holds, recognised from the files it has.

`find_caption_layout(path)` takes the data set's folder, or one of its
caption files to choose between layouts that share a folder, and reads the
layout it recognises. A folder with none of them, or with several, is an
error that says what was looked for, or which files to point at instead.

Example:

>>> import os, tempfile
>>> from keras_attention.tasks.captioning.layouts.layout_detection import find_caption_layout
>>> root = tempfile.mkdtemp()
>>> _ = open(os.path.join(root, "captions.tsv"), "w").write("a.png\\ta cat\\n")
>>> find_caption_layout(root).layout
'captions.tsv'
"""

import os

from keras_attention.tasks.captioning.layouts.caption_csv import KAGGLE_CAPTIONS_FILE
from keras_attention.tasks.captioning.layouts.caption_csv import KAGGLE_IMAGE_FOLDER
from keras_attention.tasks.captioning.layouts.caption_csv import read_caption_csv
from keras_attention.tasks.captioning.layouts.captions_tsv import CAPTIONS_FILE
from keras_attention.tasks.captioning.layouts.captions_tsv import read_captions_tsv
from keras_attention.tasks.captioning.layouts.coco_annotations import ANNOTATIONS_FOLDER
from keras_attention.tasks.captioning.layouts.coco_annotations import COCO_ANNOTATION_FILE
from keras_attention.tasks.captioning.layouts.coco_annotations import coco_annotation_files
from keras_attention.tasks.captioning.layouts.coco_annotations import read_coco_captions
from keras_attention.tasks.captioning.layouts.flickr8k_text import TOKEN_FILE
from keras_attention.tasks.captioning.layouts.flickr8k_text import flickr8k_token_file
from keras_attention.tasks.captioning.layouts.flickr8k_text import read_flickr8k_text
from keras_attention.tasks.captioning.layouts.karpathy_splits import KARPATHY_FILE_PREFIX
from keras_attention.tasks.captioning.layouts.karpathy_splits import karpathy_split_files
from keras_attention.tasks.captioning.layouts.karpathy_splits import read_karpathy_splits

LOOKED_FOR = (
    f"{CAPTIONS_FILE} (file<TAB>caption lines); "
    f"{ANNOTATIONS_FOLDER}/captions_trainYEAR.json with trainYEAR/ (COCO); "
    f"{KARPATHY_FILE_PREFIX}*.json (Karpathy's split files); "
    f"Flickr8k_text/{TOKEN_FILE} with Flicker8k_Dataset/ (Flickr8k as shipped); "
    f"{KAGGLE_CAPTIONS_FILE} with {KAGGLE_IMAGE_FOLDER}/ (Kaggle's Flickr8k)"
)


def _kaggle(path, strict, allow_outside_paths, allow_outside_links):
    root = os.path.dirname(os.path.abspath(path))
    return read_caption_csv(
        path,
        os.path.join(root, KAGGLE_IMAGE_FOLDER),
        strict=strict,
        allow_outside_paths=allow_outside_paths,
        layout=f"Kaggle's Flickr8k ({KAGGLE_CAPTIONS_FILE}, images in {KAGGLE_IMAGE_FOLDER}/)",
        allow_outside_links=allow_outside_links,
    )


def _coco(path, strict, allow_outside_paths, allow_outside_links):
    year = COCO_ANNOTATION_FILE.fullmatch(os.path.basename(path)).group(2)
    root = os.path.dirname(os.path.dirname(os.path.abspath(path)))
    return read_coco_captions(root, year, strict, allow_outside_paths, allow_outside_links)


def _reader_of_file(path):
    """The reader of a caption file chosen by its name, or None."""
    name = os.path.basename(path)
    parent = os.path.basename(os.path.dirname(os.path.abspath(path)))
    if name.endswith(".tsv"):
        return read_captions_tsv
    if COCO_ANNOTATION_FILE.fullmatch(name) and parent == ANNOTATIONS_FOLDER:
        return _coco
    if name.startswith(KARPATHY_FILE_PREFIX) and name.endswith(".json"):
        return read_karpathy_splits
    if name == TOKEN_FILE:
        return read_flickr8k_text
    if name == KAGGLE_CAPTIONS_FILE:
        return _kaggle
    return None


def caption_layout_files(root):
    """`[(layout name, file to point at)]` of every caption layout found in `root`."""
    found = []
    if os.path.isfile(os.path.join(root, CAPTIONS_FILE)):
        found.append((CAPTIONS_FILE, os.path.join(root, CAPTIONS_FILE)))
    for year, files in coco_annotation_files(root).items():
        found.append((f"COCO {year}", files.get("train", files.get("val"))))
    for path in karpathy_split_files(root):
        found.append((f"Karpathy's {os.path.basename(path)}", path))
    token_file = flickr8k_token_file(root)
    if token_file:
        found.append(("Flickr8k", token_file))
    kaggle = os.path.join(root, KAGGLE_CAPTIONS_FILE)
    if os.path.isfile(kaggle) and os.path.isdir(os.path.join(root, KAGGLE_IMAGE_FOLDER)):
        found.append(("Kaggle's Flickr8k", kaggle))
    return found


def find_caption_layout(path, strict=False, allow_outside_paths=False, allow_outside_links=False):
    """Recognises and reads the caption layout at `path` (a folder or a caption file).

    Args:
        path: the data set's folder, or the caption file of the layout to
            read (`captions.tsv` or another `.tsv`, `annotations/captions_
            trainYEAR.json`, `dataset_*.json`, `Flickr8k.token.txt`,
            `captions.txt`).
        strict: a malformed or non-UTF-8 line raises a ValueError naming it.
        allow_outside_paths: accept image paths that leave the data set.
        allow_outside_links: accept image paths that resolve outside the
            data set through a symbolic link.

    Returns:
        a `CaptionListing`.

    Raises:
        ValueError: `path` does not exist, holds no layout (the message lists
            what was looked for) or several (it lists the files to point at).
    """
    if os.path.isfile(path):
        reader = _reader_of_file(path)
        if reader is None:
            raise ValueError(
                f"{path} is not a caption file this loader knows; point at a folder or at one "
                f"of: {LOOKED_FOR}."
            )
        return reader(path, strict, allow_outside_paths, allow_outside_links)
    if not os.path.isdir(path):
        raise ValueError(f"{path} is neither a folder nor a caption file.")
    found = caption_layout_files(path)
    if not found:
        raise ValueError(f"{path} holds none of the caption layouts looked for: {LOOKED_FOR}.")
    if len(found) > 1:
        choices = "; ".join(f"{name}: folder:{file}" for name, file in found)
        raise ValueError(
            f"{path} holds {len(found)} caption layouts; point --dataset at the file of the "
            f"one to read: {choices}."
        )
    return find_caption_layout(found[0][1], strict, allow_outside_paths, allow_outside_links)
