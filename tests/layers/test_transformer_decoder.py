"""TransformerDecoder: TransformerDecoderBlock under keras-hub's class name."""

import os

import keras
import keras_hub
import numpy as np
import pytest
from layer_harness import HARNESS_CHECKS
from layer_harness import LayerSpec
from layer_harness import run_check

from keras_attention.layers.transformer_decoder import TransformerDecoder

rng = np.random.default_rng(0)
X = rng.normal(size=(2, 6, 16)).astype("float32")
CONTEXT = rng.normal(size=(2, 5, 12)).astype("float32")
DECODER_PADDING = np.array([[1] * 6, [1] * 4 + [0] * 2], bool)
CONTEXT_PADDING = np.array([[1] * 5, [1] * 3 + [0] * 2], bool)

SPECS = [
    LayerSpec(
        "keras_hub_names",
        TransformerDecoder,
        {"num_heads": 2, "intermediate_dim": 8, "normalize_first": True},
        inputs=[X, CONTEXT],
        tensor_kwargs={
            "decoder_padding_mask": DECODER_PADDING,
            "encoder_padding_mask": CONTEXT_PADDING,
        },
    ),
]


@pytest.mark.parametrize("check", HARNESS_CHECKS)
@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_harness(spec, check, tmp_path):
    run_check(spec, check, tmp_path)


def _model(decoder_class, **kwargs):
    tokens, context = keras.Input((6, 16)), keras.Input((5, 12))
    hidden = decoder_class(num_heads=2, intermediate_dim=24, **kwargs)(tokens, context)
    outputs = decoder_class(num_heads=2, intermediate_dim=8, **kwargs)(hidden)
    return keras.Model([tokens, context], outputs)


@pytest.mark.parametrize("normalize_first", [False, True])
def test_loads_a_keras_hub_weights_file(normalize_first, tmp_path):
    theirs = _model(keras_hub.layers.TransformerDecoder, normalize_first=normalize_first)
    path = os.path.join(tmp_path, "decoder.weights.h5")
    theirs.save_weights(path)
    ours = _model(TransformerDecoder, normalize_first=normalize_first)
    ours.load_weights(path)
    np.testing.assert_allclose(ours([X, CONTEXT]), theirs([X, CONTEXT]), atol=1e-5)
