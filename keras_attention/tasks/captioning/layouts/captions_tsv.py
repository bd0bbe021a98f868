"""`captions.tsv`: `file<TAB>caption` lines, several per image allowed.

Flickr8k's `file.jpg#0` caption numbering is understood. The files are
relative to the folder of the tsv file and must stay in it (see
`dataset_paths.listed_image_paths`). The layout has no splits of its own.

Example:

>>> import os, tempfile
>>> from keras_attention.tasks.captioning.layouts.captions_tsv import read_captions_tsv
>>> root = tempfile.mkdtemp()
>>> _ = open(os.path.join(root, "captions.tsv"), "w").write("a.png#0\\ta cat\\na.png#1\\ta pet\\n")
>>> listing = read_captions_tsv(os.path.join(root, "captions.tsv"))
>>> [(os.path.basename(path), captions) for path, captions in listing.images["all"].items()]
[('a.png', ['a cat', 'a pet'])]
"""

import os
import re

from keras_attention.data.text_lines import read_text_lines
from keras_attention.data.text_lines import report_lines
from keras_attention.tasks.captioning.layouts.caption_listing import ALL
from keras_attention.tasks.captioning.layouts.caption_listing import CaptionListing
from keras_attention.tasks.captioning.layouts.caption_listing import captions_by_image

CAPTIONS_FILE = "captions.tsv"
FLICKR_CAPTION_NUMBER = re.compile(r"#\d+$")


def read_tab_separated_captions(path, strict=False):
    """`[(line number, file name, caption)]` of `name<TAB>caption` lines; bad lines reported.

    A line without a tab, a name or a caption, or with a third field (whose
    text would be trained as part of the caption), is skipped with a warning
    naming it (an error with `strict`), as is a line that is not UTF-8;
    blank lines are ignored; `#N` after a name is dropped.
    """
    entries, malformed = [], []
    for number, line in read_text_lines(path, strict):
        if not line.strip():
            continue
        name, tab, caption = line.partition("\t")
        name = FLICKR_CAPTION_NUMBER.sub("", name.strip())
        caption = caption.strip()
        if not tab or not name or not caption or "\t" in caption:  # a third field: no caption
            malformed.append(number)
            continue
        entries.append((number, name, caption))
    report_lines(path, malformed, "are not one `file<TAB>caption` pair", strict, stacklevel=3)
    return entries


def read_captions_tsv(path, strict=False, allow_outside_paths=False, allow_outside_links=False):
    """The images and captions of a `captions.tsv` file, as one split to draw from.

    Args:
        path: the tsv file; image names are relative to its folder.
        strict: a malformed or non-UTF-8 line raises a ValueError naming it.
        allow_outside_paths: accept absolute names and names with `..`.
        allow_outside_links: accept image paths that resolve outside
            the folder through a symbolic link.

    Returns:
        a `CaptionListing` with the single split `ALL`.
    """
    root = os.path.dirname(os.path.abspath(path))
    entries = read_tab_separated_captions(path, strict)
    images = captions_by_image(root, entries, path, allow_outside_paths, allow_outside_links)
    return CaptionListing(os.path.basename(path), root, {ALL: images})
