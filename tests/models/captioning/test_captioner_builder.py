"""Captioners built by name, their sizes derived from one width."""

import pytest

from keras_attention.models.captioning.captioner_builder import build_captioner


def test_show_attend_tell_sizes_come_from_hidden_dim():
    model = build_captioner(
        "show_attend_tell", 50, 7, image_size=(16, 32), hidden_dim=24, attention_penalty=0.5
    )
    assert type(model).__name__ == "ShowAttendTellCaptioner"
    config = model.get_config()
    assert (config["vocabulary_size"], config["max_caption_length"]) == (50, 7)
    assert (config["units"], config["embedding_dim"], config["attention_units"]) == (24, 12, 12)
    assert config["doubly_stochastic_lambda"] == 0.5 and config["dropout"] == 0.1
    assert tuple(config["image_size"]) == (16, 32) and config["trainable_backbone"] is True
    # Unset, the penalty is 0 (the example's default), not the paper's 1.
    model = build_captioner("show_attend_tell", 50, 7, image_size=16, hidden_dim=16)
    assert model.get_config()["doubly_stochastic_lambda"] == 0.0


def test_transformer_defaults_and_sizes():
    model = build_captioner(
        "transformer", 40, 6, image_size=16, hidden_dim=16, dropout=0.0, trainable_backbone=False
    )
    assert type(model).__name__ == "TransformerCaptioner"
    config = model.get_config()
    assert (config["hidden_dim"], config["intermediate_dim"], config["dropout"]) == (16, 32, 0.0)
    assert (config["num_layers"], config["num_heads"], config["encoder_layers"]) == (2, 1, 0)
    assert config["trainable_backbone"] is False
    model = build_captioner(
        "transformer", 40, 6, image_size=16, hidden_dim=8, num_layers=1, num_heads=2
    )
    assert (model.get_config()["num_layers"], model.get_config()["num_heads"]) == (1, 2)


def test_vit_defaults_sizes_and_patches():
    model = build_captioner("vit", 40, 6, image_size=(16, 32), hidden_dim=16, backbone="ResNet50")
    assert type(model).__name__ == "ViTCaptioner"
    config = model.get_config()
    assert (config["hidden_dim"], config["intermediate_dim"], config["patch_size"]) == (16, 32, 4)
    assert (config["num_layers"], config["num_heads"], config["encoder_layers"]) == (2, 2, 2)
    assert model.grid_size == (4, 8)  # 4-pixel patches, no CNN (the backbone is ignored)
    assert config["patch_stem"] == "linear"
    model = build_captioner(
        "vit", 40, 6, image_size=(16, 32), hidden_dim=16, patch_stem="convolutional"
    )
    assert model.get_config()["patch_stem"] == "convolutional" and model.grid_size == (4, 8)
    model = build_captioner(
        "vit", 40, 6, image_size=(16, 32), hidden_dim=8, patch_size=8, encoder_layers=0
    )
    assert model.grid_size == (2, 4) and model.get_config()["encoder_layers"] == 0
    with pytest.raises(ValueError, match=r"Received: image_size=\(16, 32\), patch_size=12"):
        build_captioner("vit", 40, 6, image_size=(16, 32), hidden_dim=8, patch_size=12)


def test_unknown_model_is_refused():
    with pytest.raises(ValueError, match="Received: model='lstm'"):
        build_captioner("lstm", 40, 6, image_size=16, hidden_dim=8)
