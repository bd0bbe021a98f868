"""TransformerDecoder: TransformerDecoderBlock under keras-hub's class name."""

import keras
import keras_hub
import numpy as np
import pytest
from layer_harness import LayerSpec
from layer_harness import harness_test
from transformer_block_inputs import CONTEXT
from transformer_block_inputs import CONTEXT_PADDING
from transformer_block_inputs import PADDING
from transformer_block_inputs import X
from weights_file_transfer import assert_loads_weights_file_of

from keras_attention.layers.transformer.transformer_decoder import TransformerDecoder

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
    LayerSpec(
        "multi_query",
        TransformerDecoder,
        {"num_heads": 2, "intermediate_dim": 8, "num_key_value_heads": 1},
        inputs=[X, CONTEXT],
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


def test_multi_query_decoder_caches_one_head_and_decodes_as_the_full_pass():
    decoder = TransformerDecoder(num_heads=2, intermediate_dim=8, num_key_value_heads=1)
    full = np.asarray(decoder(decoder_sequence=X, encoder_sequence=CONTEXT))
    cache = np.zeros(decoder.cache_shape(2, 6), "float32")
    cross_cache = np.zeros(decoder.cache_shape(2, 5), "float32")
    assert cache.shape == (2, 2, 6, 1, 8) and cross_cache.shape == (2, 2, 5, 1, 8)
    steps = []
    for index in range(6):
        # keras-hub's protocol: the first step fills the cross-attention cache.
        fill = {"cross_attention_cache_update_index": 0} if index == 0 else {}
        step, cache, cross_cache = decoder(
            decoder_sequence=X[:, index : index + 1],
            encoder_sequence=CONTEXT,
            self_attention_cache=cache,
            self_attention_cache_update_index=index,
            cross_attention_cache=cross_cache,
            **fill,
        )
        steps.append(np.asarray(step))
    np.testing.assert_allclose(np.concatenate(steps, axis=1), full, atol=1e-5)
