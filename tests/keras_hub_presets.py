"""keras-hub ViT classifiers made by tests, to be written with `save_to_preset` and read back."""

import keras
import keras_hub
import numpy as np

SIZES = dict(patch_size=8, num_layers=2, num_heads=2, hidden_dim=16, mlp_dim=32)
CLASSES = 4


def keras_hub_vit_classifier(image_shape=(32, 24, 3), scale=1 / 127.5, offset=-1.0):
    """A `ViTImageClassifier` of `SIZES` with random weights (its head too), seed 0."""
    keras.utils.set_random_seed(0)
    backbone = keras_hub.models.ViTBackbone(image_shape=image_shape, **SIZES)
    converter = keras_hub.layers.ViTImageConverter(
        image_size=image_shape[:2], scale=scale, offset=offset
    )
    preprocessor = keras_hub.models.ViTImageClassifierPreprocessor(image_converter=converter)
    classifier = keras_hub.models.ViTImageClassifier(
        backbone=backbone, num_classes=CLASSES, preprocessor=preprocessor
    )
    rng = np.random.default_rng(0)
    for weight in classifier.weights:  # the head starts at 0: random values test every path
        weight.assign(rng.normal(0, 0.2, weight.shape).astype("float32") + np.asarray(weight))
    return classifier
