"""Pixel-art and handwritten digit folders: coarse bitmaps enlarged by whole cells, readable."""

import doctest
import filecmp
import json
import os
import pathlib
import re
import sys

import numpy as np
import pytest
from PIL import Image

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import learning_datasets as ld  # noqa: E402
from benchmarks import learning_digit_folders as digits  # noqa: E402
from keras_attention.tasks.captioning.sources import load_caption_dataset  # noqa: E402
from keras_attention.tasks.image_classification.sources import load_image_classification_dataset  # noqa: E402


def _same_folder(first, second):
    names = sorted(os.listdir(first))
    return names == sorted(os.listdir(second)) and all(
        filecmp.cmp(os.path.join(first, n), os.path.join(second, n), shallow=False) for n in names
    )


def _cells(pixels, scale):
    """The `(h, w)` grey cells of an enlarged image, checking every block is one value."""
    grey = pixels[..., 0].astype(float)
    assert np.array_equal(pixels[..., 0], pixels[..., 2])  # grey: R = G = B
    height, width = grey.shape
    blocks = grey.reshape(height // scale, scale, width // scale, scale)
    assert np.all(blocks == blocks[:, :1, :, :1])  # each cell one value: nearest enlarging
    return blocks[:, 0, :, 0]


def test_pixel_digit_is_a_coarse_bitmap_of_grey_levels_deterministic_in_the_rng():
    first = digits.pixel_digit("4", np.random.default_rng(2))
    again = digits.pixel_digit("4", np.random.default_rng(2))
    other = digits.pixel_digit("4", np.random.default_rng(3))
    assert first.shape == (8, 8) and first.dtype == np.float32
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    levels = first * digits.GREY_LEVELS
    np.testing.assert_allclose(levels, np.round(levels), atol=1e-5)
    assert first.min() == 0.0 and first.max() == 1.0 and len(np.unique(first)) > 3
    one_bit = digits.pixel_digit("4", np.random.default_rng(2), grid=16, levels=1)
    assert one_bit.shape == (16, 16) and set(np.unique(one_bit)) == {0.0, 1.0}


def test_pixel_digits_differ_by_digit_more_than_by_draw():
    def mean_bitmap(digit):
        rng = np.random.default_rng(0)
        return np.mean([digits.pixel_digit(digit, rng) for _ in range(20)], axis=0)

    one, seven = mean_bitmap("1"), mean_bitmap("7")
    rng = np.random.default_rng(9)
    other_one = np.mean([digits.pixel_digit("1", rng) for _ in range(20)], axis=0)
    assert np.abs(one - other_one).mean() < np.abs(one - seven).mean()


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(digit="A"), "digit='A'"),
        (dict(digit="12"), "digit='12'"),
        (dict(digit="1", grid=3), "`grid` must be an int >= 4. Received: grid=3"),
        (dict(digit="1", levels=0), "`levels` must be an int >= 1. Received: levels=0"),
        (dict(digit="1", noise=2.0), "noise=2.0"),
    ],
)
def test_pixel_digit_rejects_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        digits.pixel_digit(rng=np.random.default_rng(0), **kwargs)


@pytest.mark.parametrize(
    "options, background", [(dict(), 0), (dict(grid=16, scale=2, levels=1, dark_ink=True), 255)]
)
def test_pixel_digit_folder_is_enlarged_bitmaps_in_class_folders(tmp_path, options, background):
    info = digits.make_pixel_digit_folder(tmp_path / "train", num_per_class=3, seed=0, **options)
    scale = options.get("scale", 4)
    assert info["class_names"] == list("0123456789") and info["num_images"] == 30
    assert info["image_size"] == (32, 32)
    for name in info["class_names"]:
        files = sorted(os.listdir(tmp_path / "train" / name))
        assert len(files) == 3
        pixels = np.asarray(Image.open(tmp_path / "train" / name / files[0]))
        assert pixels.shape == (32, 32, 3) and pixels.dtype == np.uint8
        cells = _cells(pixels, scale)
        assert cells[0, 0] == background  # the corner is blank
        if options.get("levels") == 1:
            assert set(np.unique(cells)) == {0, 255}
    data = load_image_classification_dataset(f"folder:{tmp_path / 'train'}", 32, seed=0)
    assert data.class_names == info["class_names"]
    assert sum(data.split_sizes.values()) == 30  # listed images, all of them decoded:
    assert sum(len(list(split)) for split in data.splits.values()) == 30

    digits.make_pixel_digit_folder(tmp_path / "again", num_per_class=3, seed=0, **options)
    digits.make_pixel_digit_folder(tmp_path / "held", num_per_class=3, seed=1, **options)
    assert _same_folder(tmp_path / "train" / "5", tmp_path / "again" / "5")
    assert not _same_folder(tmp_path / "train" / "5", tmp_path / "held" / "5")


def test_pixel_digit_strips_are_captioned_left_to_right_with_boxes_around_the_ink(tmp_path):
    info = digits.make_pixel_digit_strip_folder(tmp_path, num_images=6, seed=2)
    assert info["image_size"] == (32, 96) and info["caption_lengths"] == (3, 3)
    lines = [
        line.split("\t") for line in pathlib.Path(info["captions_path"]).read_text().splitlines()
    ]
    boxes = json.loads(pathlib.Path(info["boxes_path"]).read_text())
    assert len(lines) == 6
    for name, caption in lines:
        words = caption.split(" ")
        assert len(words) == 3 and all(word in ld.DIGIT_WORDS for word in words)
        # (8, 24) cells; a box holds the ink above a tenth of full ink
        ink = _cells(np.asarray(Image.open(tmp_path / name)), 4) > 0.1 * 255
        assert len(boxes[name]) == 3
        for slot, (row0, col0, row1, col1) in enumerate(boxes[name]):
            # Each box lies in its digit's 32-pixel slot, on whole cells, tight around the ink.
            assert 32 * slot <= col0 < col1 <= 32 * (slot + 1)
            assert all(value % 4 == 0 for value in (row0, col0, row1, col1))
            slot_ink = ink[:, 8 * slot : 8 * (slot + 1)]
            rows, cols = np.flatnonzero(slot_ink.any(1)), np.flatnonzero(slot_ink.any(0))
            assert (row0, row1) == (4 * rows[0], 4 * (rows[-1] + 1))
            assert (col0, col1) == (32 * slot + 4 * cols[0], 32 * slot + 4 * (cols[-1] + 1))
    splits = load_caption_dataset(f"folder:{tmp_path}", (32, 96), seed=0)
    assert sum(splits.elements.values()) == 6  # listed captions, all of them decoded:
    assert sum(len(list(split)) for split in splits.values()) == 6


def test_handwritten_digit_counts_a_fine_pen_bitmap_in_16ths_deterministic_in_the_rng():
    first = digits.handwritten_digit("2", np.random.default_rng(4))
    np.testing.assert_array_equal(first, digits.handwritten_digit("2", np.random.default_rng(4)))
    assert not np.array_equal(first, digits.handwritten_digit("2", np.random.default_rng(5)))
    assert first.shape == (8, 8) and first.dtype == np.float32
    np.testing.assert_allclose(first * 16, np.round(first * 16), atol=1e-5)
    rng = np.random.default_rng(0)
    many = np.stack([digits.handwritten_digit(d, rng) for d in "0123456789" for _ in range(5)])
    ink = many[many > 0]
    # Thin strokes cover cells partly: many ink cells are lighter than mid-grey.
    assert 0.2 < (ink < 0.5).mean() < 0.8 and (many == 1.0).any()
    assert digits.handwritten_digit("8", rng, grid=16).shape == (16, 16)


def test_handwritten_digits_are_written_in_more_than_one_way():
    # A 1 with a flag and a foot, or without; a 7 with a bar, or without.
    assert all(len(digits._DIGIT_HANDS[d]) >= 2 for d in "0123456789")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(digit="x"), "digit='x'"),
        (dict(digit="1", grid=2), "`grid` must be an int >= 4. Received: grid=2"),
        (dict(digit="1", broken=1.5), "`broken` must be a number in [0, 1]. Received: broken=1.5"),
        (
            dict(digit="1", wobble=-0.1),
            "`wobble` must be a number in [0, 1]. Received: wobble=-0.1",
        ),
    ],
)
def test_handwritten_digit_rejects_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        digits.handwritten_digit(rng=np.random.default_rng(0), **kwargs)


@pytest.mark.parametrize("options, background", [(dict(), 0), (dict(dark_ink=True), 255)])
def test_handwritten_digit_folder_is_enlarged_bitmaps_in_class_folders(
    tmp_path, options, background
):
    info = digits.make_handwritten_digit_folder(tmp_path / "train", num_per_class=2, **options)
    assert info["class_names"] == list("0123456789") and info["num_images"] == 20
    assert info["image_size"] == (32, 32)
    for name in info["class_names"]:
        files = sorted(os.listdir(tmp_path / "train" / name))
        assert len(files) == 2
        cells = _cells(np.asarray(Image.open(tmp_path / "train" / name / files[0])), 4)
        assert cells.shape == (8, 8) and cells[0, 0] == background
    data = load_image_classification_dataset(f"folder:{tmp_path / 'train'}", 32, seed=0)
    assert data.class_names == info["class_names"] and sum(data.split_sizes.values()) == 20
    digits.make_handwritten_digit_folder(tmp_path / "again", num_per_class=2, **options)
    digits.make_handwritten_digit_folder(tmp_path / "held", num_per_class=2, seed=1, **options)
    assert _same_folder(tmp_path / "train" / "3", tmp_path / "again" / "3")
    assert not _same_folder(tmp_path / "train" / "3", tmp_path / "held" / "3")


def test_docstring_examples_run():
    results = doctest.testmod(digits, optionflags=doctest.ELLIPSIS)
    assert results.attempted > 0 and results.failed == 0
