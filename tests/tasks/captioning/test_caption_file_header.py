"""A header line in a `file<TAB>caption` file is named as one, not as a missing image."""

import warnings

import numpy as np
import pytest
import tensorflow as tf

from keras_attention.tasks.captioning.sources import load_caption_dataset


def _write_images(folder, names):
    for name in names:
        pixels = np.full((6, 8, 3), 90, np.uint8)
        (folder / name).write_bytes(tf.io.encode_png(pixels).numpy())


def _captions_tsv(folder, first_line):
    _write_images(folder, [f"{index}.png" for index in range(5)])
    lines = [first_line] + [f"{index}.png\ta picture number {index}" for index in range(5)]
    (folder / "captions.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize("header", ["image\tcaption", "filename\tCaption", "file_name\ttext"])
def test_a_header_line_is_named_and_skipped(tmp_path, header):
    _captions_tsv(tmp_path, header)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        splits = load_caption_dataset(f"folder:{tmp_path}", 8)
    messages = [str(warning.message) for warning in caught]
    name, caption = header.split("\t")
    shown = [text for text in messages if f"header line, `{name}<TAB>{caption}`" in text]
    assert len(shown) == 1, messages
    assert "every line is `file<TAB>caption`" in shown[0] and "Remove that line" in shown[0]
    # The header is not also reported as a missing image, and the five images are all read.
    assert not any("missing" in text for text in messages), messages
    assert sum(splits.sizes.values()) == 5


def test_a_header_line_stops_a_strict_run(tmp_path):
    _captions_tsv(tmp_path, "image\tcaption")
    with pytest.raises(ValueError, match="header line, `image<TAB>caption`"):
        load_caption_dataset(f"folder:{tmp_path}", 8, strict=True)


def test_a_utf16_caption_file_is_refused_naming_it_not_read_as_missing_images(tmp_path):
    _captions_tsv(tmp_path, "0.png\ta first picture")
    captions = tmp_path / "captions.tsv"
    captions.write_bytes(captions.read_text(encoding="utf-8").encode("utf-16"))
    with pytest.raises(ValueError, match=rf"{captions} is UTF-16 text .*iconv -f UTF-16"):
        load_caption_dataset(f"folder:{tmp_path}", 8)


def test_a_line_with_a_third_field_is_skipped_not_trained_as_part_of_the_caption(tmp_path):
    _captions_tsv(tmp_path, "0.png\ta first picture")
    captions = tmp_path / "captions.tsv"
    captions.write_text(captions.read_text() + "1.png\ta second picture\tby Ann\n")
    with pytest.warns(UserWarning, match=r"are not one `file<TAB>caption` pair: line 7\."):
        splits = load_caption_dataset(f"folder:{tmp_path}", 8)
    captions_read = [
        caption.decode() for split in splits.values() for _, caption in split.as_numpy_iterator()
    ]
    assert len(captions_read) == 6 and not any("Ann" in caption for caption in captions_read)


def test_a_missing_image_is_still_a_missing_image(tmp_path):
    # An image really named "image" in the file, with an ordinary caption: no header.
    _captions_tsv(tmp_path, "image\ta dog on a beach")
    with pytest.warns(UserWarning, match="1 missing: image") as caught:
        load_caption_dataset(f"folder:{tmp_path}", 8)
    assert not any("header" in str(warning.message) for warning in caught)
