"""The one table from a checkpoint folder's model type to its reader, as `from_preset` reads it."""

import json

import pytest

import keras_attention.models
from keras_attention.models.checkpoints.checkpoint_readers import CHECKPOINT_READERS
from keras_attention.models.checkpoints.checkpoint_readers import checkpoint_model_type
from keras_attention.models.checkpoints.checkpoint_readers import checkpoint_reader
from keras_attention.models.image_classification.swin_transformer import SwinTransformer


def _folder(path, config, keras_hub=False):
    path.mkdir()
    (path / "config.json").write_text(json.dumps(config))
    if keras_hub:
        (path / "metadata.json").write_text(json.dumps({"keras_version": "3"}))
    return str(path)


def test_every_reader_builds_a_model_the_package_exports_with_from_preset():
    for reader in CHECKPOINT_READERS.values():
        model_class = getattr(keras_attention.models, reader.model_class)
        assert callable(model_class.from_preset) and callable(reader.read)
        assert reader.folder_kind in ("huggingface", "keras_hub")
        assert reader.task in ("image classifier", "translator")


def test_the_model_type_is_what_the_folder_says(tmp_path):
    vit = _folder(tmp_path / "vit", {"model_type": "vit"})
    hub = _folder(tmp_path / "hub", {"class_name": "ViTBackbone", "config": {}}, keras_hub=True)
    assert checkpoint_model_type(vit) == ("huggingface", "vit")
    assert checkpoint_model_type(hub) == ("keras_hub", "ViTBackbone")
    assert checkpoint_reader(vit) is CHECKPOINT_READERS["vit"]
    assert checkpoint_reader(hub) is CHECKPOINT_READERS["ViTBackbone"]
    assert checkpoint_reader(_folder(tmp_path / "bert", {"model_type": "bert"})) is None


def test_a_folder_of_another_model_gets_the_class_reader_that_refuses_it(tmp_path):
    swin = _folder(tmp_path / "swin", {"model_type": "swin"})
    # The ViT reader of Hugging Face folders, whose config check names the model_type it reads.
    assert checkpoint_reader(swin, "VisionTransformer") is CHECKPOINT_READERS["vit"]
    hub = _folder(tmp_path / "hub", {"class_name": "ViTBackbone", "config": {}}, keras_hub=True)
    with pytest.raises(
        ValueError,
        match=r"`preset` must be a checkpoint folder that SwinTransformer reads: a Hugging "
        r"Face 'swin' folder. Received: .*a keras-hub ViTBackbone preset",
    ):
        SwinTransformer.from_preset(hub)
