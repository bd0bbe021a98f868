"""load_caption_dataset on data sets laid out as they are downloaded, with their own splits.

Every image is a flat 6x6 PNG whose grey level is its number, and every caption
starts with "image N", so each (image, caption) pair can be checked.
"""

import csv
import json
import os

import numpy as np
import pytest
import tensorflow as tf

from keras_attention.tasks.captioning.sources import load_caption_dataset


def write_image(path, number):
    path.parent.mkdir(parents=True, exist_ok=True)
    pixels = np.full((6, 6, 3), number, np.uint8)
    path.write_bytes(tf.io.encode_png(pixels).numpy())


def pairs_by_split(splits):
    """split -> sorted [(grey level, caption)], checking that each caption has its image."""
    result = {}
    for name, dataset in splits.items():
        rows = []
        for image, caption in dataset.as_numpy_iterator():
            grey, text = int(round(float(image.mean()))), caption.decode()
            assert text.startswith(f"image {grey} "), (grey, text)
            rows.append((grey, text))
        result[name] = sorted(rows)
    return result


def images_by_split(splits):
    return {
        name: sorted({grey for grey, _ in rows}) for name, rows in pairs_by_split(splits).items()
    }


def load(path, **kwargs):
    return load_caption_dataset(f"folder:{path}", 6, **kwargs)


@pytest.fixture
def coco(tmp_path):
    """COCO 2014 as downloaded: 3 train images (ids 1-3), 5 val images (ids 11-15)."""
    (tmp_path / "annotations").mkdir()
    for kind, ids in (("train", [1, 2, 3]), ("val", [15, 12, 11, 14, 13])):
        images, notes = [], []
        for image_id in ids:
            name = f"COCO_{kind}2014_{image_id:012d}.jpg"
            write_image(tmp_path / f"{kind}2014" / name, image_id)
            images.append({"id": image_id, "file_name": name, "height": 6, "width": 6})
            for k in range(2):
                notes.append(
                    {
                        "id": 100 * image_id + k,
                        "image_id": image_id,
                        "caption": f"image {image_id} caption {k}\n ",
                    }
                )
        document = {"info": {}, "images": images, "annotations": notes}
        (tmp_path / "annotations" / f"captions_{kind}2014.json").write_text(json.dumps(document))
    return tmp_path


def test_coco_trains_on_train2014_and_deals_val2014_into_validation_and_test(coco):
    for seed in (0, 1):
        splits = load(coco, seed=seed)
        assert images_by_split(splits) == {
            "train": [1, 2, 3],
            "validation": [11, 13, 15],
            "test": [12, 14],
        }
    assert splits.sizes == {"train": 3, "validation": 3, "test": 2}
    assert "COCO captions" in splits.summary() and "val2014" in splits.summary()
    # Captions are whole lines, with COCO's trailing newlines and spaces removed.
    assert pairs_by_split(splits)["test"][0] == (12, "image 12 caption 0")
    assert splits.elements["train"] == 6  # captions: one pair each


def test_karpathy_split_file_gives_its_own_splits_with_restval_in_train(tmp_path):
    images = []
    for number, split in enumerate(["train", "restval", "val", "test", "test", "train"], start=1):
        write_image(tmp_path / "Images" / f"{number}.jpg", number)
        sentences = [
            {"raw": f"image {number} says {split}", "tokens": ["x"]},
            {"raw": f"image {number} again"},
        ]
        images.append(
            {"filename": f"{number}.jpg", "split": split, "sentences": sentences, "imgid": number}
        )
    (tmp_path / "dataset_flickr8k.json").write_text(
        json.dumps({"images": images, "dataset": "flickr8k"})
    )
    splits = load(tmp_path)
    assert images_by_split(splits) == {"train": [1, 2, 6], "validation": [3], "test": [4, 5]}
    assert (3, "image 3 says val") in pairs_by_split(splits)["validation"]
    assert splits.sizes == {"train": 3, "validation": 1, "test": 2}
    assert "dataset_flickr8k.json" in splits.summary() and "Images/" in splits.summary()


def test_karpathy_coco_file_reads_filepath_and_filename_from_root(tmp_path):
    images = []
    for number, (folder, split) in enumerate(
        [("train2014", "train"), ("val2014", "restval"), ("val2014", "val"), ("val2014", "test")],
        start=1,
    ):
        write_image(tmp_path / folder / f"{number}.jpg", number)
        images.append(
            {
                "filepath": folder,
                "filename": f"{number}.jpg",
                "split": split,
                "sentences": [{"raw": f"image {number} caption"}],
            }
        )
    (tmp_path / "dataset_coco.json").write_text(json.dumps({"images": images}))
    assert images_by_split(load(tmp_path)) == {"train": [1, 2], "validation": [3], "test": [4]}


def _flickr8k(root, image_folder="Flicker8k_Dataset"):
    """Flickr8k as its two zips unpack: 7 captioned images, one of them in no split list."""
    text = root / "Flickr8k_text"
    text.mkdir(parents=True)
    lines = []
    for number in range(1, 8):
        write_image(root / image_folder / f"{number}_abc.jpg", number)
        lines += [f"{number}_abc.jpg#{k}\timage {number} caption {k}" for k in range(2)]
    (text / "Flickr8k.token.txt").write_text("\n".join(lines) + "\n")
    lists = {"train": [1, 2, 3], "dev": [4], "test": [5, 6]}
    for split, numbers in lists.items():
        (text / f"Flickr_8k.{split}Images.txt").write_text(
            "".join(f"{n}_abc.jpg\n" for n in numbers)
        )


@pytest.mark.parametrize("image_folder", ["Flicker8k_Dataset", "Flickr8k_Dataset"])
def test_flickr8k_as_shipped_uses_the_official_split_lists(tmp_path, image_folder):
    _flickr8k(tmp_path, image_folder)
    splits = load(tmp_path)
    assert images_by_split(splits) == {"train": [1, 2, 3], "validation": [4], "test": [5, 6]}
    assert len(pairs_by_split(splits)["train"]) == 6  # two captions each, "#N" dropped
    assert "1 captioned image(s) in no list left out" in splits.summary()
    assert "with no caption" not in splits.summary()


def test_flickr8k_names_listed_images_that_have_no_caption(tmp_path):
    # As in the real lists: a name in trainImages.txt with no line in the token file.
    _flickr8k(tmp_path)
    lists = tmp_path / "Flickr8k_text"
    with open(lists / "Flickr_8k.testImages.txt", "a") as file:
        file.write("9_ghost.jpg\n")
    with open(lists / "Flickr_8k.trainImages.txt", "a") as file:
        file.write("8_ghost.jpg\n")
    splits = load(tmp_path)
    assert images_by_split(splits) == {"train": [1, 2, 3], "validation": [4], "test": [5, 6]}
    assert (
        "2 listed image(s) with no caption in Flickr8k.token.txt left out (the first: "
        "8_ghost.jpg in Flickr_8k.trainImages.txt)"
    ) in splits.summary()


def test_kaggle_flickr8k_captions_txt_keeps_commas_and_quotes(tmp_path):
    rows = [["image", "caption"]]
    for number in range(1, 11):
        write_image(tmp_path / "Images" / f"{number}.jpg", number)
        rows += [
            [f"{number}.jpg", f'image {number} a dog, "running" fast'],
            [f"{number}.jpg", f"image {number} plain"],
        ]
    with open(tmp_path / "captions.txt", "w", newline="") as file:
        csv.writer(file).writerows(rows)
    splits = load(tmp_path, validation_fraction=0.2, test_fraction=0.1)
    assert splits.sizes == {"train": 7, "validation": 2, "test": 1}
    everything = sorted(row for rows in pairs_by_split(splits).values() for row in rows)
    assert (3, 'image 3 a dog, "running" fast') in everything and len(everything) == 20
    assert "Kaggle's Flickr8k" in splits.summary() and "drawn at random" in splits.summary()


def test_csv_file_with_named_columns_and_paths_relative_to_it(tmp_path):
    lines = ["caption;ignored;path"]  # not the default column names, and not in that order
    for number in range(1, 5):
        write_image(tmp_path / "photos" / f"{number}.png", number)
        lines.append(f"image {number} text,ignored,photos/{number}.png")
    (tmp_path / "list.csv").write_text("\n".join(line.replace(";", ",") for line in lines) + "\n")
    with pytest.raises(ValueError) as refused:
        load_caption_dataset(f"csv:{tmp_path / 'list.csv'}", 6)
    assert str(refused.value) == (
        f"{tmp_path / 'list.csv'} must have the column(s) 'image' (set them with --image-column "
        "and --caption-column); its header line names ['caption', 'ignored', 'path']. "
        f"Received: dataset='csv:{tmp_path / 'list.csv'}'"
    )  # one "Received", the argument's
    splits = load_caption_dataset(
        f"csv:{tmp_path / 'list.csv'}",
        6,
        image_column="path",
        validation_fraction=0.0,
        test_fraction=0.0,
    )
    assert images_by_split(splits) == {"train": [1, 2, 3, 4], "validation": [], "test": []}


def test_a_folder_with_two_layouts_names_both_and_either_file_can_be_chosen(tmp_path):
    write_image(tmp_path / "1.png", 1)
    (tmp_path / "captions.tsv").write_text("1.png\timage 1 from the tsv\n")
    karpathy = {
        "images": [
            {"filename": "1.png", "split": "train", "sentences": [{"raw": "image 1 from json"}]}
        ]
    }
    (tmp_path / "dataset_mine.json").write_text(json.dumps(karpathy))
    with pytest.raises(ValueError, match="holds 2 caption layouts") as raised:
        load(tmp_path)
    assert f"folder:{tmp_path / 'captions.tsv'}" in str(raised.value)
    assert f"folder:{tmp_path / 'dataset_mine.json'}" in str(raised.value)
    chosen = load_caption_dataset(f"folder:{tmp_path / 'dataset_mine.json'}", 6)
    assert pairs_by_split(chosen)["train"] == [(1, "image 1 from json")]


def test_a_folder_with_no_layout_lists_what_was_looked_for(tmp_path):
    write_image(tmp_path / "loose.png", 1)
    with pytest.raises(ValueError) as raised:
        load(tmp_path)
    message = str(raised.value)
    for expected in (
        "captions.tsv",
        "annotations/captions_trainYEAR.json",
        "dataset_*.json",
        "Flickr8k.token.txt",
        "captions.txt",
        f"Received: dataset='folder:{tmp_path}'",
    ):
        assert expected in message


def _tsv_folder(root, lines):
    for number in (1, 2, 3):
        write_image(root / f"{number}.png", number)
    (root / "captions.tsv").write_bytes(b"\n".join(lines) + b"\n")


def test_captions_tsv_with_a_byte_order_mark_keeps_its_first_image(tmp_path):
    _tsv_folder(tmp_path, [b"\xef\xbb\xbf1.png\timage 1 first", b"2.png\timage 2 second"])
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "missing \ufeff1.png"
        splits = load(tmp_path, validation_fraction=0.0, test_fraction=0.0)
    assert images_by_split(splits)["train"] == [1, 2]


def test_non_utf8_caption_line_is_skipped_naming_file_and_line(tmp_path):
    _tsv_folder(tmp_path, [b"1.png\timage 1 ok", b"2.png\timage 2 caf\xe9", b"3.png\timage 3 ok"])
    with pytest.warns(UserWarning, match=r"captions.tsv that are not UTF-8: line 2\."):
        splits = load(tmp_path, validation_fraction=0.0, test_fraction=0.0)
    assert images_by_split(splits)["train"] == [1, 3]
    with pytest.raises(ValueError, match=r"captions.tsv are not UTF-8: line 2\. .*--strict"):
        load(tmp_path, strict=True)


@pytest.mark.parametrize("layout", ["csv", "token"])
def test_non_utf8_lines_of_csv_and_token_files_are_named(tmp_path, layout):
    if layout == "csv":
        for number in (1, 2):
            write_image(tmp_path / "Images" / f"{number}.jpg", number)
        (tmp_path / "captions.txt").write_bytes(
            b"image,caption\n1.jpg,image 1 ok\n2.jpg,image 2 \xff\n"
        )
        name = "captions.txt"
    else:
        _flickr8k(tmp_path)
        token = tmp_path / "Flickr8k_text" / "Flickr8k.token.txt"
        token.write_bytes(token.read_bytes().replace(b"image 3 caption 1", b"image 3 \xfe"))
        name = "Flickr8k.token.txt"
    with pytest.warns(UserWarning, match=rf"{name} that are not UTF-8: line (3|6)\."):
        load(tmp_path, validation_fraction=0.0, test_fraction=0.0)
    with pytest.raises(ValueError, match=rf"{name} are not UTF-8: line (3|6)"):
        load(tmp_path, strict=True)


def test_image_paths_outside_the_data_set_are_refused_naming_the_lines(tmp_path):
    root = tmp_path / "data"
    write_image(root / "1.png", 1)
    write_image(tmp_path / "outside.png", 2)
    lines = [
        b"1.png\timage 1 inside",
        b"../outside.png\timage 2 climbs out",
        str(tmp_path / "outside.png").encode() + b"\timage 2 absolute",
    ]
    root.mkdir(exist_ok=True)
    (root / "captions.tsv").write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(
        ValueError,
        match=r"2 image path\(s\) of .*captions.tsv lead outside .*lines 2, 3 .*--allow-outside-paths",
    ):
        load(root)
    splits = load(root, allow_outside_paths=True, validation_fraction=0.0, test_fraction=0.0)
    assert images_by_split(splits)["train"] == [1, 2]


def test_karpathy_filepath_climbing_out_of_root_is_refused(tmp_path):
    write_image(tmp_path / "other" / "1.jpg", 1)
    root = tmp_path / "data"
    root.mkdir()
    entry = {
        "filepath": "../other",
        "filename": "1.jpg",
        "split": "train",
        "sentences": [{"raw": "image 1"}],
    }
    (root / "dataset_coco.json").write_text(json.dumps({"images": [entry]}))
    with pytest.raises(ValueError, match="lead outside the data set's folder"):
        load(root)


def test_sizes_count_images_and_the_summary_says_how_the_split_was_made(tmp_path):
    for number in range(1, 11):
        write_image(tmp_path / f"{number}.png", number)
    (tmp_path / "captions.tsv").write_text(
        "".join(f"{n}.png\timage {n} a\n{n}.png\timage {n} b\n" for n in range(1, 11))
    )
    splits = load(tmp_path, validation_fraction=0.2, test_fraction=0.2, seed=3)
    assert splits.sizes == {"train": 6, "validation": 2, "test": 2}
    assert splits.elements == {"train": 12, "validation": 4, "test": 4}
    assert {name: len(list(splits[name])) for name in splits} == splits.elements
    assert splits.summary().startswith("captions.tsv: train 6 images, validation 2, test 2 (")
    # The images at their own size, then resized, without reading the listing again.
    os.remove(tmp_path / "captions.tsv")
    resized = splits.resized((3, 4))
    assert resized["train"].element_spec[0].shape.as_list() == [3, 4, 3]
    assert resized.sizes == splits.sizes


def test_coco_image_id_listed_twice_is_refused_naming_both_files(coco):
    # Today's ids 1 and 2 of train2014 become one id with two files; the captions of
    # the dropped one would otherwise go to the other.
    path = coco / "annotations" / "captions_train2014.json"
    document = json.loads(path.read_text())
    document["images"][1]["id"] = 1
    path.write_text(json.dumps(document))
    with pytest.raises(
        ValueError,
        match=r"captions_train2014\.json: image id 1 is listed twice "
        r"\(train2014/COCO_train2014_000000000001\.jpg, train2014/COCO_train2014_000000000002\.jpg\)",
    ):
        load(coco)
    # One file under two ids would merge their captions: refused as well.
    document["images"][1] = dict(document["images"][0], id=2)
    path.write_text(json.dumps(document))
    with pytest.raises(
        ValueError, match=r"COCO_train2014_000000000001\.jpg is listed under two ids \(1, 2\)"
    ):
        load(coco)


def test_coco_caption_of_an_image_not_listed_is_refused(coco):
    path = coco / "annotations" / "captions_train2014.json"
    document = json.loads(path.read_text())
    document["annotations"].append({"image_id": 999, "id": 5000, "caption": "A lost dog."})
    path.write_text(json.dumps(document))
    with pytest.raises(
        ValueError,
        match=r"captions_train2014\.json: 1 of its \d+ captions name an image id its 'images' "
        r"do not list \(the first: image id 999, 'A lost dog\.'\)",
    ):
        load(coco)


@pytest.mark.parametrize("caption, shown", [(None, "null"), (123, "123"), (["a dog"], '["a dog"]')])
def test_coco_caption_that_is_not_text_is_refused_not_trained_as_its_spelling(coco, caption, shown):
    path = coco / "annotations" / "captions_train2014.json"
    document = json.loads(path.read_text())
    image_id = document["images"][0]["id"]
    document["annotations"].append({"image_id": image_id, "id": 5000, "caption": caption})
    path.write_text(json.dumps(document))
    with pytest.raises(ValueError) as error:
        load(coco)
    assert str(error.value).startswith(f"{path}: 1 of its ")
    assert f"captions are not text (the first: image id {image_id}, caption {shown})" in str(
        error.value
    )


def test_karpathy_image_in_two_splits_is_refused_naming_both_entries(tmp_path):
    images = []
    for number, split in [(1, "train"), (2, "train"), (1, "test"), (3, "val")]:
        write_image(tmp_path / "Images" / f"{number}.jpg", number)
        images.append(
            {"filename": f"{number}.jpg", "split": split, "sentences": [{"raw": f"image {number}"}]}
        )
    (tmp_path / "dataset_flickr8k.json").write_text(json.dumps({"images": images}))
    with pytest.raises(
        ValueError,
        match=r"dataset_flickr8k\.json: image 1\.jpg is listed in two splits, train \(image entry 0\) "
        r"and test \(image entry 2\)",
    ):
        load(tmp_path)


def test_flickr8k_image_in_two_split_lists_is_refused(tmp_path):
    _flickr8k(tmp_path)
    (tmp_path / "Flickr8k_text" / "Flickr_8k.testImages.txt").write_text("5_abc.jpg\n1_abc.jpg\n")
    with pytest.raises(
        ValueError,
        match=r"Flickr_8k\.testImages\.txt line 2: image 1_abc\.jpg is listed in two splits, "
        r"train \(Flickr_8k\.trainImages\.txt\) and test",
    ):
        load(tmp_path)


def test_links_inside_the_data_set_that_lead_outside_are_refused_unless_allowed(tmp_path):
    root = tmp_path / "data"
    write_image(root / "1.png", 1)
    write_image(tmp_path / "elsewhere" / "2.png", 2)
    write_image(tmp_path / "elsewhere" / "3.png", 3)
    os.symlink(tmp_path / "elsewhere" / "2.png", root / "2.png")  # a linked file
    os.symlink(tmp_path / "elsewhere", root / "more")  # a linked folder on the way
    os.symlink(root / "1.png", root / "4.png")  # a link that stays inside is fine
    (root / "captions.tsv").write_text(
        "1.png\timage 1 plain\n2.png\timage 2 linked\nmore/3.png\timage 3 in a linked folder\n"
        "4.png\timage 1 again\n"
    )
    with pytest.raises(
        ValueError,
        match=rf"2 symbolic link\(s\) under {root} \(listed by .*captions\.tsv\) lead outside it: "
        rf"2\.png -> {tmp_path / 'elsewhere' / '2.png'}, more -> {tmp_path / 'elsewhere'}\. "
        r".*--allow-outside-links",
    ):
        load(root)
    # A link to the data set's folder itself is no way out.
    os.symlink(root, tmp_path / "link-to-data")
    with pytest.raises(ValueError, match="2 symbolic link"):
        load(tmp_path / "link-to-data")
    splits = load(root, allow_outside_links=True, validation_fraction=0.0, test_fraction=0.0)
    assert images_by_split(splits)["train"] == [1, 2, 3]
