"""TransformerEncoder: TransformerEncoderBlock under keras-hub's class name."""

import keras
import keras_hub
import pytest
from layer_harness import LayerSpec
from layer_harness import harness_test
from transformer_block_inputs import PADDING
from transformer_block_inputs import X
from weights_file_transfer import assert_loads_weights_file_of

from keras_attention.layers.transformer.transformer_encoder import TransformerEncoder

SPECS = [
    LayerSpec(
        "keras_hub_names",
        TransformerEncoder,
        {"num_heads": 2, "intermediate_dim": 8, "normalize_first": True, "dropout": 0.1},
        inputs=[X],
        tensor_kwargs={"padding_mask": PADDING},
    ),
    LayerSpec(
        "multi_query",
        TransformerEncoder,
        {"num_heads": 2, "intermediate_dim": 8, "num_key_value_heads": 1},
        inputs=[X],
    ),
]


test_harness = harness_test(SPECS)


def _model(encoder_class, **kwargs):
    inputs = keras.Input((6, 16))
    hidden = encoder_class(num_heads=2, intermediate_dim=24, **kwargs)(inputs)
    return keras.Model(inputs, encoder_class(num_heads=4, intermediate_dim=8, **kwargs)(hidden))


@pytest.mark.parametrize("normalize_first", [False, True])
def test_loads_a_keras_hub_weights_file(normalize_first, tmp_path):
    theirs = _model(keras_hub.layers.TransformerEncoder, normalize_first=normalize_first)
    ours = _model(TransformerEncoder, normalize_first=normalize_first)
    assert_loads_weights_file_of(theirs, ours, X, tmp_path)
