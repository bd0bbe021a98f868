"""Data sources: bad files skipped and named (or refused with strict), paths expanded.

Each test is named for the case it covers.
"""

import os
import warnings

import numpy as np
import pytest
import tensorflow as tf

from keras_attention.data.dataset_length import with_known_length
from keras_attention.data.skipped_items import SkippedItems
from keras_attention.data.skipped_items import strict_errors_as_exit
from keras_attention.tasks.image_classification.sources import load_image_classification_dataset
from keras_attention.tasks.translation.sources import load_translation_pairs
from keras_attention.tasks.translation.sources import read_tsv_pairs


def _class_folder(root):
    """Two classes of three 8x8 PNGs each, plus one truncated PNG in class 'b'."""
    for index, name in enumerate(("a", "b")):
        os.makedirs(root / name)
        for number in range(3):
            pixels = np.full((8, 8, 3), 40 * index + number, np.uint8)
            (root / name / f"{number}.png").write_bytes(tf.io.encode_png(pixels).numpy())
    good = (root / "b" / "0.png").read_bytes()
    (root / "b" / "broken.png").write_bytes(good[: len(good) // 2])
    return str(root / "b" / "broken.png")


def test_corrupt_image_in_a_vit_folder_is_skipped_where_met_and_named(tmp_path):
    broken = _class_folder(tmp_path / "data")
    log = tmp_path / "skipped_images.txt"
    skipped = SkippedItems("image files that cannot be decoded", log)
    data = load_image_classification_dataset(
        f"folder:{tmp_path / 'data'}",
        8,
        validation_fraction=0.0,
        test_fraction=0.0,
        skipped=skipped,
    )
    images = [image for image, _ in data.splits["train"]]  # iterating does not fail
    assert len(images) == 6
    assert skipped.take_count() == 1 and log.read_text() == f"{broken}\n"


def test_corrupt_image_in_a_vit_folder_with_strict_stops_naming_it(tmp_path):
    broken = _class_folder(tmp_path)
    data = load_image_classification_dataset(f"folder:{tmp_path}", 8, strict=True)
    with pytest.raises(SystemExit, match=rf"^error: .*cannot be decoded: {broken} \(--strict"):
        with strict_errors_as_exit():
            for split in data.splits.values():
                list(split)


def test_home_and_environment_variables_in_data_paths_are_expanded(tmp_path, monkeypatch):
    (tmp_path / "pairs.tsv").write_text("one\tuno\ntwo\tdos\nthree\ttres\n", encoding="utf-8")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("CORPORA", str(tmp_path))
    for dataset in ("tsv:~/pairs.tsv", "tsv:$CORPORA/pairs.tsv"):
        splits = load_translation_pairs(dataset, validation_fraction=0.0, test_fraction=0.0)
        pairs = sorted((s.numpy().decode(), t.numpy().decode()) for s, t in splits["train"])
        assert pairs == [("one", "uno"), ("three", "tres"), ("two", "dos")]


def test_tatoeba_tsv_with_an_attribution_column_is_accepted(tmp_path):
    path = tmp_path / "spa.txt"
    path.write_text(
        "Go.\tVe.\tCC-BY 2.0 (France) Attribution: tatoeba.org #2877272 (CM) & #4986655 (cueyayotl)\n"
        "Hi.\tHola.\tCC-BY 2.0 (France) Attribution: tatoeba.org #538123 (CM) & #431975 (Leono)\n",
        encoding="utf-8",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing skipped, nothing to warn about
        assert read_tsv_pairs(str(path)) == [("Go.", "Ve."), ("Hi.", "Hola.")]


def test_malformed_tsv_line_with_strict_raises_naming_it(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("one\tuno\nno tab here\ntwo\tdos\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"1 malformed line\(s\) of .*pairs.tsv.*line\(s\) 2\."):
        read_tsv_pairs(str(path), strict=True)
    with pytest.warns(UserWarning, match=r"Skipped 1 malformed line\(s\)"):
        assert len(read_tsv_pairs(str(path))) == 2


def test_dataset_of_unknown_length_gets_its_counted_length():
    evens = tf.data.Dataset.range(9).filter(lambda x: x % 2 == 0)
    assert int(evens.cardinality()) == tf.data.UNKNOWN_CARDINALITY
    counted = with_known_length(evens)
    assert int(counted.cardinality()) == 5
    assert list(counted.as_numpy_iterator()) == [0, 2, 4, 6, 8]


def test_strict_stop_in_the_evaluation_after_training_is_one_line(tmp_path):
    # The broken image is in test/ only: training ends, then the held-out pass meets it.
    import subprocess
    import sys

    root = tmp_path / "data"
    for split, count in (("train", 6), ("val", 2), ("test", 2)):
        for index, name in enumerate(("a", "b")):
            os.makedirs(root / split / name)
            for number in range(count):
                pixels = np.full((8, 8, 3), 100 * index + number, np.uint8)
                png = tf.io.encode_png(pixels).numpy()
                (root / split / name / f"{number}.png").write_bytes(png)
    broken = root / "test" / "b" / "broken.png"
    broken.write_bytes(png[: len(png) // 2])
    script = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "train_vit.py")
    flags = ["--epochs", "1", "--image-size", "8", "--patch-size", "4", "--batch-size", "4"]
    flags += ["--quiet", "--strict"]
    result = subprocess.run(
        [
            sys.executable,
            script,
            "--dataset",
            f"folder:{root}",
            "--output-dir",
            str(tmp_path / "run"),
        ]
        + flags,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 1, result.stderr[-2000:]
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("error: image files that cannot be decoded: ") and str(broken) in last
    assert "Traceback" not in result.stderr
