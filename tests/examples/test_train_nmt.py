"""The translation example end to end on TSV and parallel files.

Resuming and MirroredStrategy: tests/examples/test_train_nmt_resuming.py.

Its flags and steps are tested with the package modules they come from
(tests/training/test_translation_arguments.py and neighbours).
"""

import importlib.util
import json
import pathlib
import sys

import pytest
from example_scripts import NMT_TINY_FLAGS as TINY

from keras_attention.tasks.translation.builtin_corpus import builtin_translation_pairs
from keras_attention.tasks.translation.builtin_corpus import split_translation_pairs
from keras_attention.text.reversible_tokenizer import ReversibleTokenizer

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
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
