"""`VisionTransformer.from_preset(folder)` on keras-hub ViT presets written in the test."""

import keras
import keras_hub
import numpy as np
import pytest
import tensorflow as tf

from keras_attention import convert
from keras_attention.models.image_classification.vision_transformer import VisionTransformer

SIZES = dict(patch_size=8, num_layers=2, num_heads=2, hidden_dim=16, mlp_dim=32)


def _keras_hub_classifier(image_shape=(32, 24, 3), scale=1 / 127.5, offset=-1.0):
    keras.utils.set_random_seed(0)
    backbone = keras_hub.models.ViTBackbone(image_shape=image_shape, **SIZES)
    converter = keras_hub.layers.ViTImageConverter(
        image_size=image_shape[:2], scale=scale, offset=offset
    )
    preprocessor = keras_hub.models.ViTImageClassifierPreprocessor(image_converter=converter)
    classifier = keras_hub.models.ViTImageClassifier(
        backbone=backbone, num_classes=4, preprocessor=preprocessor
    )
    rng = np.random.default_rng(0)
    for weight in classifier.weights:  # the head starts at 0: random values test every path
        weight.assign(rng.normal(0, 0.2, weight.shape).astype("float32") + np.asarray(weight))
    return classifier


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
    classifier = _keras_hub_classifier(scale=scale, offset=offset)
    classifier.save_to_preset(str(tmp_path / "preset"))
    model = VisionTransformer.from_preset(str(tmp_path / "preset"))
    assert model.image_size == (32, 24) and tuple(model.head.kernel.shape) == (16, 4)
    pixels = np.random.default_rng(1).uniform(0, 255, (2, 32, 24, 3)).astype("float32")
    np.testing.assert_allclose(
        np.asarray(model(pixels)), _their_logits(classifier, pixels), atol=1e-4
    )


def test_a_backbone_preset_needs_its_classes_and_keeps_its_encoder(tmp_path):
    classifier = _keras_hub_classifier()
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
    classifier = _keras_hub_classifier()
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
