"""The translation example resumes: after an interruption (MirroredStrategy), a failed export,
and with more epochs than a finished run had."""

import keras
import numpy as np
import pytest
from example_scripts import NMT_TINY_FLAGS as TINY
from example_scripts import load_example
from training_interruption import TrainingWatcher
from training_interruption import interrupt_then_resume
from training_interruption import watch_training

from keras_attention.models.translation.rnn_attention_translator import RNNAttentionTranslator
from keras_attention.serving.translation_export import load_translator


@pytest.fixture(scope="module")
def train_nmt():
    return load_example("train_nmt", "_example")


def test_mirrored_rnn_run_resumes_after_an_interruption(train_nmt, tmp_path, monkeypatch):
    output_dir, export_dir = tmp_path / "run", tmp_path / "served"
    argv = [
        "--model",
        "rnn",
        "--builtin-pairs",
        "200",
        "--epochs",
        "2",
        "--strategy",
        "mirrored",
        "--output-dir",
        str(output_dir),
        *TINY,
    ]

    # Stopped after its first epoch, the same command continues from the saved weights.
    metrics = interrupt_then_resume(
        monkeypatch, train_nmt.main, argv, argv + ["--export", str(export_dir)]
    )

    assert metrics["replicas"] == 2  # the two logical CPUs of tests/conftest.py
    assert (metrics["model"], metrics["dataset"], metrics["sentences"]) == ("rnn", "builtin", 4)
    restored = keras.saving.load_model(output_dir / "checkpoints" / "epoch_002.keras")
    assert isinstance(restored, RNNAttentionTranslator)  # loads back as its class
    # The mirrored variables export like plain ones: the SavedModel restores them.
    serve = load_translator(export_dir)
    assert len(serve.saved_model.model_variables) == len(restored.variables)
    outputs = serve(["the dog sleeps", "a cat"])  # (B,) in: (B, T, S) attention out
    assert outputs["attention"].shape == (2, 12, 12)


def test_run_killed_at_export_resumes_at_the_end_of_training(train_nmt, tmp_path, monkeypatch):
    output_dir, export_dir = tmp_path / "run", tmp_path / "served"
    argv = ["--model", "rnn", "--builtin-pairs", "120", "--epochs", "2", *TINY]
    argv += ["--output-dir", str(output_dir), "--export", str(export_dir), "--no-html"]
    watchers = watch_training(monkeypatch)
    first = TrainingWatcher()
    watchers.append(first)
    # The script exports through the translation task's export writer.
    from keras_attention.tasks.translation import model_from_flags

    export = model_from_flags.export_translator

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(model_from_flags, "export_translator", full_disk)
    with pytest.raises(OSError, match="No space left"):
        train_nmt.main(argv)
    assert first.epochs == [0, 1]
    assert (output_dir / "metrics.json").exists() and any((output_dir / "backup").iterdir())

    # The same command again: no epoch trained again, straight on to scoring and export.
    monkeypatch.setattr(model_from_flags, "export_translator", export)
    second = TrainingWatcher()
    watchers.append(second)
    train_nmt.main(argv)
    assert second.epochs == []
    for restored, trained in zip(second.start_weights, first.last_weights, strict=True):
        np.testing.assert_array_equal(restored, trained)
    assert (export_dir / "saved_model.pb").exists()
    assert not (output_dir / "backup").exists()  # removed once the export is in place


def test_finished_run_exports_later_and_trains_on_when_given_more_epochs(
    train_nmt, tmp_path, monkeypatch, capsys
):
    from keras_attention import export

    run = tmp_path / "run"
    argv = ["--model", "rnn", "--builtin-pairs", "120", "--epochs", "1", *TINY]
    argv += ["--output-dir", str(run), "--no-html"]
    watchers = watch_training(monkeypatch)
    watchers.append(TrainingWatcher())
    train_nmt.main(argv)  # finished, without --export: its backup is removed
    assert not (run / "backup").exists()
    printed = capsys.readouterr().out  # not a terminal: one line per stage
    assert "learning the target vocabulary: 108 sentences in " in printed
    assert "translating the held-out split (greedy search): 4 sentences in " in printed

    # The SavedModel, written afterwards from the last checkpoint: no retraining.
    served = export.main([str(run), "--export", str(tmp_path / "served")])
    checkpoint = keras.saving.load_model(run / "checkpoints" / "epoch_001.keras")
    outputs = load_translator(served)(["the dog sleeps", "a cat"])
    translations = [text.decode() for text in outputs["translation"].numpy()]
    assert translations == checkpoint.generate(
        ["the dog sleeps", "a cat"], max_length=12, max_source_length=12
    )

    # More epochs (and another beam width, which only evaluation uses) go on from epoch 1.
    capsys.readouterr()
    more = TrainingWatcher()
    watchers.append(more)
    argv[argv.index("--epochs") + 1] = "2"
    metrics = train_nmt.main(argv + ["--beam-width", "2", "--quiet"])
    assert (
        "now asked for epochs=2: restoring checkpoints/epoch_001.keras" in capsys.readouterr().out
    )
    assert more.epochs == [1]
    for restored, saved in zip(more.start_weights, checkpoint.get_weights(), strict=True):
        np.testing.assert_array_equal(restored, saved)
    assert metrics["epochs"] == 2 and (run / "checkpoints" / "epoch_002.keras").exists()


def test_a_run_trained_on_keeps_its_vocabularies_when_its_file_changed(
    train_nmt, tmp_path, monkeypatch, capsys
):
    pairs = tmp_path / "pairs.tsv"
    words = ["cat", "dog", "bird", "fish", "cow", "hen"]
    lines = [f"the {a} sees a {b}\tel {a} ve un {b}" for a in words for b in words]
    pairs.write_text("\n".join(lines) + "\n")
    run = tmp_path / "run"
    argv = ["--model", "rnn", "--dataset", f"tsv:{pairs}", *TINY]
    argv += ["--output-dir", str(run), "--no-html", "--quiet"]
    watch_training(monkeypatch).append(TrainingWatcher())
    train_nmt.main(argv + ["--epochs", "1"])
    vocabulary = {
        path: path.read_bytes()
        for path in sorted((run / "vocabulary").rglob("*"))
        if path.is_file()
    }
    assert len(vocabulary) >= 2
    # Lines in other words added to the file, then the run asked for one epoch more: it
    # goes on with the token ids it trained with, not with vocabularies learned again.
    with open(pairs, "a") as file:
        file.write("".join(f"zebras {n} qux\tcebras {n} quux\n" for n in range(40)))
    capsys.readouterr()
    metrics = train_nmt.main(argv + ["--epochs", "2"])
    printed = capsys.readouterr().out
    assert "kept the vocabularies this run trained with" in printed
    assert "learning the source vocabulary" not in printed
    assert {path: path.read_bytes() for path in vocabulary} == vocabulary
    assert metrics["epochs"] == 2 and (run / "checkpoints" / "epoch_002.keras").exists()
