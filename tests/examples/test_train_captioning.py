"""The captioning example script end to end on a tiny built-in set, resuming, MirroredStrategy."""

import importlib.util
import json
import pathlib
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf
from training_interruption import interrupt_then_resume

from keras_attention.text.tokenizer_files import load_tokenizer

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def train_captioning():
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    spec = importlib.util.spec_from_file_location(
        "_example_train_captioning", EXAMPLES / "train_captioning.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_train_captioning_end_to_end(train_captioning, tmp_path, capsys):
    output_dir = tmp_path / "run"
    export_dir = tmp_path / "served"
    arguments = [
        "--epochs",
        "1",
        "--batch-size",
        "8",
        "--builtin-sizes",
        "16",
        "8",
        "6",
        "--image-size",
        "32",
        "--hidden-dim",
        "16",
        "--num-layers",
        "1",
        "--samples",
        "2",
        "--output-dir",
        str(output_dir),
        "--export",
        str(export_dir),
    ]
    metrics = train_captioning.main(arguments)
    printed = capsys.readouterr().out
    assert 0.0 <= metrics["bleu"] <= 100.0 and metrics["test_images"] == 6
    assert metrics["split_sizes"] == {"train": 16, "validation": 8, "test": 6}
    assert "test BLEU" in printed and "attention on the named object" in printed
    # After one epoch a caption may name no shape; measured objects have a chance level.
    assert 0 <= metrics["objects_measured"] <= 12
    if metrics["objects_measured"]:
        assert 0.0 < metrics["attention_on_object_chance"] < 1.0
        assert 0.0 <= metrics["attention_on_object"] <= 1.0
    assert json.loads((output_dir / "metrics.json").read_text()) == metrics
    assert (output_dir / "checkpoints" / "epoch_001.keras").exists()
    tokenizer = load_tokenizer(output_dir / "vocabulary")  # the run's vocabulary, saved
    assert sorted(p.name for p in output_dir.glob("attention_*.png")) == [
        "attention_0.png",
        "attention_1.png",
    ]
    assert all(p.stat().st_size > 0 for p in output_dir.glob("attention_*.png"))
    page = (output_dir / "attention_explorer.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "test image 0" in page
    # The checkpoint is a complete model, the captioner class with its methods.
    restored = keras.saving.load_model(output_dir / "checkpoints" / "epoch_001.keras")
    assert restored.output_shape[-1] == tokenizer.vocabulary_size
    assert type(restored).__name__ == "ShowAttendTellCaptioner"
    # The export serves pixels (its round trip is tested in tests/serving).
    serve = tf.saved_model.load(str(export_dir)).signatures["serving_default"]
    outputs = serve.structured_outputs
    assert outputs["caption"].dtype == tf.string
    # At least "a red circle left of a blue square" (8 words) and the end token;
    # an 8x8 grid at 32 pixels.
    assert metrics["max_length"] >= 9
    assert outputs["attention"].shape.as_list() == [None, metrics["max_length"], 8, 8]


def test_vit_captioner_end_to_end_on_its_patch_grid(train_captioning, tmp_path, capsys):
    output_dir, export_dir = tmp_path / "run", tmp_path / "served"
    sizes = ["--builtin-sizes", "16", "8", "4", "--hidden-dim", "16", "--encoder-layers", "1"]
    sizes += ["--num-layers", "1"]  # one decoder block (of two by default) compiles faster
    metrics = train_captioning.main(
        ["--model", "vit", "--epochs", "1", "--batch-size", "8", "--samples", "1", *sizes]
        + ["--output-dir", str(output_dir), "--export", str(export_dir)]
    )
    printed = capsys.readouterr().out
    # The built-in 48-pixel scenes in the default 4-pixel patches: a 12x12 grid.
    assert "multiples of the patch size 4: a 12x12 feature grid" in printed
    assert metrics["model"] == "vit" and metrics["image_size"] == [48, 48]
    assert 0.0 <= metrics["bleu"] <= 100.0 and metrics["test_images"] == 4
    assert (output_dir / "attention_0.png").stat().st_size > 0
    assert "test image 0" in (output_dir / "attention_explorer.html").read_text()
    restored = keras.saving.load_model(output_dir / "checkpoints" / "epoch_001.keras")
    assert type(restored).__name__ == "ViTCaptioner" and restored.grid_size == (12, 12)
    assert restored.get_config()["alibi_2d"] is True
    assert restored.get_config()["patch_stem"] == "convolutional"  # the script's default
    serve = tf.saved_model.load(str(export_dir)).signatures["serving_default"]
    outputs = serve(images=tf.zeros((2, 60, 40, 3)))
    assert outputs["attention"].shape == (2, metrics["max_length"], 12, 12)
    assert outputs["caption"].dtype == tf.string


def test_mirrored_run_resumes_after_an_interruption(train_captioning, tmp_path, monkeypatch):
    output_dir = tmp_path / "run"
    argv = [
        "--epochs",
        "2",
        "--batch-size",
        "8",
        "--builtin-sizes",
        "16",
        "8",
        "4",
        "--image-size",
        "32",
        "--hidden-dim",
        "16",
        "--samples",
        "1",
        "--strategy",
        "mirrored",
        "--output-dir",
        str(output_dir),
    ]
    # Stopped after its first epoch, the same command continues from the saved weights.
    metrics = interrupt_then_resume(monkeypatch, train_captioning.main, argv)
    assert metrics["replicas"] == 2  # the two logical CPUs of tests/conftest.py
    assert metrics["model"] == "show_attend_tell"
    restored = keras.saving.load_model(output_dir / "checkpoints" / "epoch_002.keras")
    assert restored.get_layer("attention_decoder") is not None


def test_captions_naming_no_image_on_disk_end_the_run_in_one_line(train_captioning, tmp_path):
    data = tmp_path / "photos"
    data.mkdir()
    (data / "captions.tsv").write_text("a.jpg\ta red square\nb.jpg\ta blue circle\n")
    argv = ["--dataset", f"folder:{data}", "--output-dir", str(tmp_path / "run")]
    with pytest.raises(SystemExit, match=r"^error: `dataset` folder:.*has no readable image"):
        train_captioning.main(argv + ["--epochs", "1"])


def test_script_parser_is_the_package_parser_with_its_summary(train_captioning):
    parser = train_captioning.build_parser()
    assert parser.description == train_captioning.__doc__.split("\n")[0]
    assert parser.description.startswith("Train a Show, Attend and Tell, Transformer or ViT")
    args = parser.parse_args(["--image-size", "32x96", "--model", "transformer"])
    assert (args.image_size, args.model) == ((32, 96), "transformer")


def test_given_image_size_is_parsed_before_tensorflow_is_imported():
    # The first parse, before TensorFlow is imported, once failed on --image-size.
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "train_captioning.py"), "--image-size", "32x96", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "usage:" in result.stdout and "--image-size" in result.stdout


def test_folder_of_wide_strips_derives_its_sizes_and_schedule(train_captioning, tmp_path, capsys):
    # 40 strips of 16 x 48 pixels, three "glyphs" (bright bars at a column per word) each.
    rng = np.random.default_rng(0)
    words = ["one", "two", "three", "four"]
    lines = []
    for index in range(40):
        labels = rng.integers(0, len(words), size=3)
        pixels = np.full((16, 48, 3), 230, np.uint8)
        for slot, label in enumerate(labels):
            pixels[2:14, 16 * slot + 3 * label + 2 : 16 * slot + 3 * label + 4] = 20
        (tmp_path / f"{index}.png").write_bytes(tf.io.encode_png(pixels).numpy())
        lines.append(f"{index}.png\t" + " ".join(words[label] for label in labels))
    (tmp_path / "captions.tsv").write_text("\n".join(lines) + "\n")
    output_dir, export_dir = tmp_path / "run", tmp_path / "served"
    metrics = train_captioning.main(
        [
            "--dataset",
            f"folder:{tmp_path}",
            "--epochs",
            "2",
            "--hidden-dim",
            "16",
            "--samples",
            "2",
            "--output-dir",
            str(output_dir),
            "--export",
            str(export_dir),
        ]
    )
    printed = capsys.readouterr().out
    assert (
        "data: captions.tsv: train 32 images, validation 4, test 4 (no splits of its own" in printed
    )
    assert metrics["split_sizes"] == {"train": 32, "validation": 4, "test": 4}
    assert "image size 16x48: median training image 16x48, aspect ratio kept" in printed
    assert "a 4x12 feature grid" in printed
    assert "batch size 8: the largest power of two" in printed
    assert "learning rate 0.002: linear warm-up 0 -> 0.002 over 1 steps" in printed
    # 32 training captions in batches of 8: 4 steps an epoch, 8 in all (an unknown
    # dataset length made this 1 step, and the learning rate 0 after it).
    assert (metrics["image_size"], metrics["batch_size"], metrics["train_steps"]) == (
        [16, 48],
        8,
        8,
    )
    assert 0.0 <= metrics["exact_captions"] <= 1.0
    assert len(list(output_dir.glob("attention_*.png"))) == 2
    serve = tf.saved_model.load(str(export_dir)).signatures["serving_default"]
    outputs = serve(images=tf.zeros((2, 16, 48, 3)))
    assert outputs["attention"].shape[2:] == (4, 12)  # (B, T, h, w), not squashed to a square
