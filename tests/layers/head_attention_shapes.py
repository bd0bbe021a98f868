"""Symbolic shapes that every multi-head attention layer with a cache gives back."""

import keras


def assert_symbolic_shapes_of_output_scores_and_cache(layer, heads, cache_heads, features):
    """Output, scores (S from the keys, or the cache length) and cache of symbolic inputs.

    Args:
        layer: an unbuilt attention layer with 4-wide heads.
        heads: its number of query heads.
        cache_heads: its number of key/value heads (the cache's head axis).
        features: the output's feature size for a 6-feature query.
    """
    query, value = keras.Input((4, 6)), keras.Input((9, 5))
    output, scores = layer(query, value, return_attention_scores=True)
    assert tuple(output.shape) == (None, 4, features)
    assert tuple(scores.shape) == (None, heads, 4, 9)  # S from the keys, not T
    assert layer.compute_output_shape((2, 4, 6), (2, 9, 5)) == (2, 4, features)
    cache = keras.Input((2, 12, cache_heads, 4))
    output, scores, new_cache = layer(
        query, value, cache=cache, cache_update_index=0, return_attention_scores=True
    )
    assert tuple(scores.shape) == (None, heads, 4, 12)
    assert tuple(new_cache.shape) == (None, 2, 12, cache_heads, 4)
