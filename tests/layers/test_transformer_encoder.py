"""TransformerEncoder: TransformerEncoderBlock under keras-hub's class name."""

import os

import keras
import keras_hub
import numpy as np
import pytest
from layer_harness import HARNESS_CHECKS
from layer_harness import LayerSpec
from layer_harness import run_check

from keras_attention.layers.transformer_encoder import TransformerEncoder

rng = np.random.default_rng(0)
X = rng.normal(size=(2, 6, 16)).astype("float32")
PADDING = np.array([[1] * 6, [1] * 4 + [0] * 2], bool)

SPECS = [
    LayerSpec(
        "keras_hub_names",
        TransformerEncoder,
        {"num_heads": 2, "intermediate_dim": 8, "normalize_first": True, "dropout": 0.1},
        inputs=[X],
        tensor_kwargs={"padding_mask": PADDING},
    ),
]


@pytest.mark.parametrize("check", HARNESS_CHECKS)
@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_harness(spec, check, tmp_path):
    run_check(spec, check, tmp_path)


def _model(encoder_class, **kwargs):
    inputs = keras.Input((6, 16))
    hidden = encoder_class(num_heads=2, intermediate_dim=24, **kwargs)(inputs)
    return keras.Model(inputs, encoder_class(num_heads=4, intermediate_dim=8, **kwargs)(hidden))


@pytest.mark.parametrize("normalize_first", [False, True])
def test_loads_a_keras_hub_weights_file(normalize_first, tmp_path):
    theirs = _model(keras_hub.layers.TransformerEncoder, normalize_first=normalize_first)
    path = os.path.join(tmp_path, "encoder.weights.h5")
    theirs.save_weights(path)
    ours = _model(TransformerEncoder, normalize_first=normalize_first)
    ours.load_weights(path)
    np.testing.assert_allclose(ours(X), theirs(X), atol=1e-5)
