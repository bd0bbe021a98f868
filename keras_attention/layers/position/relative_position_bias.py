"""T5's learned relative position bias, one scalar per distance bucket and head."""

import math

import keras
from keras import ops

from keras_attention.ops.masks import relative_positions
from keras_attention.validation import check_bool
from keras_attention.validation import check_positive_int


def relative_position_buckets(
    query_length, key_length, num_buckets=32, max_distance=128, bidirectional=True, query_offset=0
):
    """The `(Tq, Tk)` int32 bucket of every query/key pair, as T5 assigns them.

    The distance `n = query position - key position` goes to a bucket of
    its own while `|n|` is below half the buckets of its side, and to
    logarithmically wider buckets up to `max_distance`; every larger
    distance shares the last bucket. `bidirectional=True` gives keys after
    the query (n < 0) the upper half of the buckets; `bidirectional=False`
    (causal attention) puts them all in bucket 0 with the query itself.
    The logarithm is taken in float32, as T5 does, so buckets match its
    checkpoints at the boundaries.

    Args:
        query_length: int or scalar tensor.
        key_length: int or scalar tensor.
        num_buckets: a positive int (even, and at least 4, when bidirectional).
        max_distance: a positive int, the distance from which all share a bucket.
        bidirectional: whether keys after the query get buckets of their own.
        query_offset: int or scalar tensor, the position of the first query.

    Example:

    >>> import numpy as np
    >>> from keras_attention.layers.position.relative_position_bias import relative_position_buckets
    >>> buckets = relative_position_buckets(1, 12, num_buckets=8, max_distance=16, query_offset=11)
    >>> np.asarray(buckets)[0].tolist()  # key 11 is the query itself
    [3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 1, 0]
    """
    _check_max_distance(num_buckets, max_distance, bidirectional)
    distance = relative_positions(query_length, key_length, query_offset)  # (Tq, Tk)
    buckets = ops.zeros_like(distance)
    if bidirectional:
        num_buckets //= 2
        buckets = buckets + ops.cast(distance < 0, "int32") * num_buckets
        distance = ops.abs(distance)
    else:
        distance = ops.maximum(distance, 0)
    max_exact = num_buckets // 2
    # log(n / max_exact) / log(max_distance / max_exact) spreads the rest.
    ratio = ops.cast(ops.maximum(distance, 1), "float32") / float(max_exact)
    spread = ops.log(ratio) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
    large = ops.minimum(max_exact + ops.cast(spread, "int32"), num_buckets - 1)
    return buckets + ops.where(distance < max_exact, distance, large)


def _check_max_distance(num_buckets, max_distance, bidirectional):
    """`max_distance` must lie beyond the exact buckets, or the log spread divides by <= 0."""
    exact = (num_buckets // 2 if bidirectional else num_buckets) // 2
    if max_distance <= exact:
        raise ValueError(
            f"`max_distance` must be larger than the {exact} distances that get a bucket each "
            f"(half the buckets of a side), or the wider buckets fold back onto those. "
            f"Received: max_distance={max_distance}, num_buckets={num_buckets}, "
            f"bidirectional={bidirectional}"
        )


@keras.saving.register_keras_serializable(package="keras_attention")
class RelativePositionBias(keras.layers.Layer):
    """T5's relative position bias: a learned scalar per distance bucket and head.

    Paper: Raffel et al., 2020, https://arxiv.org/abs/1910.10683

    Each query/key pair gets the bucket of its relative distance
    (`relative_position_buckets`: exact for short distances, logarithmic up
    to `max_distance`), and each head learns one number per bucket, added to
    the attention scores. The table has shape `(num_buckets, num_heads)`, as
    in T5 and keras-hub's T5, so their weights load as they are.

    Called on `(B, H, Tq, Tk)` scores, the layer returns the scores plus the
    bias (as `AlibiBias` and keras-hub do). `bias(query_length, key_length)`
    gives the `(1, H, Tq, Tk)` bias alone, to pass as `attention_bias=` to
    `MultiHeadAttention` or `GroupQueryAttention`; the table then gets its
    gradient through that layer.

    Args:
        num_heads: number of attention heads, a positive int.
        num_buckets: number of distance buckets, a positive int (even and at
            least 4 when `bidirectional`).
        max_distance: distance from which all pairs share the last bucket.
        bidirectional: True for encoders (keys before and after the query
            have their own buckets); False for causal decoders.
        embeddings_initializer: initializer of the `(num_buckets, num_heads)`
            table.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        attention_scores: `(B, num_heads, Tq, Tk)` scores before the softmax.
        query_offset: position of the first query (int or scalar tensor), for
            a step of cached decoding: the scores then span the whole cache.

    Returns:
        the scores plus the bias, in the compute dtype.

    Example:

    >>> import numpy as np
    >>> from keras_attention.layers.position.relative_position_bias import RelativePositionBias
    >>> from keras_attention.layers.attention.multi_head_attention import MultiHeadAttention
    >>> relative = RelativePositionBias(num_heads=2, num_buckets=8, max_distance=16)
    >>> bias = relative.bias(query_length=5, key_length=5)
    >>> tuple(bias.shape)
    (1, 2, 5, 5)
    >>> scores = np.zeros((3, 2, 5, 5), "float32")
    >>> bool(np.allclose(relative(scores), np.broadcast_to(bias, (3, 2, 5, 5))))
    True
    >>> layer = MultiHeadAttention(num_heads=2, key_dim=4)
    >>> x = np.random.rand(3, 5, 8).astype("float32")
    >>> tuple(layer(x, x, attention_bias=bias).shape)
    (3, 5, 8)
    """

    def __init__(
        self,
        num_heads,
        num_buckets=32,
        max_distance=128,
        bidirectional=True,
        embeddings_initializer="random_normal",
        **kwargs,
    ):
        """Check the arguments and keep them; the bias table is made in `build`."""
        super().__init__(**kwargs)
        check_positive_int("num_heads", num_heads)
        check_positive_int("num_buckets", num_buckets)
        check_positive_int("max_distance", max_distance)
        check_bool("bidirectional", bidirectional)
        smallest = 4 if bidirectional else 2
        if num_buckets < smallest or (bidirectional and num_buckets % 2):
            raise ValueError(
                f"`num_buckets` must be at least {smallest}"
                + (" and even, half for each side," if bidirectional else "")
                + f" with bidirectional={bidirectional}. Received: num_buckets={num_buckets}"
            )
        _check_max_distance(num_buckets, max_distance, bidirectional)
        self.num_heads = num_heads
        self.num_buckets = num_buckets
        self.max_distance = max_distance
        self.bidirectional = bidirectional
        self.embeddings_initializer = keras.initializers.get(embeddings_initializer)
        # The table does not depend on the input shape: created here, it is
        # there for `bias()` before any call.
        self.embeddings = self.add_weight(
            shape=(num_buckets, num_heads),
            initializer=self.embeddings_initializer,
            name="embeddings",
        )

    def call(self, attention_scores, query_offset=0):
        shape = tuple(attention_scores.shape)
        if len(shape) != 4 or shape[1] not in (None, self.num_heads):
            raise ValueError(
                "`attention_scores` must be (batch, num_heads, query_length, key_length) "
                f"with num_heads={self.num_heads}. Received: attention_scores.shape={shape}"
            )
        lengths = ops.shape(attention_scores)
        bias = self.bias(lengths[2], lengths[3], query_offset)  # (1, H, Tq, Tk)
        return ops.cast(attention_scores, self.compute_dtype) + bias

    def bias(self, query_length, key_length, query_offset=0):
        """The `(1, num_heads, query_length, key_length)` learned bias.

        Args:
            query_length: int or scalar tensor.
            key_length: int or scalar tensor.
            query_offset: int or scalar tensor, the position of the first
                query (the cache index when decoding one step at a time).

        Returns:
            a float tensor in the layer's compute dtype.
        """
        buckets = relative_position_buckets(
            query_length,
            key_length,
            num_buckets=self.num_buckets,
            max_distance=self.max_distance,
            bidirectional=self.bidirectional,
            query_offset=query_offset,
        )  # (Tq, Tk)
        table = ops.cast(self.embeddings, self.compute_dtype)
        values = ops.take(table, buckets, axis=0)  # (Tq, Tk, H)
        return ops.transpose(values, (2, 0, 1))[None]  # (1, H, Tq, Tk)

    def compute_output_shape(self, attention_scores_shape, query_offset_shape=None):
        return tuple(attention_scores_shape)

    def get_config(self):
        return {
            **super().get_config(),
            "num_heads": self.num_heads,
            "num_buckets": self.num_buckets,
            "max_distance": self.max_distance,
            "bidirectional": self.bidirectional,
            "embeddings_initializer": keras.initializers.serialize(self.embeddings_initializer),
        }
