"""The scripts' data from their flags: one line when a download is impossible, one listing."""

import socket

import numpy as np
import pytest
import tensorflow as tf

from keras_attention.tasks.captioning import sources as caption_sources
from keras_attention.tasks.captioning.flags import build_captioning_parser
from keras_attention.tasks.captioning.flags import with_captioner_defaults
from keras_attention.tasks.captioning.training_data import load_caption_splits
from keras_attention.tasks.captioning.training_data import prepare_caption_data
from keras_attention.tasks.image_classification.recipe_from_flags import parse_vit_arguments
from keras_attention.tasks.image_classification.training_data import prepare_vit_data
from keras_attention.tasks.translation.flags import parse_translation_arguments
from keras_attention.tasks.translation.training_data import load_translation_splits
from keras_attention.tasks.translation.training_data import prepare_translation_data


@pytest.fixture
def offline(monkeypatch):
    def no_name_resolution(*args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", no_name_resolution)


def _caption_args(argv):
    return with_captioner_defaults(build_captioning_parser().parse_args(argv))


@pytest.mark.parametrize(
    "load, name",
    [
        (
            lambda flags: prepare_vit_data(parse_vit_arguments(["--dataset", "cifar10", *flags])),
            "cifar10",
        ),
        (
            lambda flags: load_caption_splits(
                _caption_args(["--dataset", "coco_captions", *flags])
            ),
            "coco_captions",
        ),
        (
            lambda flags: load_translation_splits(
                parse_translation_arguments(["--dataset", "ted_hrlr_translate/pt_to_en", *flags])
            ),
            "ted_hrlr_translate/pt_to_en",
        ),
    ],
    ids=["vit", "captioning", "translation"],
)
def test_an_unreachable_download_ends_the_run_with_one_line(offline, tmp_path, load, name):
    with pytest.raises(SystemExit) as stopped:
        load(["--data-dir", str(tmp_path)])
    message = str(stopped.value.code)
    assert message.startswith(f"error: tensorflow-datasets cannot download {name!r}")
    assert "\n" not in message and "--data-dir" in message and "folder:" in message


def test_caption_folder_is_listed_once_and_its_layout_printed(tmp_path, monkeypatch, capsys):
    for index in range(10):
        pixels = np.full((12, 36, 3), index, np.uint8)
        (tmp_path / f"{index}.png").write_bytes(tf.io.encode_png(pixels).numpy())
    (tmp_path / "captions.tsv").write_text("".join(f"{i}.png\tcaption {i}\n" for i in range(10)))
    calls = []
    original = caption_sources.find_caption_layout

    def counted(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(caption_sources, "find_caption_layout", counted)
    args = _caption_args(["--dataset", f"folder:{tmp_path}"])
    splits = load_caption_splits(args)
    assert len(calls) == 1  # measured at their own size, then resized without listing again
    assert args.image_size == (12, 36)
    assert splits["train"].element_spec[0].shape.as_list() == [12, 36, 3]
    printed = capsys.readouterr().out.splitlines()
    # The files are listed, not read: the size is measured on the images it decodes.
    assert not any("decode" in line for line in printed)
    assert printed.pop(0).startswith(f"reading the captions of {tmp_path}: 10 images in ")
    assert printed[0] == (
        "data: captions.tsv: train 8 images, validation 1, test 1 (no splits of its own: "
        "validation 10% and test 10% of the images drawn at random (seed 0))"
    )
    assert printed[1].startswith("image size 12x36: median training image 12x36")


def test_language_flags_are_refused_for_sources_without_languages(capsys):
    with pytest.raises(SystemExit):
        parse_translation_arguments(["--dataset", "tsv:pairs.tsv", "--source-lang", "en"])
    assert "apply to parallel: and hf: data sets" in capsys.readouterr().err
    args = parse_translation_arguments(
        [
            "--dataset",
            "parallel:multi30k",
            "--source-lang",
            "en",
            "--target-lang",
            "de",
            "--test-prefix",
            "test_2016_flickr",
        ]
    )
    assert (args.source_lang, args.target_lang, args.test_prefix) == (
        "en",
        "de",
        "test_2016_flickr",
    )


def _png(path, level):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(tf.io.encode_png(np.full((8, 8, 3), level, np.uint8)).numpy())


def _prepare_tiny(family, tmp_path):
    """Prepares a data set too small to leave a test split, as each script does."""
    run = ["--output-dir", str(tmp_path / "run")]
    if family == "translation":
        (tmp_path / "pairs.tsv").write_text("hello\thola\nbye\tadios\n")
        args = parse_translation_arguments(["--dataset", f"tsv:{tmp_path / 'pairs.tsv'}", *run])
        return prepare_translation_data(load_translation_splits(args), args)
    if family == "captioning":
        _png(tmp_path / "data" / "a.png", 10)
        (tmp_path / "data" / "captions.tsv").write_text("a.png\ta grey square\n")
        args = _caption_args(["--dataset", f"folder:{tmp_path / 'data'}", *run])
        return prepare_caption_data(load_caption_splits(args), args)
    _png(tmp_path / "data" / "cat" / "1.png", 10)
    _png(tmp_path / "data" / "dog" / "1.png", 200)
    return prepare_vit_data(parse_vit_arguments(["--dataset", f"folder:{tmp_path / 'data'}", *run]))


@pytest.mark.parametrize(
    "family, unit", [("translation", "sentence pairs"), ("captioning", "images"), ("vit", "images")]
)
def test_data_leaving_the_scored_split_empty_stops_before_training(tmp_path, family, unit):
    # Trained, such a run failed when it came to score its empty test split.
    with pytest.raises(ValueError) as error:
        _prepare_tiny(family, tmp_path)
    message = str(error.value)
    assert message.startswith(f"`dataset` must leave {unit} for the test split, which the run")
    assert "validation 0, test 0: give it more" in message
    assert not (tmp_path / "run" / "vocabulary").exists()  # stopped before any vocabulary
