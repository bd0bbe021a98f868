"""ALiBi: attention with linear biases instead of position embeddings."""

import math

import keras
from keras import ops

from keras_attention.ops.masks import relative_positions
from keras_attention.validation import check_finite_number
from keras_attention.validation import check_positive_int


def alibi_slopes(num_heads, alibi_bias_max=8):
    """The per-head slopes of ALiBi (Press et al., 2021), as Python floats.

    With `n = num_heads` a power of two, head `h` (from 0) gets
    `2 ** (-alibi_bias_max * (h + 1) / n)`. Otherwise the first `p` heads
    (`p` the largest power of two below `n`) get the slopes of `p` heads,
    and the remaining `n - p` heads the odd-numbered slopes of `2p` heads,
    which fall between them (the scheme of the paper's code).

    Args:
        num_heads: a positive int.
        alibi_bias_max: a positive number; the smallest slope is
            `2 ** -alibi_bias_max` for a power of two of heads.

    Returns:
        A list of `num_heads` floats, decreasing for a power of two.

    Example:

    >>> from keras_attention.layers.position.alibi_bias import alibi_slopes
    >>> alibi_slopes(4)
    [0.25, 0.0625, 0.015625, 0.00390625]
    >>> [round(s, 4) for s in alibi_slopes(3)]  # 2 heads, then one of 4
    [0.0625, 0.0039, 0.25]
    """
    check_positive_int("num_heads", num_heads)
    check_finite_number("alibi_bias_max", alibi_bias_max, positive=True)
    power = 2 ** int(math.floor(math.log2(num_heads)))
    slopes = [2.0 ** (-alibi_bias_max * (h + 1) / power) for h in range(power)]
    # Heads beyond the power of two take slopes 1, 3, 5, ... of 2 * power heads.
    extra = [2.0 ** (-alibi_bias_max * (2 * h + 1) / (2 * power)) for h in range(num_heads - power)]
    return slopes + extra


@keras.saving.register_keras_serializable(package="keras_attention")
class AlibiBias(keras.layers.Layer):
    """Adds ALiBi's linear distance penalty to attention scores (Press et al., 2021).

    Paper: https://arxiv.org/abs/2108.12409

    Instead of position embeddings, each head `h` penalises a key by its
    distance from the query, `-slope_h * distance`, with fixed slopes
    (`alibi_slopes`). A model trained on short inputs then runs on longer
    ones: the penalty extends to any distance, where a learned position
    table ends.

    Called on scores, the layer follows `keras_hub.layers.AlibiBias`: it takes
    `(B, H, Tq, Tk)` attention scores and returns them plus
    `slope_h * (j - (Tk - 1))` at key `j`, the same number for every query.
    That bias differs from `-slope_h * (i - j)` (query `i`) by a constant per
    query row, so softmax over the keys a causal query sees is the same.

    For the attention layers of this package, `bias(num_heads, query_length,
    key_length)` gives the `(1, H, Tq, Tk)` bias `-slope_h * |i - j|` to pass as
    `attention_bias=`; with a causal mask it is ALiBi exactly, and without one
    it penalises keys on either side alike.

    Args:
        alibi_bias_max: a positive number that sets the slopes, see
            `alibi_slopes`; 8 as in the paper and keras-hub.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        attention_scores: `(B, H, Tq, Tk)` scores before the softmax.

    Returns:
        the scores plus the bias, shaped like `attention_scores`, in the
        compute dtype.

    Example:

    >>> import numpy as np
    >>> from keras_attention.layers.position.alibi_bias import AlibiBias
    >>> from keras_attention.layers.attention.multi_head_attention import MultiHeadAttention
    >>> alibi = AlibiBias()
    >>> scores = np.zeros((1, 2, 1, 3), "float32")
    >>> np.asarray(alibi(scores))[0, :, 0].tolist()  # slopes 1/16 and 1/256
    [[-0.125, -0.0625, 0.0], [-0.0078125, -0.00390625, 0.0]]
    >>> bias = alibi.bias(num_heads=2, query_length=3, key_length=3)
    >>> np.asarray(bias)[0, 0].tolist()
    [[0.0, -0.0625, -0.125], [-0.0625, 0.0, -0.0625], [-0.125, -0.0625, 0.0]]
    >>> layer = MultiHeadAttention(num_heads=2, key_dim=4)
    >>> x = np.random.rand(1, 3, 8).astype("float32")
    >>> tuple(layer(x, x, use_causal_mask=True, attention_bias=bias).shape)
    (1, 3, 8)
    """

    def __init__(self, alibi_bias_max=8, **kwargs):
        super().__init__(**kwargs)
        check_finite_number("alibi_bias_max", alibi_bias_max, positive=True)
        self.alibi_bias_max = alibi_bias_max

    def build(self, attention_scores_shape):
        _check_scores_shape(attention_scores_shape)

    def call(self, attention_scores):
        _check_scores_shape(attention_scores.shape)
        num_heads = attention_scores.shape[1]
        key_length = ops.shape(attention_scores)[-1]
        slopes = self._slopes(num_heads)[:, None]  # (H, 1)
        # keras-hub's form: the distance from the last key, for every query.
        positions = ops.cast(ops.arange(key_length, dtype="int32") - (key_length - 1), "float32")
        bias = slopes * positions[None, :]  # (H, Tk)
        scores = ops.cast(attention_scores, self.compute_dtype)
        return scores + ops.cast(bias, self.compute_dtype)[None, :, None, :]

    def bias(self, num_heads, query_length, key_length, query_offset=0):
        """The `(1, num_heads, query_length, key_length)` bias `-slope_h * |i - j|`.

        Query `i` is at position `query_offset + i` and key `j` at `j`, so a
        step of cached decoding passes the cache index as `query_offset`
        and the cache length as `key_length`.

        Args:
            num_heads: a positive int, the heads of the attention layer.
            query_length: int or scalar tensor.
            key_length: int or scalar tensor.
            query_offset: int or scalar tensor, the position of the first query.

        Returns:
            a float tensor in the layer's compute dtype, to pass as
            `attention_bias=` to `MultiHeadAttention` or
            `GroupQueryAttention` (or as `bias=` to
            `keras_attention.ops.dot_product_attention`).
        """
        distance = ops.abs(relative_positions(query_length, key_length, query_offset))  # (Tq, Tk)
        slopes = self._slopes(num_heads)[:, None, None]  # (H, 1, 1)
        bias = slopes * ops.cast(-distance, "float32")[None]  # (H, Tq, Tk)
        return ops.cast(bias, self.compute_dtype)[None]  # (1, H, Tq, Tk)

    def _slopes(self, num_heads):
        if num_heads is None:
            raise ValueError(
                "AlibiBias needs a known number of heads (axis 1 of the scores). "
                "Received: num_heads=None"
            )
        return ops.convert_to_tensor(alibi_slopes(num_heads, self.alibi_bias_max), "float32")

    def compute_output_shape(self, attention_scores_shape):
        return tuple(attention_scores_shape)

    def get_config(self):
        return {**super().get_config(), "alibi_bias_max": self.alibi_bias_max}


def _check_scores_shape(shape):
    if len(shape) != 4:
        raise ValueError(
            "`attention_scores` must be (batch, num_heads, query_length, key_length). "
            f"Received: attention_scores.shape={tuple(shape)}"
        )
