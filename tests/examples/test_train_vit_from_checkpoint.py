"""`train_vit.py --init-from CHECKPOINT`: fine-tuning a pretrained Hugging Face ViT folder."""

import json

import numpy as np
import pytest
import tensorflow as tf
from example_scripts import load_example
from hf_checkpoints import PATCH
from hf_checkpoints import SIDE
from hf_checkpoints import write_swin_checkpoint
from hf_checkpoints import write_vit_checkpoint
from training_interruption import TrainingWatcher
from training_interruption import watch_training

from keras_attention.models.image_classification.vision_transformer import VisionTransformer


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
    assert "use it with no --preset. Received: --preset B/16" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        train_vit.main(["--init-from", str(tmp_path / "vit"), "--patch-size", "4"])
    assert "the checkpoint's patches are 8 pixels" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        train_vit.main(["--init-from", str(tmp_path / "nothing")])
    assert "--init-from " + str(tmp_path / "nothing") in capsys.readouterr().err


def test_a_checkpoint_whose_config_contradicts_its_weights_ends_the_run_in_one_line(
    train_vit, tmp_path
):
    write_vit_checkpoint(tmp_path / "vit")
    config_path = tmp_path / "vit" / "config.json"
    config = json.loads(config_path.read_text())
    config["intermediate_size"] *= 2
    config_path.write_text(json.dumps(config))
    argv = ["--init-from", str(tmp_path / "vit"), "--epochs", "1", "--no-html"]
    argv += ["--builtin-sizes", "32", "16", "16", "--output-dir", str(tmp_path / "run")]
    # The reader's refusal as the script's last line, not at the end of a traceback.
    with pytest.raises(SystemExit, match=r"^error: .*config.json: intermediate_size is \d+ but"):
        train_vit.main(argv)


def test_a_keras_hub_preset_gives_its_sizes_and_encoder(tmp_path, capsys):
    import keras
    import keras_hub

    from keras_attention.tasks.image_classification import model_from_flags
    from keras_attention.tasks.image_classification.recipe_from_flags import parse_vit_arguments

    keras.utils.set_random_seed(0)
    backbone = keras_hub.models.ViTBackbone(
        image_shape=(32, 32, 3), patch_size=8, num_layers=1, num_heads=2, hidden_dim=16, mlp_dim=16
    )
    backbone.save_to_preset(str(tmp_path / "preset"))
    args = parse_vit_arguments(["--init-from", str(tmp_path / "preset"), "--epochs", "1"])
    assert (args.patch_size, args.image_size) == (8, (32, 32))
    names = [f"class_{index}" for index in range(12)]
    model = model_from_flags.image_classifier_from_arguments(args, 12, names, (32, 32))
    assert "a new head for 12 classes" in capsys.readouterr().out
    ours = {w.path: np.asarray(w) for w in model.weights}
    theirs = {w.path: np.asarray(w) for w in backbone.weights}
    np.testing.assert_array_equal(
        ours["encoder_block_0/self_attention_layer/query/kernel"],
        theirs["vit_encoder/transformer_block_1/mha/query/kernel"],
    )


def test_swin_starts_from_a_huggingface_swin_folder(train_vit, tmp_path, monkeypatch, capsys):
    write_swin_checkpoint(tmp_path / "swin")
    monkeypatch.setattr(train_vit, "NUM_ROLLOUT_IMAGES", 2)
    argv = ["--model", "swin", "--init-from", str(tmp_path / "swin"), "--epochs", "1"]
    argv += ["--batch-size", "16", "--builtin-sizes", "32", "16", "16", "--no-html"]
    argv += ["--output-dir", str(tmp_path / "run"), "--export", str(tmp_path / "served")]
    metrics = train_vit.main(argv)
    printed = capsys.readouterr().out
    assert "starting from " in printed and "a new head for 12 classes" in printed
    assert metrics["image_size"] == [32, 32]
    serve = tf.saved_model.load(str(tmp_path / "served")).signatures["serving_default"]
    assert serve(images=tf.zeros((1, 40, 40, 3)))["probabilities"].shape == (1, 12)
    # A ViT folder is not a Swin checkpoint: refused, naming the model asked for.
    write_vit_checkpoint(tmp_path / "vit")
    with pytest.raises(SystemExit):
        train_vit.main(["--model", "swin", "--init-from", str(tmp_path / "vit")])
    assert "(--model swin): `folder` must hold a Hugging Face SwinTransformer" in (
        capsys.readouterr().err
    )
