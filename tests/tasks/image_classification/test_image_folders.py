"""load_image_classification_dataset on folders as downloaded: split folders, odd files, hf:.

Each image is a flat 6x6 PNG whose red level is its class and whose green
level is its number, so every (image, label) pair can be checked.
"""

import os
import warnings

import numpy as np
import pytest
import tensorflow as tf

from keras_attention.data.skipped_items import SkippedItems
from keras_attention.data.skipped_items import strict_errors_as_exit
from keras_attention.tasks.image_classification.image_folders import find_image_folder_layout
from keras_attention.tasks.image_classification.sources import load_image_classification_dataset
from keras_attention.tasks.image_classification.sources import native_image_size

CLASSES = ("cat", "dog", "owl")


def png(label, number, shape=(6, 6)):
    pixels = np.zeros(shape + (3,), np.uint8)
    pixels[..., 0], pixels[..., 1] = 40 * label, number
    return tf.io.encode_png(pixels).numpy()


def write_split(folder, per_class, start=0, classes=CLASSES):
    for label, name in enumerate(classes):
        (folder / name).mkdir(parents=True)
        for number in range(start, start + per_class):
            (folder / name / f"{number}.png").write_bytes(png(label, number))


def contents(data):
    """split -> sorted [(class name, number)], checking each label against its image."""
    result = {}
    for split, dataset in data.splits.items():
        rows = []
        for image, label in dataset.as_numpy_iterator():
            assert int(round(float(image[..., 0].mean()))) == 40 * label
            rows.append((data.class_names[label], int(round(float(image[..., 1].mean())))))
        result[split] = sorted(rows)
    return result


def load(path, **kwargs):
    return load_image_classification_dataset(f"folder:{path}", 6, **kwargs)


def test_train_and_val_folders_are_splits_not_two_classes(tmp_path):
    write_split(tmp_path / "train", 4)
    write_split(tmp_path / "val", 4, start=10)
    data = load(tmp_path, seed=3)
    assert data.class_names == list(CLASSES)
    found = contents(data)
    assert found["train"] == [(name, n) for name in CLASSES for n in range(4)]
    # No test/: every other image of each class of val/ is the test split, whatever the seed.
    assert found["validation"] == [(name, n) for name in CLASSES for n in (10, 12)]
    assert found["test"] == [(name, n) for name in CLASSES for n in (11, 13)]
    assert data.split_sizes == {"train": 12, "validation": 6, "test": 6}
    lines = data.summary_lines()
    assert lines[0] == (
        "data: split folders train/, val/ (no test split: test is every other image of each "
        "class of val/)"
    )
    assert lines[1:] == [
        "  3 classes: cat, dog, owl",
        "  train: 12 images (cat 4, dog 4, owl 4)",
        "  validation: 6 images (cat 2, dog 2, owl 2)",
        "  test: 6 images (cat 2, dog 2, owl 2)",
    ]
    assert contents(load(tmp_path, seed=4))["test"] == found["test"]


def test_train_validation_and_test_folders_are_kept_as_they_are(tmp_path):
    write_split(tmp_path / "train", 3)
    write_split(tmp_path / "Validation", 2, start=10)
    write_split(tmp_path / "test", 1, start=20)
    found = contents(load(tmp_path))
    assert found["validation"] == [(name, n) for name in CLASSES for n in (10, 11)]
    assert found["test"] == [(name, 20) for name in CLASSES]
    assert len(found["train"]) == 9


def test_train_and_test_folders_draw_validation_from_train(tmp_path):
    write_split(tmp_path / "train", 10)
    write_split(tmp_path / "test", 2, start=20)
    data = load(tmp_path, validation_fraction=0.2)
    found = contents(data)
    assert len(found["train"]) == 24 and len(found["validation"]) == 6
    assert sorted(found["train"] + found["validation"]) == [
        (c, n) for c in CLASSES for n in range(10)
    ]
    assert found["test"] == [(c, n) for c in CLASSES for n in (20, 21)]
    assert "validation is 20% of train/ drawn at random (seed 0)" in data.summary_lines()[0]


@pytest.mark.parametrize(
    "make, message",
    [
        (
            lambda root: (write_split(root / "train", 1), write_split(root / "zebra", 1)),
            r"mixes split folders \(train\) with other folders \(zebra\)",
        ),
        (
            lambda root: (
                write_split(root / "train", 1),
                write_split(root / "val", 1, classes=("cat", "dog", "fox")),
            ),
            r"same class folders: train/ lacks fox; val/ lacks owl",
        ),
        (
            lambda root: (
                write_split(root / "train", 1),
                write_split(root / "val", 1),
                write_split(root / "validation", 1),
            ),
            r"2 validation folders \(val, validation\)",
        ),
        (
            lambda root: (write_split(root / "val", 1), write_split(root / "test", 1)),
            r"split folders \(val, test\) but no train/ folder",
        ),
        (
            lambda root: (
                write_split(root / "train", 1),
                (root / "val").mkdir(),
                (root / "val" / "1.png").write_bytes(png(0, 1)),
            ),
            r"val must hold one folder per class; it has none, and 1 image file\(s\) directly in it",
        ),
    ],
    ids=["mixed", "classes differ", "two validation folders", "no train", "flat val"],
)
def test_split_folders_that_cannot_be_read_as_splits_are_refused_by_name(tmp_path, make, message):
    make(tmp_path)
    with pytest.raises(ValueError, match=message):
        load(tmp_path)


@pytest.mark.parametrize("split_folders", [False, True])
def test_a_single_class_folder_is_refused_naming_it_as_perhaps_the_data_set(
    tmp_path, split_folders
):
    # A one-class "classifier" would train on a zero loss and, before this, failed inside
    # the learning monitor on its negative-zero baseline.
    root = tmp_path / "photos"
    write_split(root / "train" if split_folders else root, 2, classes=("flowers",))
    folder = root / "train" if split_folders else root
    with pytest.raises(ValueError) as error:
        load(root)
    assert str(error.value) == (
        "`dataset` folder must hold two or more class folders, one per class to tell apart; "
        f"{folder} holds one, flowers/ (is {folder / 'flowers'} the data set?). "
        f"Received: dataset='folder:{root}'"
    )


def test_a_class_folder_without_image_files_is_refused_naming_it(tmp_path):
    write_split(tmp_path / "data", 2)
    (tmp_path / "data" / "bird").mkdir()
    (tmp_path / "data" / "bird" / "notes.txt").write_text("photos to come")
    with pytest.raises(ValueError) as error:
        find_image_folder_layout(tmp_path / "data")
    assert str(error.value).startswith(
        f"every class folder of {tmp_path / 'data'} must hold image files (.bmp, "
    )
    assert str(error.value).endswith("1 holds none: bird/. Remove them or add their images.")
    # The same in the training split of split folders.
    write_split(tmp_path / "splits" / "train", 2)
    write_split(tmp_path / "splits" / "val", 1)
    for split in ("train", "val"):
        (tmp_path / "splits" / split / "bird").mkdir()
    with pytest.raises(ValueError, match=r"splits/train must hold image files .* bird/\."):
        find_image_folder_layout(tmp_path / "splits")


def test_images_of_unread_formats_are_counted_in_a_warning_and_jfif_and_webp_are_read(tmp_path):
    write_split(tmp_path / "data", 2)
    (tmp_path / "data" / "cat" / "9.JFIF").write_bytes(png(0, 9))  # a JPEG name, any case
    (tmp_path / "data" / "cat" / "8.WebP").write_bytes(png(0, 8))
    for name in ("a.tif", "b.TIFF", "c.heic"):
        (tmp_path / "data" / "dog" / name).write_bytes(b"not read")
    (tmp_path / "data" / "dog" / "notes.txt").write_text("not an image: not counted")
    with pytest.warns(UserWarning) as caught:
        listing = find_image_folder_layout(tmp_path / "data")
    assert [str(warning.message) for warning in caught] == [
        f"{tmp_path / 'data'}: passed over 3 image file(s) of formats the training pipeline "
        "does not read (.heic 1, .tif 1, .tiff 1; e.g. dog/a.tif, dog/b.TIFF, dog/c.heic). "
        "Convert them to PNG or JPEG to train on them (e.g. `mogrify -format png *.tif`)."
    ]
    files = [os.path.basename(path) for path, _ in next(iter(listing.files.values()))]
    assert "9.JFIF" in files and "8.WebP" in files and len(files) == 8


def test_class_folders_whose_names_differ_only_in_case_are_refused(tmp_path):
    write_split(tmp_path / "data", 2)
    write_split(tmp_path / "data", 1, classes=("Cat",))
    with pytest.raises(ValueError) as error:
        find_image_folder_layout(tmp_path / "data")
    assert str(error.value) == (
        f"class folders of {tmp_path / 'data'} differ only in letter case: Cat/ and cat/. One "
        "class under two names? Merge them into one folder (or rename one)."
    )


def test_appledouble_and_corrupt_files_are_skipped_where_met_and_named(tmp_path):
    root, run = tmp_path / "data", tmp_path / "run"
    write_split(root, 2)
    run.mkdir()
    appledouble = root / "cat" / "._0.png"
    appledouble.write_bytes(b"\x00\x05\x16\x07" + b"\x00" * 60)  # a resource fork, no image
    assert native_image_size(f"folder:{root}") == (6, 6)  # measured on the images that decode
    log = run / "skipped_images.txt"
    skipped = SkippedItems("image files that cannot be decoded", log)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # listing reads no file: nothing to say yet
        data = load(root, validation_fraction=0.0, test_fraction=0.0, skipped=skipped)
    assert data.split_sizes["train"] == 7  # listed
    assert len(contents(data)["train"]) == 6  # decoded
    assert skipped.take_count() == 1 and log.read_text().split("\n")[:-1] == [str(appledouble)]
    strict = load(root, validation_fraction=0.0, test_fraction=0.0, strict=True)
    with pytest.raises(SystemExit, match=rf"^error: .*cannot be decoded: {appledouble} \(--strict"):
        with strict_errors_as_exit():
            contents(strict)


def test_file_and_folder_names_that_are_not_utf8_are_skipped_naming_their_bytes(tmp_path):
    write_split(tmp_path, 2)
    folder = os.fsencode(tmp_path / "dog")
    with open(folder + b"/caf\xe9.png", "wb") as file:
        file.write(png(1, 9))
    os.mkdir(os.fsencode(tmp_path) + b"/\xffbad")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data = load(tmp_path, validation_fraction=0.0, test_fraction=0.0)
    messages = " ".join(str(w.message) for w in caught)
    assert repr(folder + b"/caf\xe9.png") in messages and "not UTF-8" in messages
    assert repr(os.fsencode(tmp_path) + b"/\xffbad") in messages
    assert data.class_names == list(CLASSES) and len(contents(data)["train"]) == 6
    with pytest.raises(ValueError, match="are not UTF-8"):
        load(tmp_path, strict=True)


def test_hf_set_with_a_single_class_is_refused(tmp_path):
    datasets = pytest.importorskip("datasets", reason="hf: needs the optional `datasets` package")
    features = datasets.Features(
        {"image": datasets.Image(), "label": datasets.ClassLabel(names=["ant"])}
    )
    images = [{"bytes": png(0, n), "path": None} for n in range(3)]
    datasets.Dataset.from_dict(
        {"image": images, "label": [0, 0, 0]}, features=features
    ).save_to_disk(tmp_path / "hf")
    with pytest.raises(ValueError, match=r"two or more classes .* names 1: \['ant'\]"):
        load_image_classification_dataset(f"hf:{tmp_path / 'hf'}", 6)


def test_hf_folder_of_images_with_class_labels(tmp_path):
    datasets = pytest.importorskip("datasets", reason="hf: needs the optional `datasets` package")
    features = datasets.Features(
        {"img": datasets.Image(), "label": datasets.ClassLabel(names=["ant", "bee"])}
    )

    def split(numbers, broken=()):
        images = [
            {"bytes": b"broken" if n in broken else png(n % 2, n), "path": None} for n in numbers
        ]
        return datasets.Dataset.from_dict(
            {"img": images, "label": [n % 2 for n in numbers]}, features=features
        )

    datasets.DatasetDict(
        {"train": split(range(10), broken=(3,)), "test": split(range(20, 24))}
    ).save_to_disk(tmp_path / "hf")
    skipped = SkippedItems("image files that cannot be decoded", tmp_path / "skipped.txt")
    data = load_image_classification_dataset(
        f"hf:{tmp_path / 'hf'}", 6, validation_fraction=0.25, skipped=skipped
    )
    assert data.class_names == ["ant", "bee"]
    found = contents(data)
    assert found["test"] == [("ant", 20), ("ant", 22), ("bee", 21), ("bee", 23)]
    train_and_validation = sorted(found["train"] + found["validation"])
    assert train_and_validation == sorted((["ant", "bee"][n % 2], n) for n in range(10) if n != 3)
    assert data.split_sizes == {"train": 8, "validation": 2, "test": 4}  # rows listed
    assert skipped.take_count() == 1
    assert (tmp_path / "skipped.txt").read_text() == "train row 4\n"
    assert "no validation split" in data.summary_lines()[0]


def test_hf_splits_with_class_names_in_another_order_are_matched_by_name(tmp_path):
    datasets = pytest.importorskip("datasets", reason="hf: needs the optional `datasets` package")

    def split(names, rows):
        """`rows` of (class name, number); each image's red level is its class in CLASSES."""
        features = datasets.Features(
            {"image": datasets.Image(), "label": datasets.ClassLabel(names=names)}
        )
        images = [{"bytes": png(CLASSES.index(c), n), "path": None} for c, n in rows]
        labels = [names.index(c) for c, _ in rows]
        return datasets.Dataset.from_dict({"image": images, "label": labels}, features=features)

    train = [(name, n) for n, name in enumerate(CLASSES * 2)]
    test = [("owl", 20), ("cat", 21), ("dog", 22)]
    datasets.DatasetDict(
        {"train": split(list(CLASSES), train), "test": split(["owl", "dog", "cat"], test)}
    ).save_to_disk(tmp_path / "hf")
    data = load_image_classification_dataset(f"hf:{tmp_path / 'hf'}", 6, validation_fraction=0.0)
    assert data.class_names == list(CLASSES)
    assert contents(data)["test"] == sorted(test)  # checks each label against its image
    assert "the class names of test matched to train's by name" in data.summary_lines()[0]
    # A class the training split lacks has no label to map to.
    datasets.DatasetDict(
        {"train": split(["cat", "dog"], train[:2]), "test": split(list(CLASSES), test)}
    ).save_to_disk(tmp_path / "unknown")
    with pytest.raises(
        ValueError,
        match=r"The test split of .* names class\(es\) 'owl' that the train split lacks "
        r"\(train: cat, dog; test: cat, dog, owl\)\. Received: dataset='hf:.*unknown'",
    ):
        load_image_classification_dataset(f"hf:{tmp_path / 'unknown'}", 6)


def test_links_that_lead_outside_the_folder_are_refused_unless_allowed(tmp_path):
    root = tmp_path / "data"
    write_split(root / "train", 2)
    write_split(root / "val", 2, start=10, classes=CLASSES[:2])
    write_split(tmp_path / "elsewhere", 1, start=20)
    os.symlink(tmp_path / "elsewhere" / "cat" / "20.png", root / "train" / "cat" / "20.png")
    os.symlink(tmp_path / "elsewhere" / "owl", root / "val" / "owl")  # a linked class folder
    os.symlink(root / "train" / "dog" / "0.png", root / "train" / "dog" / "inside.png")
    with pytest.raises(
        ValueError,
        match=rf"2 symbolic link\(s\) under {root} lead outside it: "
        rf"train/cat/20\.png -> {tmp_path / 'elsewhere' / 'cat' / '20.png'}, "
        rf"val/owl -> {tmp_path / 'elsewhere' / 'owl'}\. .*--allow-outside-links",
    ):
        load(root)
    found = contents(load(root, allow_outside_links=True))
    assert ("cat", 20) in found["train"] and ("owl", 20) in found["validation"] + found["test"]
    # The data set's folder may itself be a link, and links inside it are read.
    os.remove(root / "train" / "cat" / "20.png")
    os.remove(root / "val" / "owl")
    (root / "val" / "owl").mkdir()
    (root / "val" / "owl" / "30.png").write_bytes(png(2, 30))
    os.symlink(root, tmp_path / "link-to-data")
    assert load(tmp_path / "link-to-data").split_sizes["train"] == 7  # 6 and inside.png


def test_listing_resolves_the_links_alone_not_every_file(tmp_path, monkeypatch):
    write_split(tmp_path / "train", 30)
    write_split(tmp_path / "val", 30, start=100)
    os.symlink(tmp_path / "train" / "cat" / "0.png", tmp_path / "train" / "cat" / "linked.png")
    resolved = []
    realpath = os.path.realpath
    monkeypatch.setattr(os.path, "realpath", lambda path: resolved.append(path) or realpath(path))
    listing = find_image_folder_layout(str(tmp_path))
    assert len(listing.files["train"]) == 91
    assert resolved == [str(tmp_path), str(tmp_path / "train" / "cat" / "linked.png")]
