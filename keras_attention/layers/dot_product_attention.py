"""Multiplicative (Luong) attention: dot, general and scaled dot-product scores."""

import math

import keras
from keras import ops

from keras_attention.layers.base_attention import BaseAttention
from keras_attention.layers.base_attention import clone_initializer
from keras_attention.layers.base_attention import project_queries

SCORE_MODES = ("scaled_dot", "dot", "general")


@keras.saving.register_keras_serializable(package="keras_attention")
class DotProductAttention(BaseAttention):
    """Multiplicative attention of Luong et al., with three score functions.

    The alignment score of a query `q` (size `Dq`) and a key `k` (size
    `Dk`) is, depending on `score_mode`:

    - `"dot"`: `q . k` (needs `Dq == Dk`);
    - `"scaled_dot"`: `q . k / sqrt(Dk)` (needs `Dq == Dk`), which keeps
      the scores of long vectors from saturating the softmax;
    - `"general"`: `q^T W k` with a learned `W` `(Dq, Dk)`, any sizes.

    The weights are `softmax(scores)` over the keys and the output is the
    weighted sum of the values. Keys default to the values.

    Paper: [Luong et al., 2015](https://arxiv.org/abs/1508.04025); the
    scaling is that of [Vaswani et al., 2017](https://arxiv.org/abs/1706.03762).

    With `"general"` the one weight is `query_dense/kernel`, `W` `(Dq, Dk)`;
    `"dot"` and `"scaled_dot"` have no weights. `precompute_keys(key)`
    returns the key itself, so a decoder can treat this layer and
    `AdditiveAttention` alike.

    Args:
        score_mode: `"scaled_dot"`, `"dot"` or `"general"`.
        dropout: fraction of the attention weights dropped in training.
        kernel_initializer: initializer of `W` (`"general"` only).
        seed: int seed of the dropout.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        query: `(B, Dq)` (one decoder step) or `(B, Tq, Dq)`.
        value: `(B, Tv, Dv)` or an image feature map `(B, H, W, Dv)`.
        key: optional, `(B, Tv, Dk)` or `(B, H, W, Dk)`; defaults to `value`.
        query_mask: optional bool `(B, Tq)` (`(B,)` for one step); False
            zeroes the output and the weights of that query. Defaults to
            the Keras mask of `query`, which is passed on to the output.
        value_mask: optional bool `(B, Tv)` or `(B, H, W)`; False hides that
            position. Defaults to the Keras mask of `value` (e.g. from
            `keras.layers.Embedding(mask_zero=True)`).
        return_attention_scores: also return the attention weights.
        training: whether dropout is active.
        precomputed_keys: optional `precompute_keys(key)`, used as the key.

    Returns:
        output `(B, [Tq,] Dv)` and, with `return_attention_scores=True`, the
        weights `(B, [Tq,] Tv)` or `(B, [Tq,] H, W)`, in the compute dtype.
        A query that sees no key gets output 0 and weights 0.

    Example:

    >>> import numpy as np
    >>> from keras_attention.layers.dot_product_attention import DotProductAttention
    >>> attention = DotProductAttention(score_mode="general")
    >>> decoder_states = np.random.rand(2, 5, 32).astype("float32")
    >>> encoder_outputs = np.random.rand(2, 7, 24).astype("float32")
    >>> mask = np.array([[True] * 7, [True] * 4 + [False] * 3])
    >>> context, weights = attention(decoder_states, encoder_outputs, value_mask=mask,
    ...                              return_attention_scores=True)
    >>> tuple(context.shape), tuple(weights.shape)
    ((2, 5, 24), (2, 5, 7))
    >>> float(np.asarray(weights)[1, :, 4:].max())
    0.0
    """

    def __init__(
        self,
        score_mode="scaled_dot",
        dropout=0.0,
        kernel_initializer="glorot_uniform",
        seed=None,
        **kwargs,
    ):
        super().__init__(dropout=dropout, seed=seed, **kwargs)
        if score_mode not in SCORE_MODES:
            raise ValueError(
                f"`score_mode` must be one of {SCORE_MODES}. Received: score_mode={score_mode!r}"
            )
        self.score_mode = score_mode
        self.kernel_initializer = keras.initializers.get(kernel_initializer)

    def build(self, query_shape, value_shape, key_shape=None):
        super().build(query_shape, value_shape, key_shape)
        key_shape = value_shape if key_shape is None else key_shape
        query_dim, key_dim = query_shape[-1], key_shape[-1]
        for name, shape in (("query", query_shape), ("key", key_shape)):
            if shape[-1] is None:
                raise ValueError(
                    f"The last axis of `{name}` must be known to build the layer. "
                    f"Received: {name}_shape={tuple(shape)}"
                )
        if self.score_mode != "general" and query_dim != key_dim:
            raise ValueError(
                f'score_mode="{self.score_mode}" compares queries and keys of the same size '
                '(last axis); use score_mode="general" for different sizes. '
                f"Received: query_shape={tuple(query_shape)}, key_shape={tuple(key_shape)}"
            )
        self._key_dim = key_dim
        if self.score_mode == "general":
            self.query_dense = keras.layers.Dense(
                key_dim,
                use_bias=False,
                kernel_initializer=clone_initializer(self.kernel_initializer),
                dtype=self.dtype_policy,
                name="query_dense",
            )
            self.query_dense.build(tuple(query_shape))

    def _projected_key_size(self):
        return getattr(self, "_key_dim", None)

    def _compute_scores(self, query, key):
        if self.score_mode == "general":
            # q^T W k = (q W) . k: projecting the queries is cheaper than the keys.
            query = project_queries(self.query_dense, query)  # (B, Tq, Dk)
        elif self.score_mode == "scaled_dot":
            query = query * ops.cast(1.0 / math.sqrt(key.shape[-1]), query.dtype)
        return ops.matmul(query, ops.swapaxes(key, 1, 2))  # (B, Tq, S)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "score_mode": self.score_mode,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
            }
        )
        return config
