"""`VisionTransformer.from_preset(folder)` on keras-hub ViT presets written in the test."""

import numpy as np
import pytest
import tensorflow as tf
from keras_hub_presets import keras_hub_vit_classifier

from keras_attention import convert
from keras_attention.models.image_classification.vision_transformer import VisionTransformer


def _their_logits(classifier, pixels):
    converted = classifier.preprocessor.image_converter(pixels)
    return np.asarray(classifier(converted))


@pytest.mark.parametrize(
    "scale, offset",
    [
        (1 / 127.5, -1.0),
        ([1 / (255 * 0.229), 1 / (255 * 0.224), 1 / (255 * 0.225)], [-2.1, -2.0, -1.8]),
    ],
)
def test_a_classifier_preset_gives_keras_hubs_logits(tmp_path, scale, offset):
    classifier = keras_hub_vit_classifier(scale=scale, offset=offset)
    classifier.save_to_preset(str(tmp_path / "preset"))
    model = VisionTransformer.from_preset(str(tmp_path / "preset"))
    assert model.image_size == (32, 24) and tuple(model.head.kernel.shape) == (16, 4)
    pixels = np.random.default_rng(1).uniform(0, 255, (2, 32, 24, 3)).astype("float32")
    np.testing.assert_allclose(
        np.asarray(model(pixels)), _their_logits(classifier, pixels), atol=1e-4
    )


def test_a_backbone_preset_needs_its_classes_and_keeps_its_encoder(tmp_path):
    classifier = keras_hub_vit_classifier()
    classifier.backbone.save_to_preset(str(tmp_path / "backbone"))
    with pytest.raises(ValueError, match=r"`num_classes` must be given for a new head"):
        VisionTransformer.from_preset(str(tmp_path / "backbone"))
    model = VisionTransformer.from_preset(str(tmp_path / "backbone"), num_classes=7)
    assert not np.any(np.asarray(model.head.kernel))
    theirs = {w.path: np.asarray(w) for w in classifier.backbone.weights}
    ours = {w.path: np.asarray(w) for w in model.weights}
    for their_path, our_path in (
        (
            "vit_encoder/transformer_block_2/mha/query/kernel",
            "encoder_block_1/self_attention_layer/query/kernel",
        ),
        (
            "vit_encoder/transformer_block_1/mlp/dense_2/bias",
            "encoder_block_0/feedforward_output_dense/bias",
        ),
        ("vit_encoder/ln/gamma", "final_norm/gamma"),
    ):
        np.testing.assert_array_equal(ours[our_path], theirs[their_path])


def test_a_keras_hub_preset_converts_to_a_savedmodel(tmp_path):
    classifier = keras_hub_vit_classifier()
    classifier.save_to_preset(str(tmp_path / "preset"))
    path = convert.main([str(tmp_path / "preset"), "--export", str(tmp_path / "served")])
    serve = tf.saved_model.load(path).signatures["serving_default"]
    pixels = np.random.default_rng(2).uniform(0, 255, (3, 32, 24, 3)).astype("float32")
    logits = _their_logits(classifier, pixels)
    expected = np.exp(logits - logits.max(-1, keepdims=True))
    expected /= expected.sum(-1, keepdims=True)
    np.testing.assert_allclose(
        serve(images=tf.constant(pixels))["probabilities"].numpy(), expected, atol=1e-4
    )
