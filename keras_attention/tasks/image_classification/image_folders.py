"""Image classification folders: one folder per class, or split folders of class folders.

    ROOT/                      ROOT/
      cat/1.jpg ...              train/cat/1.jpg ...  train/dog/...
      dog/2.png ...              val/cat/... val/dog/...     (or valid/, validation/)
                                 test/cat/... test/dog/...   (optional)

A root whose sub-folders are split names (`SPLIT_FOLDERS`, any case) is
read as splits, never as classes; the splits must hold the same class
folders. Image files are those with `IMAGE_EXTENSIONS`, in a class folder or
below it. Hidden folders and `__MACOSX` (left by macOS zips) are not classes.
A file or folder name that is not UTF-8 is skipped with a warning naming its
bytes (an error with `strict`). A split folder, class folder or image that is
a symbolic link leading outside ROOT is refused, naming the link and its
target, unless `allow_outside_links` (linked folders below a class folder
are not followed).

Example:

>>> import os, tempfile
>>> from keras_attention.tasks.image_classification.image_folders import find_image_folder_layout
>>> root = tempfile.mkdtemp()
>>> for split in ("train", "val"):
...     for name in ("cat", "dog"):
...         os.makedirs(os.path.join(root, split, name))
...         _ = open(os.path.join(root, split, name, "1.png"), "wb").write(b"")
>>> listing = find_image_folder_layout(root)
>>> listing.class_names, sorted(listing.files), listing.layout
(['cat', 'dog'], ['train', 'validation'], 'split folders train/, val/')
"""

import collections
import dataclasses
import os
import warnings

from keras_attention.data.classification_splits import ALL
from keras_attention.data.dataset_paths import utf8_file_names
from keras_attention.data.outside_links import OutsideLinks

# Image files `tf.io.decode_image` reads.
IMAGE_EXTENSIONS = (".bmp", ".gif", ".jfif", ".jpe", ".jpeg", ".jpg", ".png", ".webp")
# Image files of formats the input pipeline does not decode: passed over, and counted.
UNREAD_IMAGE_EXTENSIONS = (".avif", ".heic", ".heif", ".jp2", ".tif", ".tiff")
# Unread files a warning names by their path.
_NAMED_UNREAD = 3
# Folder names (lower case) that make a root a set of splits.
SPLIT_FOLDERS = {
    "train": ("train",),
    "validation": ("val", "valid", "validation"),
    "test": ("test",),
}


@dataclasses.dataclass
class ImageFolderListing:
    """The image files of a classification folder, by split and class.

    Args:
        layout: what was found, e.g. "split folders train/, val/".
        class_names: sorted class folder names; label `i` is `class_names[i]`.
        files: dict split name ("train", "validation", "test", or only
            `ALL` for a root of class folders) -> list of `(path, label)`.
        folders: dict split name -> the split's folder.
    """

    layout: str
    class_names: list
    files: dict
    folders: dict


def _entries(folder, strict):
    """The `os.DirEntry`s of `folder` whose names are UTF-8, sorted by name.

    `os.scandir` tells folders and links apart without a `stat` per file.
    """
    with os.scandir(folder) as scanned:
        by_name = {entry.name: entry for entry in scanned}
    return [by_name[name] for name in utf8_file_names(folder, sorted(by_name), strict)]


def _visible_folders(folder, strict):
    """The sub-folders of `folder` (`os.DirEntry`s, by name), but hidden ones and `__MACOSX`."""
    return [
        entry
        for entry in _entries(folder, strict)
        if entry.is_dir() and not entry.name.startswith(".") and entry.name != "__MACOSX"
    ]


def _image_paths(folder, strict, links, unread=None):
    """Paths of the image files in `folder` and below, as `os.walk` finds them, unsorted.

    Linked folders are not followed (as `os.walk`), and a folder that
    cannot be listed is passed over; image files that are links go to
    `links`, those of a format that is not read (`UNREAD_IMAGE_EXTENSIONS`)
    to the list `unread`.
    """
    paths, pending = [], [folder]
    while pending:
        try:
            entries = _entries(pending.pop(), strict)
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir():
                if not entry.is_symlink():
                    pending.append(entry.path)
            # macOS AppleDouble files (`._x.jpg`) are listed too: they hold no
            # image, and are reported with the other files that cannot be decoded.
            elif entry.name.lower().endswith(IMAGE_EXTENSIONS):
                if links is not None:
                    links.add(entry)
                paths.append(entry.path)
            elif unread is not None and entry.name.lower().endswith(UNREAD_IMAGE_EXTENSIONS):
                unread.append(entry.path)
    return paths


def warn_unread_images(root, unread):
    """One warning that counts the image files of unread formats by extension, naming a few."""
    if not unread:
        return
    counts = collections.Counter(os.path.splitext(path)[1].lower() for path in unread)
    kinds = ", ".join(f"{extension} {count}" for extension, count in sorted(counts.items()))
    named = ", ".join(os.path.relpath(path, root) for path in sorted(unread)[:_NAMED_UNREAD])
    warnings.warn(
        f"{root}: passed over {len(unread)} image file(s) of formats the training pipeline "
        f"does not read ({kinds}; e.g. {named}). Convert them to PNG or JPEG to train on them "
        "(e.g. `mogrify -format png *.tif`).",
        stacklevel=3,
    )


def class_image_files(folder, strict=False, progress=None, links=None, unread=None):
    """`{class name: [image paths]}` of the class folders of `folder`, paths sorted.

    Args:
        folder: a folder of class folders.
        strict: a name that is not UTF-8 raises a ValueError naming it.
        progress: None, or an object whose `add(count)` is called with the
            image files of each class folder listed (a `ProgressBar`).
        links: None, or an `OutsideLinks` given the class folders and image
            files that are read.
        unread: None, or a list the paths of image files of unread formats
            are appended to (`warn_unread_images`).

    Returns:
        dict, classes in sorted order.
    """
    classes = {}
    for entry in _visible_folders(folder, strict):
        if links is not None:
            links.add(entry)
        paths = _image_paths(entry.path, strict, links, unread)
        classes[entry.name] = sorted(paths)
        if progress is not None:
            progress.add(len(paths))
    return classes


def _split_folders(root, folders):
    """`{split: folder name}` of the split folders among `folders`; errors on duplicates."""
    found = {}
    for split, names in SPLIT_FOLDERS.items():
        matches = [folder for folder in folders if folder.lower() in names]
        if len(matches) > 1:
            raise ValueError(
                f"{root} has {len(matches)} {split} folders ({', '.join(matches)}); keep one."
            )
        if matches:
            found[split] = matches[0]
    return found


def _check_same_classes(root, classes):
    """Raises a ValueError naming the class folders that differ between the splits."""
    every = sorted(set().union(*(set(names) for names in classes.values())))
    differences = []
    for split, names in classes.items():
        missing = [name for name in every if name not in names]
        if missing:
            differences.append(f"{split}/ lacks {', '.join(missing)}")
    if differences:
        listed = "; ".join(f"{split}/: {', '.join(names)}" for split, names in classes.items())
        raise ValueError(
            f"The split folders of {root} must hold the same class folders: "
            f"{'; '.join(differences)} (found {listed})."
        )


def _check_two_classes(folder, names):
    """A classifier tells classes apart: one class folder is a mistake (often the parent's)."""
    if len(names) < 2:
        raise ValueError(
            "`dataset` folder must hold two or more class folders, one per class to tell "
            f"apart; {folder} holds one, {names[0]}/ (is {os.path.join(folder, names[0])} "
            "the data set?)."
        )


def _check_class_folders(folder, classes):
    """Refuses class folders without an image file, and names that differ only in case.

    A folder holding only notes (or images of an unread kind) would be a class the
    model is asked to predict and never sees; `Cat/` beside `cat/` is one class under
    two names on most people's disks (and on macOS and Windows, one folder).
    """
    empty = [name for name, paths in classes.items() if not paths]
    if empty:
        raise ValueError(
            f"every class folder of {folder} must hold image files "
            f"({', '.join(IMAGE_EXTENSIONS)}); {len(empty)} "
            f"{'holds' if len(empty) == 1 else 'hold'} none: "
            f"{', '.join(name + '/' for name in empty)}. Remove them or add their images."
        )
    by_case = {}
    for name in classes:
        by_case.setdefault(name.casefold(), []).append(name)
    twins = [names for names in by_case.values() if len(names) > 1]
    if twins:
        listed = "; ".join(" and ".join(name + "/" for name in names) for names in twins)
        raise ValueError(
            f"class folders of {folder} differ only in letter case: {listed}. One class "
            "under two names? Merge them into one folder (or rename one)."
        )


def find_image_folder_layout(root, strict=False, progress=None, allow_outside_links=False):
    """Reads a classification folder: class folders, or split folders of class folders.

    Args:
        root: the data set's folder.
        strict: a file or folder name that is not UTF-8 raises a ValueError
            naming it, instead of being skipped with a warning.
        progress: None, or an object whose `add(count)` is called as image
            files are listed (a `ProgressBar`).
        allow_outside_links: read split folders, class folders and images
            that are symbolic links leading outside `root`.

    Returns:
        an `ImageFolderListing`.

    Raises:
        ValueError: `root` has no sub-folder, or a single class folder, a class
            folder without image files, or two whose names differ only in case;
            mixes split folders with other folders; has split folders but no
            `train/`, two validation folders, a split folder without class
            folders, or splits whose class folders differ. Each message names
            the folders. Or a split folder, class folder or image is a
            symbolic link that leads outside `root`, naming it and its target.
    """
    links, unread = OutsideLinks(root, allow_outside_links), []
    entries = _visible_folders(root, strict)
    folders = [entry.name for entry in entries]
    if not folders:
        raise ValueError(
            "`dataset` folder must hold one sub-folder of images per class, or split folders "
            f"(train/, val/, test/) of class folders; {root} has none."
        )
    splits = _split_folders(root, folders)
    if not splits:
        classes = class_image_files(root, strict, progress, links, unread)
        links.refuse()
        warn_unread_images(root, unread)
        names = sorted(classes)
        _check_two_classes(root, names)
        _check_class_folders(root, classes)
        files = [(path, label) for label, name in enumerate(names) for path in classes[name]]
        return ImageFolderListing("class folders", names, {ALL: files}, {ALL: root})
    others = [folder for folder in folders if folder not in splits.values()]
    if others:
        raise ValueError(
            f"{root} mixes split folders ({', '.join(splits.values())}) with other folders "
            f"({', '.join(others)}); a root holds either one folder per class, or split "
            "folders (train/, val/ or validation/, test/) that each hold one folder per class."
        )
    if "train" not in splits:
        raise ValueError(
            f"{root} has split folders ({', '.join(splits.values())}) but no train/ folder."
        )
    for entry in entries:
        if entry.name in splits.values():
            links.add(entry)
    classes = {}
    for split, folder in splits.items():
        path = os.path.join(root, folder)
        classes[split] = class_image_files(path, strict, progress, links, unread)
        if not classes[split]:
            loose = [f for f in os.listdir(path) if f.lower().endswith(IMAGE_EXTENSIONS)]
            raise ValueError(
                f"{path} must hold one folder per class; it has none"
                + (f", and {len(loose)} image file(s) directly in it." if loose else ".")
            )
    links.refuse()
    warn_unread_images(root, unread)
    _check_same_classes(root, {splits[split]: sorted(found) for split, found in classes.items()})
    names = sorted(classes["train"])
    _check_two_classes(os.path.join(root, splits["train"]), names)
    _check_class_folders(os.path.join(root, splits["train"]), classes["train"])
    files = {
        split: [(path, label) for label, name in enumerate(names) for path in found[name]]
        for split, found in classes.items()
    }
    layout = "split folders " + ", ".join(f"{splits[split]}/" for split in splits)
    return ImageFolderListing(
        layout, names, files, {split: os.path.join(root, f) for split, f in splits.items()}
    )
