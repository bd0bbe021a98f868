"""Flickr8k as shipped: `Flickr8k_text/` (captions and split lists) and the image folder.

    ROOT/
      Flicker8k_Dataset/1000268201_693b08cb0e.jpg ...   (or Flickr8k_Dataset/)
      Flickr8k_text/Flickr8k.token.txt                  name.jpg#N<TAB>caption
      Flickr8k_text/Flickr_8k.trainImages.txt           one file name a line
      Flickr8k_text/Flickr_8k.devImages.txt
      Flickr8k_text/Flickr_8k.testImages.txt

The official lists give train, validation (dev) and test; captioned images
in no list, and listed images with no caption, are left out (and counted).
Without the lists, validation and test are drawn at random later (and said
so). The text files may also sit in ROOT itself.

Example:

>>> from keras_attention.tasks.captioning.layouts.flickr8k_text import SPLIT_LISTS
>>> SPLIT_LISTS["validation"]
'Flickr_8k.devImages.txt'
"""

import os

from keras_attention.data.dataset_paths import listed_image_paths
from keras_attention.data.text_lines import read_text_lines
from keras_attention.tasks.captioning.layouts.caption_listing import ALL
from keras_attention.tasks.captioning.layouts.caption_listing import CaptionListing
from keras_attention.tasks.captioning.layouts.caption_listing import add_caption
from keras_attention.tasks.captioning.layouts.captions_tsv import read_tab_separated_captions

TOKEN_FILE = "Flickr8k.token.txt"
TEXT_FOLDERS = ("Flickr8k_text", "")
# The zip of the images unpacks to "Flicker8k_Dataset" (sic).
IMAGE_FOLDERS = ("Flicker8k_Dataset", "Flickr8k_Dataset")
SPLIT_LISTS = {
    "train": "Flickr_8k.trainImages.txt",
    "validation": "Flickr_8k.devImages.txt",
    "test": "Flickr_8k.testImages.txt",
}


def flickr8k_token_file(root):
    """`ROOT/Flickr8k_text/Flickr8k.token.txt` (or `ROOT/Flickr8k.token.txt`), or None."""
    for folder in TEXT_FOLDERS:
        path = os.path.join(root, folder, TOKEN_FILE)
        if os.path.isfile(path):
            return path
    return None


def flickr8k_image_folder(root):
    """The image folder's name under `root`, or None."""
    for folder in IMAGE_FOLDERS:
        if os.path.isdir(os.path.join(root, folder)):
            return folder
    return None


def _split_of_each_name(text_folder, strict):
    """`{file name: split}` from the official lists, or None when a list is missing.

    A name in two lists is refused: the image would be trained on and scored.
    """
    paths = {split: os.path.join(text_folder, name) for split, name in SPLIT_LISTS.items()}
    if not all(os.path.isfile(path) for path in paths.values()):
        return None
    split_of = {}
    for split, path in paths.items():
        for number, line in read_text_lines(path, strict):
            name = line.strip()
            if name and split_of.setdefault(name, split) != split:
                raise ValueError(
                    f"{path} line {number}: image {name} is listed in two splits, "
                    f"{split_of[name]} ({SPLIT_LISTS[split_of[name]]}) and {split}; an image "
                    "belongs to one split."
                )
    return split_of


def read_flickr8k_text(
    token_path, strict=False, allow_outside_paths=False, allow_outside_links=False
):
    """Flickr8k's captions and official splits, from its token file and split lists.

    Args:
        token_path: the `Flickr8k.token.txt` file (in `ROOT/Flickr8k_text/`
            or `ROOT/`).
        strict: a malformed or non-UTF-8 line raises a ValueError naming it.
        allow_outside_paths: accept names that leave the image folder's ROOT.
        allow_outside_links: accept image paths that resolve outside
            ROOT through a symbolic link.

    Returns:
        a `CaptionListing`.
    """
    text_folder = os.path.dirname(os.path.abspath(token_path))
    in_text_folder = os.path.basename(text_folder) == TEXT_FOLDERS[0]
    root = os.path.dirname(text_folder) if in_text_folder else text_folder
    image_folder = flickr8k_image_folder(root)
    if image_folder is None:
        raise ValueError(
            f"Flickr8k's images belong in {os.path.join(root, IMAGE_FOLDERS[0])}/ (or "
            f"{IMAGE_FOLDERS[1]}/) beside {os.path.relpath(token_path, root)}; neither exists."
        )
    entries = read_tab_separated_captions(token_path, strict)
    names = [name for _, name, _ in entries]
    paths = listed_image_paths(
        root,
        [(number, os.path.join(image_folder, name)) for number, name, _ in entries],
        token_path,
        allow_outside_paths,
        allow_outside_links,
    )
    layout = f"Flickr8k ({os.path.relpath(token_path, root)}, images in {image_folder}/)"
    split_of = _split_of_each_name(text_folder, strict)
    if split_of is None:
        images = {}
        for resolved, (_, _, caption) in zip(paths, entries):
            add_caption(images, resolved, caption)
        return CaptionListing(layout + " without its split lists", root, {ALL: images})
    images = {split: {} for split in SPLIT_LISTS}
    unlisted = set()
    for resolved, name, (_, _, caption) in zip(paths, names, entries):
        if name in split_of:
            add_caption(images[split_of[name]], resolved, caption)
        else:
            unlisted.add(name)
    rule = "the official Flickr_8k.{train,dev,test}Images.txt lists"
    if unlisted:
        rule += f"; {len(unlisted)} captioned image(s) in no list left out"
    captioned = set(names)
    uncaptioned = [name for name in split_of if name not in captioned]  # in list order
    if uncaptioned:
        first = uncaptioned[0]
        rule += (
            f"; {len(uncaptioned)} listed image(s) with no caption in {TOKEN_FILE} left out "
            f"(the first: {first} in {SPLIT_LISTS[split_of[first]]})"
        )
    return CaptionListing(layout, root, images, rule)
