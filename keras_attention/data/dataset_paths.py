"""Paths inside a data set: image names confined to its folder, file names that are not UTF-8.

A caption file names its images relative to the data set's folder. An
absolute name, or one that climbs out with `..`, would read files that are
not part of the data set: `listed_image_paths` refuses them, naming the
lines, unless outside paths are allowed (`--allow-outside-paths`). A name
that stays inside as text but resolves outside through a symbolic link is
refused likewise (`outside_links`), unless such links are allowed
(`--allow-outside-links`).

`os.listdir` hands back a file name that is not valid UTF-8 with its bad
bytes as surrogates, which TensorFlow cannot turn into a string ("Error
converting unicode string"); `utf8_file_names` leaves such names out with a
warning naming their bytes.

Example:

>>> from keras_attention.data.dataset_paths import path_inside
>>> path_inside("/data/coco", "train2014/a.jpg")
'/data/coco/train2014/a.jpg'
>>> path_inside("/data/coco", "../secrets.txt") is None
True
"""

import os
import warnings

from keras_attention.data.outside_links import listed_links_outside
from keras_attention.data.outside_links import refuse_outside_links
from keras_attention.data.text_lines import line_numbers_text

# File names named in one warning before "... (N more)".
MAX_NAMED_FILES = 10


def path_inside(root, name):
    """`root/name` when it stays inside `root`, else None (absolute, or out through `..`).

    Args:
        root: the data set's folder.
        name: a path as a caption file writes it.

    Returns:
        str or None.

    Example:

    >>> from keras_attention.data.dataset_paths import path_inside
    >>> path_inside("/d", "a/../b.png"), path_inside("/d", "/etc/passwd")
    ('/d/b.png', None)
    """
    if os.path.isabs(name):
        return None
    root = os.path.normpath(root)
    path = os.path.normpath(os.path.join(root, name))
    if path != root and os.path.commonpath([root, path]) == root:
        return path
    return None


def listed_image_paths(root, entries, source, allow_outside=False, allow_outside_links=False):
    """Paths of the images a caption file lists, refusing those outside `root`.

    Args:
        root: the folder the names are relative to.
        entries: list of `(line number, name)`; the line number (or None,
            for formats without lines) names where a refused name is.
        source: the file that lists them, for the message.
        allow_outside: keep absolute names and names with `..` as they are.
        allow_outside_links: keep names that resolve outside `root` through
            a symbolic link (in `root`, or a folder on the way).

    Returns:
        list of paths, one per entry, in order.

    Raises:
        ValueError: an entry leaves `root` and `allow_outside` is False; it
            names the lines (or the names) and the flag that allows them.
            Or an entry resolves outside `root` through a link and
            `allow_outside_links` is False; it names the links and their
            targets.

    Example:

    >>> from keras_attention.data.dataset_paths import listed_image_paths
    >>> listed_image_paths("/d", [(1, "a.png"), (2, "/tmp/b.png")], "list.tsv", True)
    ['/d/a.png', '/tmp/b.png']
    >>> listed_image_paths("/d", [(1, "a.png"), (2, "../b.png")], "list.tsv")
    Traceback (most recent call last):
    ...
    ValueError: 1 image path(s) of list.tsv lead outside the data set's folder /d: ...
    """
    paths, outside, inside = [], [], []
    for number, name in entries:
        path = path_inside(root, name)
        if path is None:
            if not allow_outside:
                outside.append((number, name))
                continue
            path = os.path.normpath(os.path.join(root, name))
        else:
            inside.append(path)
        paths.append(path)
    if outside:
        numbers = [number for number, _ in outside if number is not None]
        where = f"{line_numbers_text(numbers)} " if numbers else ""
        names = ", ".join(repr(name) for _, name in outside[:MAX_NAMED_FILES])
        raise ValueError(
            f"{len(outside)} image path(s) of {source} lead outside the data set's folder "
            f"{root}: {where}({names}). Image paths must be relative to that folder and stay "
            "in it; pass --allow-outside-paths (allow_outside_paths=True) to read them anyway."
        )
    if not allow_outside_links:
        # Inside as text, but a link may still lead out: checked on the resolved paths.
        refuse_outside_links(root, listed_links_outside(root, inside), source)
    return paths


def names_for_message(names, max_named=MAX_NAMED_FILES):
    """ "a, b, c, ... (N more)": the first `max_named` names and the count of the rest.

    Example:

    >>> from keras_attention.data.dataset_paths import names_for_message
    >>> names_for_message(["a", "b", "c"], max_named=2)
    'a, b, ... (1 more)'
    """
    names = list(names)
    shown = ", ".join(names[:max_named])
    more = len(names) - max_named
    return shown + (f", ... ({more} more)" if more > 0 else "")


def utf8_file_names(folder, names, strict=False):
    """The entries of `names` (from `os.listdir(folder)`) that are valid UTF-8, in order.

    The others are left out with one warning that names their bytes (an
    error with `strict`).

    Args:
        folder: the folder they are in, for the message.
        names: file names as `os.listdir` returns them.
        strict: raise a ValueError instead of warning.

    Returns:
        list of str.

    Example:

    >>> from keras_attention.data.dataset_paths import utf8_file_names
    >>> utf8_file_names("cats", ["a.png", "b.png"])
    ['a.png', 'b.png']
    """
    good, bad = [], []
    for name in names:
        try:
            name.encode("utf-8")
            good.append(name)
        except UnicodeEncodeError:
            bad.append(repr(os.fsencode(os.path.join(folder, name))))
    if bad and strict:
        raise ValueError(
            f"{len(bad)} file name(s) in {folder} are not UTF-8: {names_for_message(bad)}. "
            "Rename them, or run without --strict to skip them."
        )
    if bad:
        warnings.warn(
            f"Skipping {len(bad)} file(s) in {folder} whose names are not UTF-8: "
            f"{names_for_message(bad)}",
            stacklevel=2,
        )
    return good
