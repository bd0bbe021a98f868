"""Learning benchmark data sets: readable by the package's loaders, right boxes, exact rules."""

import datetime
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
from keras_attention.tasks.captioning.sources import load_caption_dataset  # noqa: E402
from keras_attention.tasks.image_classification.sources import load_image_classification_dataset  # noqa: E402
from keras_attention.tasks.translation.sources import load_translation_pairs  # noqa: E402
from keras_attention.tasks.translation.sources import read_tsv_pairs  # noqa: E402


def _caption_lines(directory):
    lines = pathlib.Path(directory, ld.CAPTIONS_FILE).read_text(encoding="utf-8").splitlines()
    return [line.split("\t") for line in lines]


def _same_folder(first, second):
    names = sorted(os.listdir(first))
    return names == sorted(os.listdir(second)) and all(
        filecmp.cmp(os.path.join(first, n), os.path.join(second, n), shallow=False) for n in names
    )


# render_glyph


def test_render_glyph_is_ink_in_range_and_deterministic():
    first = ld.render_glyph("3", (20, 14), np.random.default_rng(5))
    again = ld.render_glyph("3", (20, 14), np.random.default_rng(5))
    other = ld.render_glyph("3", (20, 14), np.random.default_rng(6))
    assert first.shape == (20, 14) and first.dtype == np.float32
    assert first.min() >= 0.0 and first.max() <= 1.0
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    # Strokes cover some but far from all of the image, and stay off the border mostly.
    assert 0.05 < (first > 0.5).mean() < 0.6


def test_render_glyph_draws_different_digits_differently():
    # Average many distortions: the mean images of two digits differ clearly.
    rng = np.random.default_rng(0)
    means = {c: np.mean([ld.render_glyph(c, 24, rng) for _ in range(20)], axis=0) for c in "17"}
    assert np.abs(means["1"] - means["7"]).mean() > 0.05
    # A "1" is a narrow vertical stroke: its ink is in the middle columns.
    columns = means["1"].sum(axis=0)
    assert columns[8:16].sum() > 0.7 * columns.sum()


def test_render_glyph_noise_and_letters():
    clean = ld.render_glyph("a", 16, np.random.default_rng(1))
    noisy = ld.render_glyph("A", 16, np.random.default_rng(1), noise=0.2)
    assert noisy.shape == clean.shape and 0.0 <= noisy.min() and noisy.max() <= 1.0
    assert not np.array_equal(clean, noisy)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(char="?"), "char='?'"),
        (dict(size=2), "size=2"),
        (dict(noise=2.0), "noise=2.0"),
        (dict(rng=3), "rng=int"),
    ],
)
def test_render_glyph_rejects_bad_arguments(kwargs, message):
    arguments = dict(char="1", size=16, rng=np.random.default_rng(0), noise=0.0) | kwargs
    with pytest.raises(ValueError, match=re.escape(message)):
        ld.render_glyph(**arguments)


# glyph captions


def test_glyph_captions_load_as_a_caption_folder_with_boxes_around_the_ink(tmp_path):
    info = ld.make_glyph_caption_folder(
        tmp_path, num_images=12, height=32, width=96, glyphs_per_image=(1, 4), seed=3
    )
    lines = _caption_lines(tmp_path)
    boxes = json.loads(pathlib.Path(info["boxes_path"]).read_text())
    assert len(lines) == 12 and sorted(boxes) == sorted(name for name, _ in lines)
    lengths = set()
    for name, caption in lines:
        words = caption.split(" ")
        lengths.add(len(words))
        assert all(word in ld.DIGIT_WORDS for word in words)
        assert len(boxes[name]) == len(words)
        pixels = np.asarray(Image.open(tmp_path / name))
        assert pixels.shape == (32, 96, 3) and pixels.dtype == np.uint8
        ink = (235 - pixels.astype(float).mean(axis=-1)) / (235 - 20)  # 0 background, 1 ink
        covered = np.zeros(ink.shape, dtype=bool)
        previous_right = -1
        for row0, col0, row1, col1 in boxes[name]:
            assert 0 <= row0 < row1 <= 32 and 0 <= col0 < col1 <= 96
            assert col0 >= previous_right  # left to right, no overlap
            previous_right = col1
            assert ink[row0:row1, col0:col1].max() > 0.9  # a glyph is drawn in its box
            covered[row0:row1, col0:col1] = True
        assert ink[~covered].max(initial=0.0) < 0.15  # no ink outside the boxes
    assert len(lengths) > 1  # captions of varying length

    splits = load_caption_dataset(f"folder:{tmp_path}", (32, 96), seed=0)
    assert sum(splits.elements.values()) == 12  # listed captions, all of them decoded:
    assert sum(len(list(split)) for split in splits.values()) == 12
    image, caption = next(iter(splits["train"]))
    assert image.shape == (32, 96, 3)
    assert caption.numpy().decode() in {c for _, c in lines}


def test_glyph_captions_are_deterministic_in_the_seed(tmp_path):
    for folder, seed in (("a", 0), ("b", 0), ("c", 1)):
        ld.make_glyph_caption_folder(tmp_path / folder, num_images=3, seed=seed, colour=True)
    assert _same_folder(tmp_path / "a", tmp_path / "b")
    assert not _same_folder(tmp_path / "a", tmp_path / "c")


def test_glyph_captions_use_the_given_words_and_glyphs(tmp_path):
    ld.make_glyph_caption_folder(
        tmp_path, num_images=5, glyphs_per_image=2, words=("ex", "why"), glyphs="XY", seed=0
    )
    for _, caption in _caption_lines(tmp_path):
        assert set(caption.split()) <= {"ex", "why"} and len(caption.split()) == 2


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(glyphs_per_image=(3, 1)), "glyphs_per_image=(3, 1)"),
        (dict(words=("one two",)), "words=('one two',)"),
        (dict(num_images=0), "num_images=0"),
        (dict(width=20, glyphs_per_image=4), "width=20"),
        (dict(glyphs="1?"), "glyphs='1?'"),
    ],
)
def test_glyph_captions_reject_bad_arguments(tmp_path, kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        ld.make_glyph_caption_folder(tmp_path, **({"num_images": 2} | kwargs))


# object scenes


def _centre(box):
    row0, col0, row1, col1 = box
    return (row0 + row1) / 2, (col0 + col1) / 2


@pytest.mark.parametrize("height, width", [(64, 96), (80, 60)])
def test_object_scene_captions_state_the_relations_of_the_boxes(tmp_path, height, width):
    info = ld.make_object_scene_caption_folder(
        tmp_path, num_images=16, height=height, width=width, seed=2
    )
    boxes = json.loads(pathlib.Path(info["boxes_path"]).read_text())
    relation = re.compile(r"(\w+) (left of|right of|above|below) (?=(\w+))")
    for name, caption in _caption_lines(tmp_path):
        names = [w for w in caption.split() if w in ld.OBJECT_NAMES]
        assert len(names) == len(set(names)) == len(boxes[name]) in (2, 3)
        pixels = np.asarray(Image.open(tmp_path / name)).astype(float)
        assert pixels.shape == (height, width, 3)
        for box in boxes[name]:
            row0, col0, row1, col1 = box
            assert 0 <= row0 < row1 <= height and 0 <= col0 < col1 <= width
        centres = {n: _centre(b) for n, b in zip(names, boxes[name])}
        pairs = relation.findall(caption)
        assert len(pairs) == len(names) - 1
        for first, words, second in pairs:
            (r1, c1), (r2, c2) = centres[first], centres[second]
            expected = {
                "left of": c1 < c2,
                "right of": c1 > c2,
                "above": r1 < r2,
                "below": r1 > r2,
            }[words]
            assert expected, (caption, centres)
        # Pixels outside every box are one colour: the background.
        outside = np.ones((height, width), dtype=bool)
        for row0, col0, row1, col1 in boxes[name]:
            outside[row0:row1, col0:col1] = False
        assert np.ptp(pixels[outside], axis=0).max() == 0

    splits = load_caption_dataset(f"folder:{tmp_path}", (height, width), seed=0)
    image, caption = next(iter(splits["test"]))
    assert image.shape == (height, width, 3)


@pytest.mark.parametrize("height, width, grid", [(64, 96, (2, 3)), (80, 60, (3, 2))])
def test_object_scene_captions_are_a_function_of_the_image(tmp_path, height, width, grid):
    # An image fixes which cells hold objects; the caption must follow from that
    # alone: the neighbouring cells form one chain, read from the object that
    # comes first in reading order. Otherwise no captioner can match it exactly.
    info = ld.make_object_scene_caption_folder(
        tmp_path, num_images=60, height=height, width=width, seed=3
    )
    boxes = json.loads(pathlib.Path(info["boxes_path"]).read_text())
    cell_h, cell_w = height / grid[0], width / grid[1]
    starts = set()
    for name, caption in _caption_lines(tmp_path):
        names = [w for w in caption.split() if w in ld.OBJECT_NAMES]
        cells = [(int(r // cell_h), int(c // cell_w)) for r, c in (_centre(b) for b in boxes[name])]
        neighbours = [
            (i, j)
            for i in range(len(cells))
            for j in range(i + 1, len(cells))
            if abs(cells[i][0] - cells[j][0]) + abs(cells[i][1] - cells[j][1]) == 1
        ]
        assert neighbours == [(i, i + 1) for i in range(len(cells) - 1)], (caption, cells)
        assert cells[0] == min(cells), (caption, cells)  # the first in reading order
        starts.add(names[0])
    assert len(starts) >= 3  # the first word still varies with the image


def test_object_scenes_are_deterministic_in_the_seed(tmp_path):
    for folder, seed in (("a", 4), ("b", 4), ("c", 5)):
        ld.make_object_scene_caption_folder(tmp_path / folder, num_images=3, seed=seed)
    assert _same_folder(tmp_path / "a", tmp_path / "b")
    assert not _same_folder(tmp_path / "a", tmp_path / "c")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(objects_per_image=1), "objects_per_image=1"),
        (dict(names=("star", "moon")), "names=('star', 'moon')"),
        (dict(grid=(1, 1)), "grid=(1, 1)"),
    ],
)
def test_object_scenes_reject_bad_arguments(tmp_path, kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        ld.make_object_scene_caption_folder(tmp_path, **({"num_images": 2} | kwargs))


# glyph classification


def test_glyph_classification_folder_loads_with_its_classes(tmp_path):
    info = ld.make_glyph_classification_folder(
        tmp_path / "train", num_per_class=4, size=24, classes="0358", seed=0
    )
    assert info["class_names"] == ["0", "3", "5", "8"] and info["num_images"] == 16
    data = load_image_classification_dataset(f"folder:{tmp_path / 'train'}", 24, seed=0)
    assert data.class_names == info["class_names"]
    assert sum(data.split_sizes.values()) == 16  # listed images, all of them decoded:
    assert sum(len(list(split)) for split in data.splits.values()) == 16
    image, label = next(iter(data.splits["train"]))
    assert image.shape == (24, 24, 3) and 0 <= int(label) < 4

    ld.make_glyph_classification_folder(
        tmp_path / "again", num_per_class=4, size=24, classes="0358", seed=0
    )
    ld.make_glyph_classification_folder(
        tmp_path / "held", num_per_class=4, size=24, classes="0358", seed=1
    )
    for name in "0358":
        assert _same_folder(tmp_path / "train" / name, tmp_path / "again" / name)
        assert not _same_folder(tmp_path / "train" / name, tmp_path / "held" / name)


def test_glyph_classification_rejects_repeated_classes(tmp_path):
    with pytest.raises(ValueError, match=re.escape("classes='011'")):
        ld.make_glyph_classification_folder(tmp_path, num_per_class=1, classes="011")


# text tasks

_UNITS = {word: value for value, word in enumerate(ld._ONES)}
_UNITS.update({word: 10 * value for value, word in enumerate(ld._TENS) if word})


def _words_to_number(text):
    """An independent reading of English number words."""
    total, current = 0, 0
    for word in text.replace("-", " ").split():
        if word == "and":
            continue
        if word == "hundred":
            current *= 100
        elif word == "thousand":
            total, current = (total + current) * 1000, 0
        else:
            current += _UNITS[word]
    return total + current


_DATE_FORMATS = ("%d %B %Y", "%B %d, %Y", "%d/%m/%Y", "%b. %d, %Y", "the %d of %B %Y", "%Y-%m-%d")


def _parse_date(text):
    text = re.sub(r"(\d+)(st|nd|rd|th) of", r"\1 of", text)
    for layout in _DATE_FORMATS:
        try:
            return datetime.datetime.strptime(text, layout).date()
        except ValueError:
            pass
    raise AssertionError(f"unreadable date {text!r}")


def _write_task(tmp_path, task, count=60, seed=0):
    path = tmp_path / f"{task}_{seed}.tsv"
    info = ld.make_text_task_tsv(str(path), task, count, seed=seed)
    assert info == {"path": str(path), "task": task, "num_pairs": count}
    pairs = read_tsv_pairs(str(path))
    assert len(pairs) == count and len({s for s, _ in pairs}) == count
    return path, pairs


def test_dates_are_the_same_day_in_day_month_year_form(tmp_path):
    _, pairs = _write_task(tmp_path, "dates", count=200)
    seen_layouts = set()
    for source, target in pairs:
        day = _parse_date(source)
        assert target == day.strftime("%d.%m.%Y")
        seen_layouts.add(re.sub(r"\d", "9", source.split()[0]))
    assert len(seen_layouts) >= 4


def test_numbers_are_the_digits_of_their_words(tmp_path):
    _, pairs = _write_task(tmp_path, "numbers", count=200)
    for source, target in pairs:
        assert target == str(_words_to_number(source))
    assert max(len(target) for _, target in pairs) == 5
    cases = {
        0: "zero",
        13: "thirteen",
        40: "forty",
        99: "ninety-nine",
        100: "one hundred",
        312: "three hundred and twelve",
        2005: "two thousand and five",
        12345: "twelve thousand three hundred and forty-five",
        70000: "seventy thousand",
    }
    for value, words in cases.items():
        assert ld.number_in_words(value) == words


def test_titlecase_capitalises_each_words_first_letter(tmp_path):
    _, pairs = _write_task(tmp_path, "titlecase")
    for source, target in pairs:
        expected = re.sub(
            r"(^| )([^A-Za-z ]*)([a-z])",
            lambda m: m.group(1) + m.group(2) + m.group(3).upper(),
            source,
        )
        assert target == expected
        assert target.lower() == source.lower()
    assert any("'" in s for s, _ in pairs) and any("?" in s for s, _ in pairs)
    assert ld.title_case("it's a dog, isn't it?") == "It's A Dog, Isn't It?"


def test_transliteration_maps_letters_and_keeps_the_rest(tmp_path):
    _, pairs = _write_task(tmp_path, "transliterate")
    for source, target in pairs:
        latin_kept = re.sub(r"[A-Za-z]+", "", source)
        greek_kept = re.sub(r"[\u0370-\u03ff]+", "", target)
        assert latin_kept == greek_kept  # spaces, digits, punctuation unchanged
        assert not re.search(r"[A-Za-z]", target)
    assert ld.transliterate("The photo, 3 ships!") == "Θε φοτο, 3 σηιψ!"
    assert ld.transliterate("Psst... chat") == "Ψστ... χατ"


def test_detokenize_targets_are_the_sources_without_the_spaces(tmp_path):
    _, pairs = _write_task(tmp_path, "detokenize")
    for source, target in pairs:
        assert source.replace(" ", "") == target.replace(" ", "")
        assert re.findall(r"[a-z0-9]+|[^a-z0-9 ]", target, re.I) == source.split()
    assert not any(" ," in t or " ." in t or " ?" in t for _, t in pairs)


def test_text_tasks_load_as_tsv_and_depend_on_the_seed(tmp_path):
    first, pairs = _write_task(tmp_path, "dates", count=40, seed=0)
    again = tmp_path / "again.tsv"
    ld.make_text_task_tsv(str(again), "dates", 40, seed=0)
    _, other = _write_task(tmp_path, "dates", count=40, seed=1)
    assert first.read_bytes() == again.read_bytes()
    assert other != pairs
    splits = load_translation_pairs(f"tsv:{first}", seed=0)
    assert sum(splits.sizes.values()) == 40 and not splits.estimated
    assert sum(len(list(split)) for split in splits.values()) == 40


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(task="poems"), "task='poems'"),
        (dict(num_pairs=0), "num_pairs=0"),
        (dict(task="numbers", num_pairs=100001), "num_pairs=100001"),
    ],
)
def test_text_tasks_reject_bad_arguments(tmp_path, kwargs, message):
    arguments = dict(path=str(tmp_path / "t.tsv"), task="dates", num_pairs=3) | kwargs
    with pytest.raises(ValueError, match=re.escape(message)):
        ld.make_text_task_tsv(**arguments)


# long compounds


def _english_parts(source, table):
    """The nouns of a compound source, in order (a noun may itself hold a space)."""
    names = sorted(table, key=len, reverse=True)
    parts, rest = [], source
    while rest:
        name = next(n for n in names if rest == n or re.match(re.escape(n) + r"( of |[ -])", rest))
        parts.append(name)
        rest = rest[len(name) :]
        rest = re.sub(r"^( of |[ -])", "", rest)
    return parts


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(language="german", parts=(3, 6)),
        dict(language="dutch", parts=(2, 7), separators=(" ", "-"), target_length=(25, 60)),
    ],
)
def test_compounds_are_the_parts_reversed_in_one_long_word(tmp_path, kwargs):
    path = tmp_path / "compounds.tsv"
    info = ld.make_compound_tsv(str(path), 300, seed=0, **kwargs)
    assert info == {"path": str(path), "language": kwargs["language"], "num_pairs": 300}
    pairs = read_tsv_pairs(str(path))
    assert len(pairs) == 300 and len({s for s, _ in pairs}) == 300
    table = ld.COMPOUND_LANGUAGES[kwargs["language"]]["parts"]
    low, high = kwargs.get("target_length", (20, 60))
    counts = set()
    for source, target in pairs:
        assert low <= len(target) <= high and " " not in target and "-" not in target
        head, *modifiers = _english_parts(source, table)
        counts.add(1 + len(modifiers))
        # The head is written last, the other parts before it in the reverse order.
        expected = "".join(table[m][1] for m in reversed(modifiers)) + table[head][0]
        assert target.lower() == expected
        assert target[0].isupper() == (kwargs["language"] == "german")
    assert counts <= set(range(kwargs["parts"][0], kwargs["parts"][1] + 1)) and len(counts) >= 3
    separators = {sep for sep in (" of ", "-") if any(sep in s for s, _ in pairs)}
    assert separators == ({" of "} if kwargs["language"] == "german" else {"-"})


def test_compound_examples_as_the_languages_write_them():
    assert ld.compound_pair(["field", "flower", "sun"], "german") == "Sonnenblumenfeld"
    assert ld.compound_pair(["company", "insurance", "life"], "german") == (
        "Lebensversicherungsgesellschaft"
    )
    assert ld.compound_pair(["house", "school"], "german") == "Schulhaus"
    assert ld.compound_pair(["story", "grandmother"], "dutch") == "grootmoedersverhaal"


def test_compounds_load_as_tsv_and_depend_on_the_seed(tmp_path):
    first, again, other = (tmp_path / f"{name}.tsv" for name in ("first", "again", "other"))
    for path, seed in ((first, 0), (again, 0), (other, 1)):
        ld.make_compound_tsv(str(path), 40, seed=seed)
    assert first.read_bytes() == again.read_bytes() != other.read_bytes()
    splits = load_translation_pairs(f"tsv:{first}", seed=0)
    assert sum(splits.sizes.values()) == 40 and not splits.estimated
    assert sum(len(list(split)) for split in splits.values()) == 40


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(language="klingon"), "language='klingon'"),
        (dict(num_pairs=0), "num_pairs=0"),
        (dict(parts=(1, 3)), "parts=(1, 3)"),
        (dict(parts=(4, 3)), "parts=(4, 3)"),
        (dict(parts=(3, 500)), "parts=(3, 500)"),
        (dict(separators=()), "separators=()"),
        (dict(separators=("",)), "separators=('',)"),
        (dict(target_length=(0, 10)), "target_length=(0, 10)"),
        (dict(target_length=(200, 300)), "target_length=(200, 300)"),
    ],
)
def test_compounds_reject_bad_arguments(tmp_path, kwargs, message):
    arguments = dict(path=str(tmp_path / "c.tsv"), num_pairs=3) | kwargs
    with pytest.raises(ValueError, match=re.escape(message)):
        ld.make_compound_tsv(**arguments)


def test_docstring_examples_run():
    results = doctest.testmod(ld, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert results.attempted > 0 and results.failed == 0
