"""The results of an attention layer in their documented order: output[, scores][, cache]."""

import keras


def attention_results(output, scores, cache, return_scores):
    """`output`, `(output, scores)`, `(output, cache)` or `(output, scores, cache)`.

    Args:
        output: the attention output.
        scores: the attention weights; returned when `return_scores`.
        cache: the key/value cache, or None for a layer used without one.
        return_scores: whether the call asked for the scores.

    Example:

    >>> from keras_attention.layers.attention.attention_results import attention_results
    >>> attention_results("out", "scores", None, return_scores=True)
    ('out', 'scores')
    >>> attention_results("out", None, "cache", return_scores=False)
    ('out', 'cache')
    """
    results = [output]
    if return_scores:
        results.append(scores)
    if cache is not None:
        results.append(cache)
    return results[0] if len(results) == 1 else tuple(results)


def attention_output_spec(dtype, output_shape, scores_shape=None, cache_shape=None):
    """The `keras.KerasTensor` results of a call, for `compute_output_spec`.

    Args:
        dtype: dtype of every result (the layer's compute dtype).
        output_shape: shape of the output.
        scores_shape: shape of the scores, or None when not asked for.
        cache_shape: shape of the cache, or None without one.

    Example:

    >>> from keras_attention.layers.attention.attention_results import attention_output_spec
    >>> output, scores = attention_output_spec("float32", (2, 5, 8), (2, 4, 5, 5))
    >>> tuple(output.shape), tuple(scores.shape)
    ((2, 5, 8), (2, 4, 5, 5))
    """

    def spec(shape):
        return None if shape is None else keras.KerasTensor(tuple(shape), dtype=dtype)

    return attention_results(
        spec(output_shape), spec(scores_shape), spec(cache_shape), scores_shape is not None
    )
