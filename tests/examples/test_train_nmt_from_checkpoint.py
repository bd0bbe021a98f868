"""`train_nmt.py --init-from CHECKPOINT`: fine-tuning a Marian (opus-mt) checkpoint folder."""

import json

import numpy as np
import pytest
import tensorflow as tf
from example_scripts import load_example
from marian_checkpoints import phrase_pairs
from marian_checkpoints import write_marian_folder
from training_interruption import TrainingWatcher
from training_interruption import watch_training

from keras_attention.models.translation.transformer_translator import TransformerTranslator
from keras_attention.text.tokenizer_files import load_tokenizer


@pytest.fixture(scope="module")
def train_nmt():
    return load_example("train_nmt", "_example")


def test_a_run_starts_from_the_checkpoint_and_keeps_its_tokenizers(
    train_nmt, tmp_path, monkeypatch, capsys
):
    # One layer each side: the fine-tuning run compiles its steps faster than with two.
    write_marian_folder(str(tmp_path / "opus-mt"), encoder_layers=1, decoder_layers=1)
    data = tmp_path / "pairs.tsv"
    data.write_text("".join(f"{s}\t{t}\n" for s, t in phrase_pairs(300, seed=3)))
    watchers = watch_training(monkeypatch)
    watcher = TrainingWatcher()
    watchers.append(watcher)
    argv = ["--init-from", str(tmp_path / "opus-mt"), "--dataset", f"tsv:{data}"]
    argv += ["--epochs", "2", "--output-dir", str(tmp_path / "run"), "--no-html"]
    metrics = train_nmt.main(argv + ["--export", str(tmp_path / "served")])
    printed = capsys.readouterr().out
    assert "starting from " in printed and "tokenizers of " in printed
    # No vocabulary is learned: the run keeps the checkpoint's, and starts from its weights.
    assert "learning the source vocabulary" not in printed
    pretrained = TransformerTranslator.from_preset(str(tmp_path / "opus-mt"))
    for started, loaded in zip(watcher.start_weights, pretrained.get_weights(), strict=True):
        np.testing.assert_array_equal(started, loaded)
    saved = load_tokenizer(str(tmp_path / "run" / "vocabulary" / "source"))
    assert saved.vocabulary == pretrained.tokenizers["source"].vocabulary
    assert metrics["split_sizes"]["train"] > 0
    assert (
        json.loads((tmp_path / "run" / "run_arguments.json").read_text())["learning_rate"] == 5e-5
    )
    serve = tf.saved_model.load(str(tmp_path / "served")).signatures["serving_default"]
    translation = serve(text=tf.constant(["green cat"]))["translation"]
    assert translation.dtype == tf.string and translation.shape == (1,)


def test_init_from_is_refused_with_another_model_or_architecture(train_nmt, tmp_path, capsys):
    write_marian_folder(str(tmp_path / "opus-mt"))
    with pytest.raises(SystemExit):
        train_nmt.main(["--init-from", str(tmp_path / "opus-mt"), "--model", "rnn"])
    assert "leave --model out. Received: --model rnn" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        train_nmt.main(["--init-from", str(tmp_path / "opus-mt"), "--num-layers", "4"])
    assert "--num-layers 4: --init-from keeps the checkpoint's architecture" in (
        capsys.readouterr().err
    )
    (tmp_path / "vit").mkdir()
    (tmp_path / "vit" / "config.json").write_text(json.dumps({"model_type": "vit"}))
    with pytest.raises(SystemExit, match=r"--init-from .*vit: .*model_type 'marian'"):
        train_nmt.main(
            ["--init-from", str(tmp_path / "vit"), "--output-dir", str(tmp_path / "run")]
        )
