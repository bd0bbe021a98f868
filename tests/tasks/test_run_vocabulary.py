"""A run keeps the vocabularies and classes it learned before training for as long as it goes on."""

import json
import os

import pytest

from keras_attention.tasks.run_vocabulary import has_trained
from keras_attention.tasks.run_vocabulary import keep_class_names
from keras_attention.tasks.run_vocabulary import kept_tokenizers
from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
from keras_attention.text.tokenizer_files import load_tokenizer


def trained(run):
    """Marks `run` as a run that has trained: one per-epoch checkpoint."""
    os.makedirs(run / "checkpoints", exist_ok=True)
    (run / "checkpoints" / "epoch_001.keras").write_bytes(b"")


def test_has_trained_means_a_checkpoint_or_a_backup(tmp_path):
    assert not has_trained(tmp_path)
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / ".partial_1_epoch_001.keras").write_bytes(b"")  # a killed write
    (tmp_path / "backup").mkdir()
    assert not has_trained(tmp_path)
    (tmp_path / "backup" / "epoch_000001").mkdir()
    assert has_trained(tmp_path)


def test_kept_tokenizers_reads_back_what_a_run_that_trained_saved(tmp_path, capsys):
    for name, texts in (("source", ["the cat", "a dog"]), ("target", ["el gato", "un perro"])):
        ReversibleTokenizer.train(texts, 300).save(str(tmp_path / "vocabulary" / name))
    assert kept_tokenizers(tmp_path, ("source", "target")) is None  # not trained: learn anew
    trained(tmp_path)
    source, target = kept_tokenizers(tmp_path, ("source", "target"))
    assert target.decode(target.encode(["el gato"], 8)).numpy().tolist() == [b"el gato"]
    assert "kept the vocabularies this run trained with" in capsys.readouterr().out
    assert kept_tokenizers(tmp_path, ("source", "other")) is None  # one is missing: learn anew


def test_class_names_are_recorded_then_held_to_once_the_run_trained(tmp_path):
    keep_class_names(tmp_path, ["cat", "dog"], "folder:pets")
    path = tmp_path / "vocabulary" / "classes.json"
    assert json.loads(path.read_text()) == ["cat", "dog"]
    keep_class_names(tmp_path, ["bird", "cat"], "folder:pets")  # never trained: started anew
    assert json.loads(path.read_text()) == ["bird", "cat"]
    trained(tmp_path)
    keep_class_names(tmp_path, ["bird", "cat"], "folder:pets")  # the same classes
    with pytest.raises(
        ValueError,
        match=r"^folder:pets now has 3 classes \(bird, cat, dog\), but the run in .* trained on "
        r"2 \(bird, cat\): its data changed since, .*another --output-dir, or pass --overwrite",
    ):
        keep_class_names(tmp_path, ["bird", "cat", "dog"], "folder:pets")
    assert json.loads(path.read_text()) == ["bird", "cat"]


def test_a_captioner_vocabulary_in_the_vocabulary_folder_itself_is_kept(tmp_path):
    tokenizer = ReversibleTokenizer.train(["a red square", "a blue circle"], 300)
    tokenizer.save(str(tmp_path / "vocabulary"))  # as train_caption_vocabulary saves it
    trained(tmp_path)
    (kept,) = kept_tokenizers(tmp_path, ("",))
    assert kept.vocabulary == tokenizer.vocabulary


def test_a_worker_of_a_multiworker_run_keeps_the_chiefs_vocabulary_and_classes(tmp_path):
    import argparse

    from keras_attention.training.cluster_config import WorkerRole
    from keras_attention.training.worker_folders import redirect_outputs

    chief = tmp_path / "run"
    ReversibleTokenizer.train(["the cat", "a dog"], 300).save(str(chief / "vocabulary"))
    keep_class_names(str(chief), ["cat", "dog"], "folder:pets")
    trained(chief)
    args = argparse.Namespace(output_dir=str(chief), export=None)
    assert redirect_outputs(args, WorkerRole("worker", 1, False, 2))
    worker_folder = args.output_dir  # the worker's own temporary folder, empty
    (tokenizer,) = kept_tokenizers(worker_folder, ("",))
    assert tokenizer.vocabulary == load_tokenizer(str(chief / "vocabulary")).vocabulary
    with pytest.raises(ValueError, match=r"now has 3 classes \(bird, cat, dog\), but the run in "):
        keep_class_names(worker_folder, ["bird", "cat", "dog"], "folder:pets")
    keep_class_names(worker_folder, ["cat", "dog"], "folder:pets")
    assert os.listdir(worker_folder) == []  # the worker wrote nothing of its own
