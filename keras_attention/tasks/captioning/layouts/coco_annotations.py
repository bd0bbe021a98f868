"""COCO captions as downloaded: `annotations/captions_{train,val}YEAR.json` and image folders.

    ROOT/
      annotations/captions_train2014.json   (or 2017)
      annotations/captions_val2014.json
      train2014/COCO_train2014_000000000009.jpg ...
      val2014/COCO_val2014_000000000042.jpg ...

Training images come from the train annotations; the val images, which COCO
gives as one split, are dealt alternately by file name into validation and
test (the same for every run and seed). Without a val file, validation and
test are drawn from train later (and said so). The image folders may also be
under `ROOT/images/`. An image id listed twice with two files, or one file
listed under two ids, is refused: either would attach captions to the wrong
image; so is a caption whose image id the file does not list.

Example:

>>> import json, os, tempfile
>>> from keras_attention.tasks.captioning.layouts.coco_annotations import coco_annotation_files
>>> root = tempfile.mkdtemp()
>>> os.mkdir(os.path.join(root, "annotations"))
>>> path = os.path.join(root, "annotations", "captions_val2017.json")
>>> json.dump({"images": [], "annotations": []}, open(path, "w"))
>>> {year: sorted(files) for year, files in coco_annotation_files(root).items()}
{'2017': ['val']}
"""

import json
import os
import re

from keras_attention.data.dataset_paths import listed_image_paths
from keras_attention.data.held_out_splits import every_other
from keras_attention.data.json_files import read_json
from keras_attention.tasks.captioning.layouts.caption_listing import ALL
from keras_attention.tasks.captioning.layouts.caption_listing import CaptionListing
from keras_attention.tasks.captioning.layouts.caption_listing import add_caption
from keras_attention.tasks.captioning.layouts.caption_listing import one_line

ANNOTATIONS_FOLDER = "annotations"
COCO_ANNOTATION_FILE = re.compile(r"captions_(train|val)(\d{4})\.json")


def coco_annotation_files(root):
    """`{year: {"train" | "val": path}}` of the caption annotation files under `root`."""
    folder = os.path.join(root, ANNOTATIONS_FOLDER)
    found = {}
    if os.path.isdir(folder):
        for name in sorted(os.listdir(folder)):
            match = COCO_ANNOTATION_FILE.fullmatch(name)
            if match:
                found.setdefault(match.group(2), {})[match.group(1)] = os.path.join(folder, name)
    return found


def _image_folder(root, kind, year, annotation_path):
    """The folder of a split's images: `ROOT/train2014` or `ROOT/images/train2014`."""
    name = f"{kind}{year}"
    for folder in (name, os.path.join("images", name)):
        if os.path.isdir(os.path.join(root, folder)):
            return folder
    raise ValueError(
        f"The images of {annotation_path} belong in {os.path.join(root, name)}/ (or "
        f"{os.path.join(root, 'images', name)}/), which does not exist."
    )


def _file_names(path, folder, images):
    """`{image id: file name}` of a COCO file's `images`, refusing ids and files listed twice.

    The same entry repeated is harmless; an id with two files, or a file
    with two ids, would attach one image's captions to another.
    """
    names, ids = {}, {}
    for image in images:
        image_id, name = image["id"], image["file_name"]
        if names.setdefault(image_id, name) != name:
            first, second = (os.path.join(folder, str(n)) for n in (names[image_id], name))
            raise ValueError(f"{path}: image id {image_id!r} is listed twice ({first}, {second}).")
        if ids.setdefault(name, image_id) != image_id:
            raise ValueError(
                f"{path}: image file {os.path.join(folder, str(name))} is listed under two ids "
                f"({ids[name]!r}, {image_id!r})."
            )
    return names


def _read_annotations(path, root, folder, allow_outside_paths, allow_outside_links=False):
    """`{image path: [captions]}` of one COCO caption file, images in `root/folder`."""
    data = read_json(path)
    if not (
        isinstance(data, dict)
        and isinstance(data.get("images"), list)
        and isinstance(data.get("annotations"), list)
    ):
        raise ValueError(
            f"{path} must be a COCO caption file: a JSON object with 'images' and "
            "'annotations' lists."
        )
    try:
        names = _file_names(path, folder, data["images"])
        captions = [(note["image_id"], note["caption"]) for note in data["annotations"]]
    except (KeyError, TypeError) as error:
        raise ValueError(
            f"{path} must list images with 'id' and 'file_name', and annotations with "
            f"'image_id' and 'caption'; an entry lacks {error}."
        ) from None
    ids = sorted(names)
    paths = listed_image_paths(
        root,
        [(None, os.path.join(folder, str(names[i]))) for i in ids],
        path,
        allow_outside_paths,
        allow_outside_links,
    )
    path_of = dict(zip(ids, paths))
    unlisted = [(image_id, caption) for image_id, caption in captions if image_id not in path_of]
    if unlisted:
        image_id, caption = unlisted[0]
        raise ValueError(
            f"{path}: {len(unlisted)} of its {len(captions)} captions name an image id its "
            f"'images' do not list (the first: image id {image_id!r}, {str(caption)!r:.80})."
        )
    not_text = [
        (image_id, caption) for image_id, caption in captions if not isinstance(caption, str)
    ]
    if not_text:  # str() of them would train on "None" or "123"
        image_id, caption = not_text[0]
        raise ValueError(
            f"{path}: {len(not_text)} of its {len(captions)} captions are not text (the first: "
            f"image id {image_id!r}, caption {json.dumps(caption):.80})."
        )
    images = {}
    for image_id, caption in captions:
        if one_line(caption):
            add_caption(images, path_of[image_id], one_line(caption))
    return images


def read_coco_captions(
    root, year, strict=False, allow_outside_paths=False, allow_outside_links=False
):
    """The COCO caption files of `year` under `root`, by split.

    Args:
        root: the folder holding `annotations/`.
        year: "2014" or "2017", a key of `coco_annotation_files(root)`.
        strict: unused (a JSON file is read whole or refused); for a
            uniform signature.
        allow_outside_paths: accept file names that leave `root`.
        allow_outside_links: accept image paths that resolve outside
            `root` through a symbolic link.

    Returns:
        a `CaptionListing`.
    """
    del strict
    files = coco_annotation_files(root)[year]
    if "train" not in files:
        raise ValueError(
            f"COCO captions need {os.path.join(root, ANNOTATIONS_FOLDER)}/captions_train{year}"
            ".json for training; only the val file is there."
        )
    read = {
        kind: _read_annotations(
            path,
            root,
            _image_folder(root, kind, year, path),
            allow_outside_paths,
            allow_outside_links,
        )
        for kind, path in files.items()
    }
    layout = (
        "COCO captions (" + ", ".join(os.path.relpath(path, root) for path in files.values()) + ")"
    )
    if "val" not in read:
        return CaptionListing(layout, root, {ALL: read["train"]})
    validation, test = every_other(read["val"])
    images = {
        "train": read["train"],
        "validation": {path: read["val"][path] for path in validation},
        "test": {path: read["val"][path] for path in test},
    }
    rule = f"train from train{year}/; validation and test: val{year}/ dealt alternately by name"
    return CaptionListing(layout, root, images, rule)
