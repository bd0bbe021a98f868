import importlib

import keras
import numpy as np
import pytest

from keras_attention.models.captioning.image_backbones import application_preprocessing_affine
from keras_attention.models.captioning.image_backbones import backbone_stride
from keras_attention.models.captioning.image_backbones import image_backbone
from keras_attention.models.captioning.image_backbones import image_shape_of
from keras_attention.models.captioning.image_backbones import image_size_of

PIXELS = np.random.default_rng(0).uniform(0, 255, (2, 5, 7, 3)).astype("float32")


def test_small_cnn_resizes_rescales_and_returns_a_grid():
    backbone = image_backbone("small_cnn", image_size=32)
    features = np.asarray(backbone(np.zeros((2, 48, 40, 3), "float32")))
    assert features.shape == (2, 8, 8, 128)  # stride 4
    assert np.all(features >= 0)  # ReLU features
    assert image_size_of(backbone) == 32
    # Rescaling to [0, 1]: the network reads x / 255.
    rescaling = backbone.get_layer("small_cnn").get_layer("preprocessing")
    np.testing.assert_allclose(np.asarray(rescaling(PIXELS)), PIXELS / 255.0, rtol=1e-6)


@pytest.mark.parametrize("name", ["MobileNetV2", "ResNet50", "DenseNet121", "EfficientNetB0"])
def test_preprocessing_affine_reproduces_preprocess_input(name):
    matrix, offset = application_preprocessing_affine(name)
    module = importlib.import_module(getattr(keras.applications, name).__module__)
    expected = np.asarray(module.preprocess_input(PIXELS.copy()))
    np.testing.assert_allclose(PIXELS @ matrix + offset, expected, rtol=1e-4, atol=1e-3)


def test_keras_applications_backbone_with_random_weights_builds_and_runs():
    backbone = image_backbone("MobileNetV2", image_size=32, weights=None, trainable=False)
    features = np.asarray(backbone(np.full((1, 40, 40, 3), 128.0, "float32")))
    assert features.shape == (1, 1, 1, 1280) and np.all(np.isfinite(features))
    assert not backbone.get_layer("mobilenetv2_1.00_32").trainable
    assert backbone.trainable_weights == []
    # MobileNetV2 reads [-1, 1]: the fixed preprocessing layer maps 0 -> -1 and 255 -> 1.
    preprocessing = backbone.get_layer("preprocessing")
    ends = np.asarray(preprocessing(np.array([[[[0.0, 0.0, 0.0], [255.0, 255.0, 255.0]]]])))
    np.testing.assert_allclose(ends[0, 0], [[-1, -1, -1], [1, 1, 1]], atol=1e-5)


def test_bad_backbones_and_images():
    with pytest.raises(
        ValueError,
        match=r"`backbone` must be 'small_cnn' or the name of a keras.applications model .* Received: backbone='resnet'",
    ):
        image_backbone("resnet")
    with pytest.raises(
        ValueError, match=r"Received: backbone='mobilenet_v2'"
    ):  # a module, not a model
        image_backbone("mobilenet_v2")
    with pytest.raises(
        ValueError,
        match=r"`image_size` must be an integer >= 8 or a \(height, width\) pair of integers >= 8. Received: image_size=4",
    ):
        image_backbone("small_cnn", image_size=4)
    with pytest.raises(ValueError, match=r"Received: image_size=\(32, 4\)"):
        image_backbone("small_cnn", image_size=(32, 4))
    with pytest.raises(
        ValueError,
        match=r"`model` must resize to a square image; .* Received: model resizing to \(32, 96\)",
    ):
        image_size_of(image_backbone("small_cnn", image_size=(32, 96)))
    with pytest.raises(ValueError, match=r"no pre-trained weights. Received: weights='imagenet'"):
        image_backbone("small_cnn", weights="imagenet")
    with pytest.raises(
        ValueError,
        match=r"name 'image' .* expected shape=\(None, None, None, 3\), found shape=\(1, 16, 16, 4\)",
    ):
        image_backbone("small_cnn", image_size=16)(np.zeros((1, 16, 16, 4), "float32"))
    with pytest.raises(
        ValueError, match=r"`model` must contain an image backbone .* Received: model='other'"
    ):
        image_size_of(keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)], name="other"))


def test_non_square_size_keeps_the_aspect_ratio_into_the_grid():
    backbone = image_backbone("small_cnn", image_size=(32, 96))
    assert image_shape_of(backbone) == (32, 96)
    # A 32 x 96 strip is not squashed: an 8 x 24 grid, one cell per 4 x 4 pixels.
    strip = np.zeros((1, 32, 96, 3), "float32")
    strip[:, :, 64:] = 255.0  # the right third bright
    features = np.asarray(backbone(strip))
    assert features.shape == (1, 8, 24, 128)
    # Cells away from the edge read the pixels under them: the right third differs.
    assert not np.allclose(features[0, :, 4], features[0, :, 20])
    np.testing.assert_allclose(features[0, :, 4], features[0, :, 8], atol=1e-6)
    assert backbone_stride("small_cnn") == 4
