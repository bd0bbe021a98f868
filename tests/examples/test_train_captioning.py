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
    assert "test BLEU" in printed and "attention on the named object" in printed
    # After one epoch a caption may name no shape; measured objects have a chance level.
    assert 0 <= metrics["objects_measured"] <= 12
    if metrics["objects_measured"]:
        assert 0.0 < metrics["attention_on_object_chance"] < 1.0
        assert 0.0 <= metrics["attention_on_object"] <= 1.0
    assert json.loads((output_dir / "metrics.json").read_text()) == metrics
    assert (output_dir / "checkpoints" / "epoch_001.keras").exists()
    assert (output_dir / "vocabulary" / "vocabulary.json").exists()
    assert sorted(p.name for p in output_dir.glob("attention_*.png")) == [
        "attention_0.png",
        "attention_1.png",
    ]
    assert all(p.stat().st_size > 0 for p in output_dir.glob("attention_*.png"))
    page = (output_dir / "attention_explorer.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "test image 0" in page
    # The checkpoint is a complete model, the captioner class with its methods.
    restored = keras.saving.load_model(output_dir / "checkpoints" / "epoch_001.keras")
    vocabulary = json.loads((output_dir / "vocabulary" / "vocabulary.json").read_text())
    assert restored.output_shape[-1] == len(vocabulary)
    assert type(restored).__name__ == "ShowAttendTellCaptioner"
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
        "show_attend_tell",
        "builtin",
        "runs/captioning",
        "default",
    )
    # Left to be derived from the data.
    assert (args.epochs, args.batch_size, args.image_size) == (None, None, None)
    assert args.train_steps == train_captioning.MODEL_DEFAULTS["show_attend_tell"]["train_steps"]
    assert train_captioning.parse_args(["--image-size", "32x96"]).image_size == (32, 96)
    assert train_captioning.parse_args(["--image-size", "48"]).image_size == (48, 48)
    for bad in ("32x4", "wide", "32x96x3"):
        with pytest.raises(SystemExit):
            train_captioning.parse_args(["--image-size", bad])
    args = train_captioning.parse_args(
        ["--model", "transformer", "--epochs", "2", "--hidden-dim", "32"]
    )
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
        count = images.shape[0]
        return ["x"] * count, np.ones((count, 3, 2, 2), "float32"), [["x"]] * count

    images, references, hypotheses, outputs = train_captioning.caption_split(caption, pairs, None)
    assert references == [["a red circle", "a circle"], ["a square"]] and seen == [2]
    assert hypotheses == ["x", "x"]
    assert outputs["attention"].shape == (2, 3, 2, 2) and outputs["words"] == [["x"], ["x"]]
    assert train_captioning.bleu_references(references) == [
        ["a red circle", "a circle"],
        ["a square", "a square"],
    ]


def test_plan_keeps_the_built_in_defaults(train_captioning):
    # 4000 built-in captions: batches of 64, 62 steps an epoch, at most 81 epochs
    # (5000 steps); the schedule stops sooner once the validation loss stalls.
    defaults = train_captioning.MODEL_DEFAULTS
    plans = {
        name: train_captioning.plan_training(
            num_examples=4000, train_steps=defaults[name]["train_steps"], learning_rate=2e-3
        )
        for name in defaults
    }
    assert (
        plans["show_attend_tell"]["batch_size"],
        plans["show_attend_tell"]["steps_per_epoch"],
    ) == (64, 62)
    assert (plans["show_attend_tell"]["epochs"], plans["transformer"]["epochs"]) == (81, 81)
    assert (
        plans["show_attend_tell"]["warmup_steps"] == 150
        and plans["show_attend_tell"]["patience"] == 5
    )


def test_plan_is_counted_in_steps_from_the_number_of_examples(train_captioning):
    plan = train_captioning.plan_training(num_examples=2400, train_steps=870, learning_rate=1e-3)
    assert (plan["batch_size"], plan["steps_per_epoch"], plan["epochs"]) == (64, 37, 24)
    # Warm-up: 10% of the steps, at most 150; patience: 250 steps in whole epochs.
    assert (plan["total_steps"], plan["warmup_steps"], plan["patience"]) == (888, 89, 7)
    assert set(plan["reasons"]) == {"batch_size", "epochs", "learning_rate"}
    # Few examples: smaller batches, still whole ones, more epochs for the same steps.
    small = train_captioning.plan_training(num_examples=300, train_steps=870, learning_rate=1e-3)
    assert (small["batch_size"], small["steps_per_epoch"], small["epochs"]) == (8, 37, 24)
    tiny = train_captioning.plan_training(num_examples=5, train_steps=10, learning_rate=1e-3)
    assert (tiny["batch_size"], tiny["steps_per_epoch"], tiny["epochs"]) == (8, 1, 10)
    # What is given is kept.
    given = train_captioning.plan_training(
        num_examples=2400, train_steps=870, learning_rate=1e-3, batch_size=100, epochs=3
    )
    assert (given["batch_size"], given["epochs"], given["total_steps"]) == (100, 3, 72)
    assert given["reasons"]["batch_size"] == "given" and given["reasons"]["epochs"].startswith(
        "given"
    )
    # An unknown dataset length (cardinality -2) can no longer make a schedule of 1 step.
    with pytest.raises(
        ValueError, match=r"`num_examples` must be a positive int .* Received: num_examples=-2"
    ):
        train_captioning.plan_training(num_examples=-2, train_steps=870, learning_rate=1e-3)


def test_schedule_is_a_decay_on_plateau_callback_of_the_plan(train_captioning):
    plan = train_captioning.plan_training(num_examples=2400, train_steps=870, learning_rate=2e-3)
    schedule = train_captioning.learning_rate_schedule(plan)
    assert (schedule.peak_learning_rate, schedule.warmup_steps, schedule.patience) == (2e-3, 89, 7)
    assert schedule.learning_rate_at(0) == 0.0 and schedule.learning_rate_at(89) == 2e-3


def test_image_size_keeps_the_aspect_ratio_on_the_stride(train_captioning):
    derive = train_captioning.derived_image_size
    size, reason = derive((32, 96), "small_cnn")
    assert size == (32, 96) and "8x24 feature grid" in reason
    assert derive((48, 48), "small_cnn")[0] == (48, 48)
    assert derive((31, 94), "small_cnn")[0] == (32, 96)  # rounded to multiples of 4
    # Large photos: the longer side scaled to 96, the ratio kept.
    assert derive((375, 500), "small_cnn")[0] == (72, 96)
    assert derive((375, 500), "MobileNetV2")[0] == (160, 224)
    assert derive((5, 200), "small_cnn")[0] == (8, 96)  # at least two cells a side


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
