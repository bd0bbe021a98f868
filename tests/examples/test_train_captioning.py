"""The captioning example script end to end on a tiny built-in set, resuming, MirroredStrategy."""

import importlib.util
import json
import pathlib
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf
from training_interruption import Interrupted
from training_interruption import TrainingWatcher
from training_interruption import watch_training

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def train_captioning():
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    spec = importlib.util.spec_from_file_location("_example_train_captioning", EXAMPLES / "train_captioning.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_train_captioning_end_to_end(train_captioning, tmp_path, capsys):
    output_dir = tmp_path / "run"
    export_dir = tmp_path / "served"
    arguments = [
        "--epochs", "1",
        "--batch-size", "8",
        "--builtin-sizes", "16", "8", "6",
        "--image-size", "32",
        "--hidden-dim", "16",
        "--num-layers", "1",
        "--samples", "2",
        "--output-dir", str(output_dir),
        "--export", str(export_dir),
    ]
    metrics = train_captioning.main(arguments)
    printed = capsys.readouterr().out
    assert 0.0 <= metrics["bleu"] <= 100.0 and metrics["test_images"] == 6
    assert "test BLEU" in printed and "attention on the named object" in printed
    # After one epoch a caption may name no shape; measured objects have a chance level.
    assert 0 <= metrics["objects_measured"] <= 12
    if metrics["objects_measured"]:
        assert 0.0 < metrics["attention_on_object_chance"] < 1.0
        assert 0.0 <= metrics["attention_on_object"] <= 1.0
    assert json.loads((output_dir / "metrics.json").read_text()) == metrics
    assert (output_dir / "checkpoints" / "epoch_001.keras").exists()
    assert (output_dir / "vocabulary" / "vocabulary.txt").exists()
    assert sorted(p.name for p in output_dir.glob("attention_*.png")) == ["attention_0.png", "attention_1.png"]
    assert all(p.stat().st_size > 0 for p in output_dir.glob("attention_*.png"))
    # The checkpoint is a complete model.
    restored = keras.saving.load_model(output_dir / "checkpoints" / "epoch_001.keras")
    vocabulary = (output_dir / "vocabulary" / "vocabulary.txt").read_text().splitlines()
    assert restored.output_shape[-1] == len(vocabulary)
    # The export serves pixels (its round trip is tested in tests/serving).
    serve = tf.saved_model.load(str(export_dir)).signatures["serving_default"]
    outputs = serve.structured_outputs
    assert outputs["caption"].dtype == tf.string
    # At least "a red circle left of a blue square" (8 words) and the end token;
    # an 8x8 grid at 32 pixels.
    assert metrics["max_length"] >= 9
    assert outputs["attention"].shape.as_list() == [None, metrics["max_length"], 8, 8]


def test_mirrored_run_resumes_after_an_interruption(train_captioning, tmp_path, monkeypatch):
    output_dir = tmp_path / "run"
    argv = [
        "--epochs", "2", "--batch-size", "8", "--builtin-sizes", "16", "8", "4",
        "--image-size", "32", "--hidden-dim", "16", "--samples", "1",
        "--strategy", "mirrored", "--output-dir", str(output_dir),
    ]
    # The first run stops after its first epoch, as if the machine went down.
    watchers = watch_training(monkeypatch, train_captioning)
    first = TrainingWatcher(interrupt_after_epoch=0)
    watchers.append(first)
    with pytest.raises(Interrupted):
        train_captioning.main(argv)
    assert first.epochs == [0]
    assert any((output_dir / "backup").iterdir())

    # The same command again continues with the second epoch, from the saved weights.
    second = TrainingWatcher()
    watchers.append(second)
    metrics = train_captioning.main(argv)
    assert second.epochs == [1]
    for restored, saved in zip(second.start_weights, first.last_weights, strict=True):
        np.testing.assert_array_equal(restored, saved)
    assert metrics["replicas"] == 2  # the two logical CPUs of tests/conftest.py
    assert metrics["model"] == "show_attend_tell"
    restored = keras.saving.load_model(output_dir / "checkpoints" / "epoch_002.keras")
    assert restored.get_layer("attention_decoder") is not None


def test_flags(train_captioning):
    args = train_captioning.parse_args([])
    assert (args.model, args.dataset, args.output_dir, args.strategy) == (
        "show_attend_tell", "builtin", "runs/captioning", "default"
    )
    assert args.epochs == train_captioning.MODEL_DEFAULTS["show_attend_tell"]["epochs"]
    args = train_captioning.parse_args(["--model", "transformer", "--epochs", "2", "--hidden-dim", "32"])
    assert (args.epochs, args.hidden_dim) == (2, 32)
    with pytest.raises(SystemExit):
        train_captioning.parse_args(["--model", "lstm"])


def test_references_of_repeated_images_are_grouped(train_captioning):
    image_a, image_b = np.zeros((4, 4, 3), "float32"), np.ones((4, 4, 3), "float32")
    pairs = tf.data.Dataset.from_tensor_slices(
        (np.stack([image_a, image_a, image_b]), ["a red circle", "a circle", "a square"])
    )
    seen = []

    def caption(images):
        seen.append(images.shape[0])
        return {"caption": tf.constant(["x"] * images.shape[0])}

    images, references, hypotheses, _ = train_captioning.caption_split(caption, pairs, None)
    assert references == [["a red circle", "a circle"], ["a square"]] and seen == [2]
    assert hypotheses == ["x", "x"]
    assert train_captioning.bleu_references(references) == [
        ["a red circle", "a circle"], ["a square", "a square"]
    ]
