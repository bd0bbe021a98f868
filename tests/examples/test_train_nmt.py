"""The translation example end to end: TSV and built-in data, resuming, MirroredStrategy.

Its flags and steps are tested with the package modules they come from
(tests/training/test_translation_arguments.py and neighbours).
"""

import importlib.util
import json
import pathlib
import sys

import keras
import numpy as np
import pytest
from training_interruption import TrainingWatcher
from training_interruption import interrupt_then_resume
from training_interruption import watch_training

from keras_attention.models.translation.rnn_attention_translator import RNNAttentionTranslator
from keras_attention.serving.translation_export import load_translator
from keras_attention.tasks.translation.builtin_corpus import builtin_translation_pairs
from keras_attention.tasks.translation.builtin_corpus import split_translation_pairs
from keras_attention.text.reversible_tokenizer import ReversibleTokenizer

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
# Tiny models and few held-out sentences keep the XLA compilations short.
TINY = [  # --max-length 12 is shorter than most pairs of a vocabulary this small: cut them
    "--long-pairs",
    "truncate",
    "--hidden-dim",
    "8",
    "--num-layers",
    "1",
    "--num-heads",
    "2",
    "--batch-size",
    "8",
    "--max-length",
    "12",
    "--vocabulary-size",
    "300",
    "--eval-sentences",
    "4",
    "--samples",
    "2",
    "--plots",
    "1",
]
BAD_LINES = r"Skipped 3 malformed line\(s\) of .*: line\(s\) 3, 7, 10\."


def _load(name):
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    spec = importlib.util.spec_from_file_location(f"_example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def train_nmt():
    return _load("train_nmt")


def _write_tsv(path):
    """60 good pairs and 3 malformed lines, at lines 3, 7 and 10."""
    lines = [f"{source}\t{target}" for source, target in builtin_translation_pairs(60, seed=1)]
    lines.insert(2, "a line without a tab")
    lines.insert(6, "a source without target\t")
    lines.insert(9, "one\ttwo\tthree\tfour")  # a third field is allowed, a fourth is not
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    bad = (3, 7, 10)
    return [tuple(line.split("\t")) for number, line in enumerate(lines, 1) if number not in bad]


def test_tsv_run_warns_about_bad_lines_and_exports(train_nmt, tmp_path):
    pairs = _write_tsv(tmp_path / "pairs.tsv")
    output_dir, export_dir = tmp_path / "run", tmp_path / "served"
    with pytest.warns(UserWarning, match=BAD_LINES):
        metrics = train_nmt.main(
            [
                "--dataset",
                f"tsv:{tmp_path / 'pairs.tsv'}",
                "--epochs",
                "1",
                "--output-dir",
                str(output_dir),
                "--export",
                str(export_dir),
                *TINY,
            ]
        )
    assert (metrics["model"], metrics["split"], metrics["replicas"]) == ("transformer", "test", 1)
    assert metrics["sentences"] == 3  # 5% of 60 sources
    assert metrics["split_sizes"] == {"train": 54, "validation": 3, "test": 3}
    assert 0.0 <= metrics["bleu"] <= 100.0 and 0.0 <= metrics["chrf"] <= 100.0
    assert 0.0 <= metrics["exact_match"] <= 1.0 and metrics["unigram_loss"] > 0
    assert json.loads((output_dir / "metrics.json").read_text()) == metrics
    assert (output_dir / "checkpoints" / "epoch_001.keras").exists()
    assert (output_dir / "alignment_0.png").stat().st_size > 0
    page = (output_dir / "attention_explorer.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "held-out sentence 0" in page
    # The saved vocabularies give every training sentence back exactly.
    train_pairs = split_translation_pairs(pairs)["train"]  # the split the script makes
    for side, name in ((0, "source"), (1, "target")):
        encoder = ReversibleTokenizer.load(output_dir / "vocabulary" / name)
        texts = [pair[side] for pair in train_pairs]
        decoded = encoder.decode(encoder.encode(texts, 60, add_end=True)).numpy().tolist()
        assert decoded == [text.encode("utf-8") for text in texts]
        assets = (export_dir / "assets" / f"{name}_vocabulary.txt").read_text(encoding="utf-8")
        assert assets.splitlines() == encoder.vocabulary
    assert (export_dir / "saved_model.pb").exists()


def test_parallel_files_train_and_score_on_their_own_splits(train_nmt, tmp_path, capsys):
    pairs = builtin_translation_pairs(40, seed=2)
    layout = {"train": pairs[:30], "valid": pairs[30:34], "test2016": pairs[34:]}
    for prefix, split in layout.items():
        for side, lang in ((0, "en"), (1, "es")):
            text = "".join(pair[side] + "\n" for pair in split)
            (tmp_path / f"{prefix}.{lang}").write_text(text, encoding="utf-8")
    output_dir = tmp_path / "run"
    dataset = ["--dataset", f"parallel:{tmp_path}", "--source-lang", "en", "--target-lang", "es"]
    metrics = train_nmt.main(
        [*dataset, "--epochs", "1", "--output-dir", str(output_dir), "--no-html", *TINY]
    )
    assert metrics["split_sizes"] == {"train": 30, "validation": 4, "test": 6}
    assert metrics["split"] == "test" and metrics["sentences"] == 4  # --eval-sentences 4
    assert json.loads((output_dir / "metrics.json").read_text()) == metrics
    printed = capsys.readouterr().out
    assert f"data: parallel files {tmp_path} (train, valid, test2016; en -> es): " in printed


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
