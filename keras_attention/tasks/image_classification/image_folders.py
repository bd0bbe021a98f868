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
bytes (an error with `strict`).

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

import dataclasses
import os

from keras_attention.data.classification_splits import ALL
from keras_attention.data.dataset_paths import utf8_file_names

# Image files `tf.io.decode_image` reads.
IMAGE_EXTENSIONS = (".bmp", ".gif", ".jpeg", ".jpg", ".png")
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


def _visible_folders(folder, strict):
    """Sorted sub-folder names of `folder`, without hidden ones and `__MACOSX`."""
    names = utf8_file_names(folder, sorted(os.listdir(folder)), strict)
    return [
        name
        for name in names
        if os.path.isdir(os.path.join(folder, name))
        and not name.startswith(".")
        and name != "__MACOSX"
    ]


def class_image_files(folder, strict=False, progress=None):
    """`{class name: [image paths]}` of the class folders of `folder`, paths sorted.

    Args:
        folder: a folder of class folders.
        strict: a name that is not UTF-8 raises a ValueError naming it.
        progress: None, or an object whose `add(count)` is called with the
            image files of each class folder listed (a `ProgressBar`).

    Returns:
        dict, classes in sorted order.
    """
    classes = {}
    for name in _visible_folders(folder, strict):
        paths = []
        for parent, subfolders, files in os.walk(os.path.join(folder, name)):
            subfolders[:] = sorted(utf8_file_names(parent, subfolders, strict))
            for file in utf8_file_names(parent, sorted(files), strict):
                # macOS AppleDouble files (`._x.jpg`) are listed too: they hold no
                # image, and are reported with the other files that cannot be decoded.
                if file.lower().endswith(IMAGE_EXTENSIONS):
                    paths.append(os.path.join(parent, file))
        classes[name] = sorted(paths)
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


def find_image_folder_layout(root, strict=False, progress=None):
    """Reads a classification folder: class folders, or split folders of class folders.

    Args:
        root: the data set's folder.
        strict: a file or folder name that is not UTF-8 raises a ValueError
            naming it, instead of being skipped with a warning.
        progress: None, or an object whose `add(count)` is called as image
            files are listed (a `ProgressBar`).

    Returns:
        an `ImageFolderListing`.

    Raises:
        ValueError: `root` has no sub-folder; mixes split folders with other
            folders; has split folders but no `train/`, two validation
            folders, a split folder without class folders, or splits whose
            class folders differ. Each message names the folders.
    """
    folders = _visible_folders(root, strict)
    if not folders:
        raise ValueError(
            "`dataset` folder must hold one sub-folder of images per class, or split folders "
            f"(train/, val/, test/) of class folders; {root} has none."
        )
    splits = _split_folders(root, folders)
    if not splits:
        classes = class_image_files(root, strict, progress)
        names = sorted(classes)
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
    classes = {}
    for split, folder in splits.items():
        path = os.path.join(root, folder)
        classes[split] = class_image_files(path, strict, progress)
        if not classes[split]:
            loose = [f for f in os.listdir(path) if f.lower().endswith(IMAGE_EXTENSIONS)]
            raise ValueError(
                f"{path} must hold one folder per class; it has none"
                + (f", and {len(loose)} image file(s) directly in it." if loose else ".")
            )
    _check_same_classes(root, {splits[split]: sorted(found) for split, found in classes.items()})
    names = sorted(classes["train"])
    files = {
        split: [(path, label) for label, name in enumerate(names) for path in found[name]]
        for split, found in classes.items()
    }
    layout = "split folders " + ", ".join(f"{splits[split]}/" for split in splits)
    return ImageFolderListing(
        layout, names, files, {split: os.path.join(root, f) for split, f in splits.items()}
    )
