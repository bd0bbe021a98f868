"""An attention layer on masked embeddings of token ids, with a mean-pool of its output.

Checks that the embeddings' masks reach the layer and that the query mask
reaches the output: the pool averages only the unpadded queries.
"""

import keras
import numpy as np


def attend_embedded_ids(layer, query_ids, value_ids, query_dim, value_dim, vocabulary):
    """(output, pooled output, embedded query, embedded value), the last two in NumPy."""
    query_tokens = keras.Input((None,), dtype="int32")
    value_tokens = keras.Input((None,), dtype="int32")
    query_embedding = keras.layers.Embedding(vocabulary, query_dim, mask_zero=True)
    value_embedding = keras.layers.Embedding(vocabulary, value_dim, mask_zero=True)
    attended = layer(query_embedding(query_tokens), value_embedding(value_tokens))
    # Averages only unpadded queries when the query mask is passed on.
    pooled = keras.layers.GlobalAveragePooling1D()(attended)
    model = keras.Model([query_tokens, value_tokens], [attended, pooled])
    output, pooled_output = model([query_ids, value_ids])
    query = query_embedding.get_weights()[0][query_ids]
    value = value_embedding.get_weights()[0][value_ids]
    return output, pooled_output, query, value


def assert_output_and_pooled_output(output, pooled_output, expected, query_mask):
    """The output is `expected`; the pooled output is its mean over the real queries."""
    np.testing.assert_allclose(output, expected, atol=1e-5)
    expected_pooled = expected.sum(axis=1) / query_mask.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(pooled_output, expected_pooled, atol=1e-5)
