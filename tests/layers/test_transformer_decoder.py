"""TransformerDecoder: TransformerDecoderBlock under keras-hub's class name."""

import keras
import keras_hub
import pytest
from layer_harness import LayerSpec
from layer_harness import harness_test
from transformer_block_inputs import CONTEXT
from transformer_block_inputs import CONTEXT_PADDING
from transformer_block_inputs import PADDING
from transformer_block_inputs import X
from weights_file_transfer import assert_loads_weights_file_of

from keras_attention.layers.transformer_decoder import TransformerDecoder

SPECS = [
    LayerSpec(
        "keras_hub_names",
        TransformerDecoder,
        {"num_heads": 2, "intermediate_dim": 8, "normalize_first": True},
        inputs=[X, CONTEXT],
        tensor_kwargs={
            "decoder_padding_mask": PADDING,
            "encoder_padding_mask": CONTEXT_PADDING,
        },
    ),
]


test_harness = harness_test(SPECS)


def _model(decoder_class, **kwargs):
    tokens, context = keras.Input((6, 16)), keras.Input((5, 12))
    hidden = decoder_class(num_heads=2, intermediate_dim=24, **kwargs)(tokens, context)
    outputs = decoder_class(num_heads=2, intermediate_dim=8, **kwargs)(hidden)
    return keras.Model([tokens, context], outputs)


@pytest.mark.parametrize("normalize_first", [False, True])
def test_loads_a_keras_hub_weights_file(normalize_first, tmp_path):
    theirs = _model(keras_hub.layers.TransformerDecoder, normalize_first=normalize_first)
    ours = _model(TransformerDecoder, normalize_first=normalize_first)
    assert_loads_weights_file_of(theirs, ours, [X, CONTEXT], tmp_path)
