"""`train_vit.py --init-from CHECKPOINT`: fine-tuning a pretrained Hugging Face ViT folder."""

import numpy as np
import pytest
import tensorflow as tf
from example_scripts import load_example
from hf_checkpoints import PATCH
from hf_checkpoints import SIDE
from hf_checkpoints import write_vit_checkpoint
from training_interruption import TrainingWatcher
from training_interruption import watch_training

from keras_attention.models.vision.vision_transformer import VisionTransformer


@pytest.fixture(scope="module")
def train_vit():
    return load_example("train_vit", "_example")


def test_a_run_starts_from_the_checkpoint_with_a_head_for_its_classes(
    train_vit, tmp_path, monkeypatch, capsys
):
    write_vit_checkpoint(tmp_path / "vit")
    monkeypatch.setattr(train_vit, "NUM_ROLLOUT_IMAGES", 2)
    watchers = watch_training(monkeypatch)
    watcher = TrainingWatcher()
    watchers.append(watcher)
    argv = ["--init-from", str(tmp_path / "vit"), "--epochs", "1", "--batch-size", "16"]
    argv += ["--builtin-sizes", "32", "16", "16", "--output-dir", str(tmp_path / "run")]
    metrics = train_vit.main(argv + ["--export", str(tmp_path / "served"), "--no-html"])
    printed = capsys.readouterr().out
    assert "starting from " in printed and "a new head for 12 classes" in printed
    assert (metrics["patch_size"], metrics["image_size"]) == (PATCH, [SIDE, SIDE])

    # Training began from the checkpoint's encoder, with a zero head for the 12 new classes.
    pretrained = VisionTransformer.from_preset(str(tmp_path / "vit"), num_classes=12)
    for started, loaded in zip(watcher.start_weights, pretrained.get_weights(), strict=True):
        np.testing.assert_array_equal(started, loaded)
    serve = tf.saved_model.load(str(tmp_path / "served")).signatures["serving_default"]
    assert serve(images=tf.zeros((1, 40, 40, 3)))["probabilities"].shape == (1, 12)


def test_init_from_is_refused_with_a_preset_or_a_folder_that_is_not_a_vit(
    train_vit, tmp_path, capsys
):
    write_vit_checkpoint(tmp_path / "vit")
    with pytest.raises(SystemExit):
        train_vit.main(["--init-from", str(tmp_path / "vit"), "--preset", "B/16"])
    assert "use it with --model vit and no --preset" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        train_vit.main(["--init-from", str(tmp_path / "nothing")])
    assert "--init-from " + str(tmp_path / "nothing") in capsys.readouterr().err
