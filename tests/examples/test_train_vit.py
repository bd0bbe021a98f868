"""The ViT example script end to end: built-in data and a folder of non-square images.

Its flags and steps are tested with the package modules they come from
(tests/training/test_vit_arguments.py and neighbours).
"""

import json
import os

import keras
import numpy as np
import pytest
import tensorflow as tf
from example_scripts import load_example

from keras_attention.tasks.image_classification import model_from_flags as vit_model_arguments
from keras_attention.tasks.image_classification.builtin_shapes import (
    shape_classification_class_names,
)
from keras_attention.training import run_setup


def _load(name):
    return load_example(name, "_example")


@pytest.fixture(scope="module")
def train_vit():
    return _load("train_vit")


def test_train_vit_end_to_end(train_vit, tmp_path, monkeypatch):
    # A one-block ViT keeps the XLA compilation short.
    monkeypatch.setattr(
        vit_model_arguments,
        "SMALL_VIT_ARCHITECTURE",
        dict(patch_size=8, hidden_dim=16, num_layers=1, num_heads=2, mlp_dim=16),
    )
    monkeypatch.setattr(train_vit, "NUM_ROLLOUT_IMAGES", 2)
    output_dir = tmp_path / "run"
    export_dir = tmp_path / "served"
    metrics = train_vit.main(
        [
            "--epochs",
            "1",
            "--batch-size",
            "16",
            "--builtin-sizes",
            "32",
            "16",
            "16",
            "--output-dir",
            str(output_dir),
            "--export",
            str(export_dir),
        ]
    )
    assert 0.0 <= metrics["test_accuracy"] <= 1.0 and metrics["test_images"] == 16
    assert metrics["split_sizes"] == {"train": 32, "validation": 16, "test": 16}
    assert (
        len(metrics["class_names"]) == 12
        and metrics["class_names"] == shape_classification_class_names()
    )
    assert json.loads((output_dir / "metrics.json").read_text()) == metrics
    assert (output_dir / "checkpoints" / "epoch_001.keras").exists()
    assert (output_dir / "confusion_matrix.png").stat().st_size > 0
    assert sorted(p.name for p in output_dir.glob("rollout_*.png")) == [
        "rollout_0.png",
        "rollout_1.png",
    ]
    page = (output_dir / "attention_explorer.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "predicted" in page
    if run_setup.tensorboard_available():
        assert any((output_dir / "logs").rglob("*tfevents*"))
    assert not (output_dir / "backup").exists() or not any((output_dir / "backup").iterdir())
    # The checkpoint is a complete model; the export serves any image size.
    restored = keras.saving.load_model(output_dir / "checkpoints" / "epoch_001.keras")
    assert restored.output_shape == (None, 12)
    serve = tf.saved_model.load(str(export_dir)).signatures["serving_default"]
    result = serve(images=tf.zeros((2, 50, 40, 3)))
    assert result["probabilities"].shape == (2, 12) and result["labels"].shape == (2,)


def _glyph_folder(root, height, width, per_class=6):
    """Three classes of bars (vertical, horizontal, diagonal) on (height, width) images."""
    rng = np.random.default_rng(0)
    for name in ("vertical", "horizontal", "diagonal"):
        (root / name).mkdir(parents=True)
        for index in range(per_class):
            pixels = rng.integers(0, 40, (height, width, 3)).astype(np.uint8)
            if name == "vertical":
                pixels[:, width // 2 - 1 : width // 2 + 1] = 255
            elif name == "horizontal":
                pixels[height // 2 - 1 : height // 2 + 1] = 255
            else:
                for row in range(height):
                    pixels[row, row * width // height] = 255
            png = tf.io.encode_png(tf.constant(pixels)).numpy()
            (root / name / f"{index}.png").write_bytes(png)
    return root


def test_a_folder_the_loader_refuses_ends_the_run_in_one_line(train_vit, tmp_path):
    data = _glyph_folder(tmp_path / "photos" / "glyphs", 16, 16, per_class=2)
    argv = ["--dataset", f"folder:{data.parent}", "--output-dir", str(tmp_path / "run")]
    # One class folder (the data set one level down): the loader's words, no traceback.
    with pytest.raises(SystemExit, match=r"^error: .*holds one, glyphs/ \(is .*glyphs the data"):
        train_vit.main(argv + ["--epochs", "1"])


def test_train_vit_on_a_non_square_folder_derives_and_prints_its_choices(
    train_vit, tmp_path, capsys, monkeypatch
):
    monkeypatch.setattr(
        vit_model_arguments,
        "SMALL_VIT_ARCHITECTURE",
        dict(patch_size=4, hidden_dim=16, num_layers=1, num_heads=2, mlp_dim=16),
    )
    monkeypatch.setattr(train_vit, "NUM_ROLLOUT_IMAGES", 1)
    folder = _glyph_folder(tmp_path / "glyphs", 12, 24)
    export_dir = tmp_path / "served"
    metrics = train_vit.main(
        [
            "--dataset",
            f"folder:{folder}",
            "--image-size",
            "16",
            "--patch-size",
            "4",
            "--epochs",
            "1",
            "--output-dir",
            str(tmp_path / "run"),
            "--export",
            str(export_dir),
        ]
    )
    # 12 x 24 images keep their aspect: 8 x 16 pixels, a 2 x 4 patch grid.
    assert metrics["image_size"] == [8, 16] and metrics["patch_size"] == 4
    assert metrics["augmentation"] == "geometric"
    # 18 images, 4 held out (10% validation, 10% test): 14 to train, all in one batch.
    assert metrics["batch_size"] == 14 and metrics["epochs"] == 1
    assert metrics["split_sizes"] == {"train": 14, "validation": 2, "test": 2}
    assert metrics["class_names"] == ["diagonal", "horizontal", "vertical"]
    printed = capsys.readouterr().out.splitlines()
    assert "image_size (8, 16): keeps the 12 x 24 images' aspect ratio, longer side 16" in printed
    assert "patch_size 4: set by the user" in printed
    assert any(line.startswith("batch_size 14: 14 training images") for line in printed)
    assert "  3 classes: diagonal, horizontal, vertical" in printed
    assert "epochs 1: set by the user" in printed
    assert any(line.startswith("warmup_steps 1: ") for line in printed)
    assert any(line.startswith("augmentation geometric: training batches only") for line in printed)
    model = keras.saving.load_model(tmp_path / "run" / "checkpoints" / "epoch_001.keras")
    assert model.position_embedding.grid_size == (2, 4)
    serve = tf.saved_model.load(str(export_dir)).signatures["serving_default"]
    result = serve(images=np.zeros((2, 12, 24, 3), np.uint8))  # uint8 pixels, as stored
    assert result["probabilities"].shape == (2, 3)
    assert set(result["labels"].numpy().tolist()) <= {b"vertical", b"horizontal", b"diagonal"}


def test_train_vit_model_swin_end_to_end_on_a_non_square_folder(
    train_vit, tmp_path, monkeypatch, capsys
):
    # A tiny Swin keeps the XLA compilation short: 2 stages of one block each.
    tiny = dict(patch_size=4, embed_dim=8, depths=(1, 1), num_heads=(2, 2), window_size=4)
    monkeypatch.setattr(
        vit_model_arguments,
        "swin_transformer_preset",
        lambda preset: dict(tiny, image_size=32, num_classes=10),
    )
    monkeypatch.setattr(train_vit, "NUM_ROLLOUT_IMAGES", 1)
    # ImageNet's layout: train/ and val/ of class folders; test is half of val/.
    folder = tmp_path / "glyphs"
    _glyph_folder(folder / "train", 20, 12)
    _glyph_folder(folder / "val", 20, 12, per_class=2)
    # A cut file is listed, never read before training, then skipped and named where met.
    broken = folder / "train" / "vertical" / "cut.png"
    broken.write_bytes((folder / "train" / "vertical" / "0.png").read_bytes()[:40])
    output_dir, export_dir = tmp_path / "run", tmp_path / "served"
    metrics = train_vit.main(
        ["--model", "swin", "--dataset", f"folder:{folder}", "--image-size", "20"]
        + ["--patch-size", "2", "--epochs", "1", "--output-dir", str(output_dir)]
        + ["--export", str(export_dir)]
    )
    assert metrics["model"] == "swin" and metrics["image_size"] == [20, 12]
    assert metrics["split_sizes"] == {"train": 19, "validation": 3, "test": 3}  # listed
    log = output_dir / "skipped_images.txt"
    assert (
        f"skipped 1 image files that cannot be decoded in epoch 1 (named in {log})"
        in capsys.readouterr().out.splitlines()
    )
    assert set(log.read_text().splitlines()) == {str(broken)}  # once each time it is met
    assert metrics["class_names"] == ["diagonal", "horizontal", "vertical"]
    assert json.loads((output_dir / "metrics.json").read_text()) == metrics
    assert [p.name for p in output_dir.glob("window_attention_*.png")] == ["window_attention_0.png"]
    assert "predicted" in (output_dir / "attention_explorer.html").read_text()
    # A 10 x 6 map in padded 4 x 4 windows, then 5 x 3 in one 3-wide window.
    model = keras.saving.load_model(output_dir / "checkpoints" / "epoch_001.keras")
    assert [size for size, _ in model.window_layouts] == [(10, 6), (5, 3)]
    serve = tf.saved_model.load(str(export_dir)).signatures["serving_default"]
    images = np.random.default_rng(1).integers(0, 256, (2, 30, 18, 3)).astype(np.uint8)
    result = serve(images=images)
    assert sorted(result) == ["labels", "probabilities"]
    assert result["probabilities"].shape == (2, 3) and result["labels"].shape == (2,)
    assert set(result["labels"].numpy().tolist()) <= {b"vertical", b"horizontal", b"diagonal"}


def test_a_run_whose_class_folders_changed_stops_and_keeps_its_checkpoint(
    train_vit, tmp_path, monkeypatch
):
    monkeypatch.setattr(
        vit_model_arguments,
        "SMALL_VIT_ARCHITECTURE",
        dict(patch_size=4, hidden_dim=8, num_layers=1, num_heads=2, mlp_dim=8),
    )
    monkeypatch.setattr(train_vit, "NUM_ROLLOUT_IMAGES", 1)
    folder = _glyph_folder(tmp_path / "glyphs", 8, 8, per_class=4)
    run = tmp_path / "run"
    argv = ["--dataset", f"folder:{folder}", "--image-size", "8", "--output-dir", str(run)]
    train_vit.main(argv + ["--epochs", "1", "--no-html"])
    checkpoint = run / "checkpoints" / "epoch_001.keras"
    before = checkpoint.read_bytes()
    # A class added to the data, then the run asked for one epoch more.
    (folder / "dots").mkdir()
    for name in os.listdir(folder / "vertical"):
        (folder / "dots" / name).write_bytes((folder / "vertical" / name).read_bytes())
    with pytest.raises(
        SystemExit,
        match=r"^error: folder:.*glyphs now has 4 classes \(diagonal, dots, horizontal, "
        r"vertical\), but the run in .*run trained on 3 \(diagonal, horizontal, vertical\)",
    ):
        train_vit.main(argv + ["--epochs", "2", "--no-html"])
    assert checkpoint.read_bytes() == before
    assert sorted(os.listdir(run / "checkpoints")) == ["epoch_001.keras"]
