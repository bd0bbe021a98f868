"""A CSV file of image paths and captions: `csv:FILE`, and Kaggle's Flickr8k `captions.txt`.

    FILE.csv                        ROOT/ (Kaggle's Flickr8k)
      image,caption                   captions.txt   image,caption lines
      a.jpg,"A dog, running."         Images/1000268201_693b08cb0e.jpg ...
      photos/b.jpg,A "big" cat.

The first line names the columns; captions may hold commas and quotes (CSV
quoting). Image paths are relative to `image_root` (the CSV's folder for
`csv:`, `ROOT/Images` for Kaggle's layout) and must stay in it. Neither
layout has splits of its own.

Example:

>>> import os, tempfile
>>> from keras_attention.tasks.captioning.layouts.caption_csv import read_caption_csv
>>> root = tempfile.mkdtemp()
>>> path = os.path.join(root, "captions.csv")
>>> _ = open(path, "w").write('image,caption\\na.jpg,"A dog, running."\\n')
>>> listing = read_caption_csv(path, root)
>>> list(listing.images["all"].values())
[['A dog, running.']]
"""

import csv
import os

from keras_attention.data.text_lines import read_text_lines
from keras_attention.data.text_lines import report_lines
from keras_attention.tasks.captioning.layouts.caption_listing import ALL
from keras_attention.tasks.captioning.layouts.caption_listing import CaptionListing
from keras_attention.tasks.captioning.layouts.caption_listing import captions_by_image

KAGGLE_CAPTIONS_FILE = "captions.txt"
KAGGLE_IMAGE_FOLDER = "Images"


def _rows(path, strict):
    """`[(first line number, fields)]` of the CSV file's records, header first."""
    lines = read_text_lines(path, strict)
    numbers = []

    def text():
        for number, line in lines:
            numbers.append(number)
            yield line + "\n"

    rows, consumed = [], 0
    try:
        for fields in csv.reader(text()):
            rows.append((numbers[consumed], fields))
            consumed = len(numbers)
    except csv.Error as error:
        raise ValueError(f"{path} line {numbers[-1]} is not CSV: {error}.") from None
    return [(number, fields) for number, fields in rows if any(f.strip() for f in fields)]


def read_caption_csv(
    path,
    image_root,
    image_column="image",
    caption_column="caption",
    strict=False,
    allow_outside_paths=False,
    layout=None,
    allow_outside_links=False,
):
    """The images and captions of a CSV file with a header line.

    Args:
        path: the CSV file.
        image_root: the folder the image paths are relative to.
        image_column, caption_column: the header names of the columns.
        strict: a malformed or non-UTF-8 line raises a ValueError naming it.
        allow_outside_paths: accept image paths that leave `image_root`.
        layout: the name to report (default: the file's name and columns).
        allow_outside_links: accept image paths that resolve outside
            `image_root` through a symbolic link.

    Returns:
        a `CaptionListing` with the single split `ALL`.

    Raises:
        ValueError: the file is empty, or its header lacks a column; the
            message lists the columns it has.
    """
    rows = _rows(path, strict)
    if not rows:
        raise ValueError(f"{path} must start with a header line naming its columns; it is empty.")
    header = [name.strip() for name in rows[0][1]]
    missing = [name for name in (image_column, caption_column) if name not in header]
    if missing:
        raise ValueError(
            f"{path} must have the column(s) {', '.join(map(repr, missing))} (set them with "
            f"--image-column and --caption-column); its header line names {header}."
        )
    image_index, caption_index = header.index(image_column), header.index(caption_column)
    entries, malformed = [], []
    for number, fields in rows[1:]:
        if len(fields) != len(header):
            malformed.append(number)
            continue
        name, caption = fields[image_index].strip(), fields[caption_index].strip()
        if not name or not caption:
            malformed.append(number)
            continue
        entries.append((number, name, caption))
    report_lines(
        path,
        malformed,
        f"do not have {len(header)} fields with an image and a caption",
        strict,
        stacklevel=3,
    )
    images = captions_by_image(image_root, entries, path, allow_outside_paths, allow_outside_links)
    name = layout or f"{os.path.basename(path)} (columns {image_column!r}, {caption_column!r})"
    return CaptionListing(name, os.path.abspath(image_root), {ALL: images})
