"""`python -m keras_attention.export RUN_DIR --export OUT`: a run's SavedModel from its checkpoint.

Run folders are laid out here as the example scripts leave them (their
arguments, `checkpoints/epoch_NNN.keras`, `vocabulary/`); the end-to-end
run of `train_nmt.py` followed by an export is in tests/examples.
"""

import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf
import tiny_models

from keras_attention import export
from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
from keras_attention.training.run_folder import EXPORT_MARKER

CAPTIONS = ["a red circle", "a blue square", "a red square on a blue circle"]
SOURCES = ["the dog sleeps", "a cat runs"]


def _run_folder(path, model, epoch=1, **arguments):
    """A run folder holding `model` as its checkpoint of `epoch`."""
    os.makedirs(path / "checkpoints", exist_ok=True)
    (path / "run_arguments.json").write_text(json.dumps({"epochs": epoch, **arguments}))
    model.save(path / "checkpoints" / f"epoch_{epoch:03d}.keras")
    return path


def _captioner():
    keras.utils.set_random_seed(0)
    tokenizer = ReversibleTokenizer.train(CAPTIONS, 300)
    model = tiny_models.tiny_show_attend_tell_captioner(vocabulary_size=tokenizer.vocabulary_size)
    return model.attach_tokenizers(tokenizer)


def test_a_captioner_run_exports_the_images_to_captions_model(tmp_path, capsys):
    model = _captioner()
    run = _run_folder(tmp_path / "run", model, epoch=3)
    path = export.main([str(run), "--export", str(run / "served"), "--beam-width", "2"])
    printed = capsys.readouterr().out
    assert f"loading {run / 'checkpoints' / 'epoch_003.keras'} ..." in printed
    assert f"SavedModel written to {run / 'served'}" in printed
    assert os.path.isfile(os.path.join(path, EXPORT_MARKER))
    signatures = tf.saved_model.load(path).signatures
    images = np.random.default_rng(0).integers(0, 256, (2, 20, 16, 3)).astype("uint8")
    served = signatures["serving_uint8"](images=tf.constant(images))["caption"].numpy()
    assert [caption.decode() for caption in served] == model.generate(images, beam_width=2)


def test_a_classifier_run_exports_pixels_to_class_names(tmp_path):
    keras.utils.set_random_seed(0)
    model = tiny_models.tiny_vision_transformer(class_names=["cat", "dog", "fox"])
    run = _run_folder(tmp_path / "run", model)
    path = export.main([str(run), "--export", str(tmp_path / "served")])
    serve = tf.saved_model.load(path).signatures["serving_default"]
    images = np.random.default_rng(1).uniform(0, 255, (3, 8, 8, 3)).astype("float32")
    outputs = serve(images=tf.constant(images))
    labels, probabilities, _ = model.classify(images, return_attention=True)
    assert [label.decode() for label in outputs["labels"].numpy()] == list(labels)
    np.testing.assert_allclose(outputs["probabilities"].numpy(), probabilities, atol=1e-5)


def test_an_older_checkpoint_takes_the_runs_saved_vocabularies(tmp_path):
    keras.utils.set_random_seed(0)
    source, target = (ReversibleTokenizer.train(SOURCES, 300) for _ in range(2))
    model = tiny_models.tiny_rnn_attention_translator(
        source_vocabulary_size=source.vocabulary_size,
        target_vocabulary_size=target.vocabulary_size,
    )  # holding no tokenizer, as checkpoints were written before models kept them
    run = _run_folder(tmp_path / "run", model, epoch=2, max_length=None)
    source.save(run / "vocabulary" / "source")
    target.save(run / "vocabulary" / "target")
    with pytest.raises(SystemExit, match=r"--max-length must be given for this RNNAttentionT"):
        export.main([str(run), "--export", str(tmp_path / "served")])  # interrupted: no metrics
    (run / "metrics.json").write_text(json.dumps({"max_length": 7}))  # the derived length
    path = export.main([str(run), "--export", str(tmp_path / "served")])
    serve = tf.saved_model.load(path).signatures["serving_default"]
    outputs = serve(text=tf.constant(SOURCES))
    assert outputs["attention"].shape == (2, 7, 7)
    expected = model.translate(SOURCES, source, target, max_source_length=7, max_target_length=7)
    assert [text.decode() for text in outputs["translation"].numpy()] == expected


def test_a_broken_newest_checkpoint_gives_way_to_the_one_before(tmp_path, capsys):
    model = _captioner()
    run = _run_folder(tmp_path / "run", model, epoch=1)
    newest = run / "checkpoints" / "epoch_002.keras"
    newest.write_bytes(b"PK\x03\x04 cut short by a full disk")
    export.main([str(run), "--export", str(tmp_path / "served")])
    printed = capsys.readouterr().out
    assert "epoch_002.keras ...\n  cannot be read" in printed
    assert "epoch_001.keras ..." in printed


def test_a_checkpoint_that_is_no_zip_file_is_named_as_damaged_not_as_missing(tmp_path, capsys):
    run = _run_folder(tmp_path / "run", _captioner(), epoch=1)
    only = run / "checkpoints" / "epoch_001.keras"
    only.write_bytes(b"\x00" * 3000)  # what a crash mid-write can leave
    with pytest.raises(SystemExit) as stop:
        export.main([str(run), "--export", str(tmp_path / "served")])
    assert str(stop.value) == (
        f"error: no checkpoint of the run can be loaded: {only}: not a .keras (zip) file, "
        "3000 bytes: cut short or damaged"
    )
    assert "older checkpoint" not in capsys.readouterr().out  # there is none


def test_a_run_folder_that_does_not_exist_is_named_so(tmp_path):
    with pytest.raises(
        SystemExit,
        match=r"training run \(with a readable run_arguments.json\), and "
        r"it does not exist. Received: run_dir=",
    ):
        export.main([str(tmp_path / "nope"), "--export", str(tmp_path / "served")])


def test_what_cannot_be_exported_is_refused_with_its_reason(tmp_path):
    with pytest.raises(SystemExit, match=r"`run_dir` must be the --output-dir of a training run"):
        export.main([str(tmp_path), "--export", str(tmp_path / "served")])
    (tmp_path / "run_arguments.json").write_text("{}")
    with pytest.raises(SystemExit, match=r"holds no checkpoint .*trained no epoch yet"):
        export.main([str(tmp_path), "--export", str(tmp_path / "served")])
    run = _run_folder(tmp_path / "run", _captioner())
    with pytest.raises(SystemExit, match=r"`--export` must not be the run's own 'checkpoints'"):
        export.main([str(run), "--export", str(run / "checkpoints" / "served")])
    thesis = tmp_path / "thesis"
    thesis.mkdir()
    (thesis / "thesis.tex").write_text("six months of work")
    with pytest.raises(SystemExit, match=r"`--export` must be absent, an empty folder"):
        export.main([str(run), "--export", str(thesis)])
    assert os.listdir(thesis) == ["thesis.tex"]


def test_help_answers_without_tensorflow():
    code = "import sys; from keras_attention import export\ntry: export.main(['--help'])\n"
    code += "except SystemExit: print('tensorflow' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert "run_dir" in result.stdout and result.stdout.strip().endswith("False")
    assert result.stderr == ""


def _classifier_run(path, class_names=("cat", "dog", "fox"), **sizes):
    keras.utils.set_random_seed(0)
    model = tiny_models.tiny_vision_transformer(class_names=list(class_names), **sizes)
    return _run_folder(path, model)


@pytest.mark.parametrize("flag", [["--beam-width", "3"], ["--max-length", "9"]])
def test_search_flags_for_an_image_classifier_are_refused(tmp_path, flag):
    run = _classifier_run(tmp_path / "run")
    with pytest.raises(SystemExit) as stop:
        export.main([str(run), "--export", str(tmp_path / "served"), *flag])
    assert str(stop.value) == (
        f"error: `{flag[0]}` sets a translator's or captioner's search; the checkpoint holds a "
        f"VisionTransformer, an image classifier. Received: {' '.join(flag)}"
    )
    assert not (tmp_path / "served").exists()


def test_a_checkpoint_path_that_does_not_exist_is_one_line(tmp_path):
    run = _classifier_run(tmp_path / "run")
    missing = tmp_path / "epoch_01.keras"
    with pytest.raises(SystemExit) as stop:
        export.main([str(run), "--export", str(tmp_path / "served"), "--checkpoint", str(missing)])
    assert str(stop.value) == (
        f"error: `--checkpoint` must be a .keras file. Received: --checkpoint {missing}, "
        "which does not exist"
    )


def test_a_checkpoint_of_another_run_is_refused_a_copy_of_its_own_is_exported(tmp_path):
    run = _classifier_run(tmp_path / "run")
    other = _classifier_run(tmp_path / "other", class_names=("ant", "bee", "cow"))
    foreign = other / "checkpoints" / "epoch_001.keras"
    with pytest.raises(SystemExit) as stop:
        export.main([str(run), "--export", str(tmp_path / "a"), "--checkpoint", str(foreign)])
    assert str(stop.value).startswith(
        f"error: `--checkpoint` holds another model than the run in {run}: class_names="
    )
    assert str(stop.value).endswith(
        f"Export a checkpoint with its own run folder. Received: --checkpoint {foreign}"
    )
    copy = tmp_path / "best.keras"  # the run's own checkpoint, kept elsewhere
    copy.write_bytes((run / "checkpoints" / "epoch_001.keras").read_bytes())
    path = export.main([str(run), "--export", str(tmp_path / "b"), "--checkpoint", str(copy)])
    assert os.path.isfile(os.path.join(path, EXPORT_MARKER))


def test_an_export_of_another_run_is_not_replaced(tmp_path):
    first, second = _classifier_run(tmp_path / "first"), _classifier_run(tmp_path / "second")
    served = tmp_path / "served"
    export.main([str(first), "--export", str(served)])
    written = (served / "saved_model.pb").stat().st_mtime_ns
    with pytest.raises(SystemExit) as stop:
        export.main([str(second), "--export", str(served)])
    assert str(stop.value) == (
        f"error: `--export` holds the export of {first}, which an export of {second} does not "
        f"replace. Received: --export={str(served)!r}. Choose another --export, or remove that "
        "folder first."
    )
    assert (served / "saved_model.pb").stat().st_mtime_ns == written
    export.main([str(first), "--export", str(served)])  # the run's own export: replaced
    assert (served / "saved_model.pb").stat().st_mtime_ns != written
