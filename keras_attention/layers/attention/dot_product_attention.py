"""Multiplicative (Luong) attention: dot, general and scaled dot-product scores."""

import math

import keras
from keras import ops

from keras_attention.layers.attention.base_attention import BaseAttention
from keras_attention.layers.attention.base_attention import clone_initializer
from keras_attention.layers.attention.base_attention import project_queries
from keras_attention.layers.attention.score_modes import SCORE_MODES
from keras_attention.validation import check_bool
from keras_attention.validation import check_known_last_axes


@keras.saving.register_keras_serializable(package="keras_attention")
class DotProductAttention(BaseAttention):
    """Multiplicative attention of Luong et al.; a superset of `keras.layers.Attention`.

    The alignment score of a query `q` (size `Dq`) and a key `k` (size
    `Dk`) is, depending on `score_mode`:

    - `"dot"`: `q . k` (needs `Dq == Dk`);
    - `"scaled_dot"`: `q . k / sqrt(Dk)` (needs `Dq == Dk`), which keeps
      the scores of long vectors from saturating the softmax;
    - `"general"`: `q^T W k` with a learned `W` `(Dq, Dk)`, any sizes;
    - `"concat"`: `c * sum(tanh(q + k))` with a learned scalar `c`
      starting at 1 (needs `Dq == Dk`), keras' "concat" mode.

    With `use_scale=True` a learned scalar `s` (starting at 1) multiplies
    the scores (inside the tanh for "concat"), as in keras.

    The weights are `softmax(scores)` over the keys and the output is the
    weighted sum of the values. Keys default to the values.

    Code written for `keras.layers.Attention` runs unchanged: the same
    arguments (`use_scale`, `score_mode`, `dropout`, `seed`), the list
    inputs `[query, value(, key)]` with `mask=[query_mask, value_mask]`,
    `use_causal_mask`, queries with extra batch axes, and the weights
    "scale" and "concat_score_weight". Differences, on purpose: the default
    `score_mode` is "scaled_dot" (keras' default is "dot", no scaling); float
    masks are refused (see `keras_attention.ops.masks`); a query that sees
    no key gets 0 rather than an average of all values; the returned weights
    are those before dropout (what plots and alignments read; keras'
    `MultiHeadAttention` does the same), while the output uses the dropped
    ones; a query hidden by `query_mask` gets weights 0 as well as output 0;
    and a rank-4 value with a rank-3 query is an image feature map.

    Paper: [Luong et al., 2015](https://arxiv.org/abs/1508.04025); the
    scaling is that of [Vaswani et al., 2017](https://arxiv.org/abs/1706.03762).

    With `"general"` the one weight is `query_dense/kernel`, `W` `(Dq, Dk)`;
    `"dot"` and `"scaled_dot"` have no weights. `precompute_keys(key)`
    returns the key itself, so a decoder can treat this layer and
    `AdditiveAttention` alike.

    Args:
        score_mode: `"scaled_dot"`, `"dot"`, `"general"` or `"concat"`.
        dropout: fraction of the attention weights dropped in training.
        use_scale: learn a scalar that multiplies the scores.
        kernel_initializer: initializer of `W` (`"general"` only).
        seed: int seed of the dropout.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        query: `(B, Dq)` (one decoder step), `(B, Tq, Dq)` or
            `(B, ..., Tq, Dq)`; or keras' list `[query, value(, key)]`.
        value: `(B, Tv, Dv)` or an image feature map `(B, H, W, Dv)`
            (`(B, ..., Tv, Dv)` for a query of rank 4 or more).
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
        mask: keras' list `[query_mask, value_mask]`, an alternative to the
            two arguments above.
        use_causal_mask: query `i` sees the keys `0..i` only.

    Returns:
        output `(B, [Tq,] Dv)` and, with `return_attention_scores=True`, the
        weights `(B, [Tq,] Tv)` or `(B, [Tq,] H, W)`, in the compute dtype.
        A query that sees no key gets output 0 and weights 0.

    Example:

    >>> import numpy as np
    >>> from keras_attention.layers.attention.dot_product_attention import DotProductAttention
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

    keras' calling style, with keras' "concat" scores:

    >>> keras_style = DotProductAttention(use_scale=True, score_mode="concat")
    >>> query, value = np.random.rand(2, 3, 4), np.random.rand(2, 5, 4)
    >>> tuple(keras_style([query, value], mask=[None, np.ones((2, 5), bool)]).shape)
    (2, 3, 4)
    >>> [weight.name for weight in keras_style.weights]
    ['scale', 'concat_score_weight']
    """

    def __init__(
        self,
        score_mode="scaled_dot",
        dropout=0.0,
        kernel_initializer="glorot_uniform",
        seed=None,
        use_scale=False,
        **kwargs,
    ):
        super().__init__(dropout=dropout, seed=seed, **kwargs)
        if score_mode not in SCORE_MODES:
            # keras' wording first, for code that matches keras' message.
            raise ValueError(
                "Invalid value for argument score_mode. Expected one of {'dot', 'concat'} "
                "(as keras.layers.Attention) or 'scaled_dot', 'general'. "
                f"Received: score_mode={score_mode!r}"
            )
        check_bool("use_scale", use_scale)
        self.score_mode = score_mode
        self.use_scale = use_scale
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.scale = None
        self.concat_score_weight = None

    def build(self, query_shape=None, value_shape=None, key_shape=None, **kwargs):
        """Check the shapes and create the optional scale weight."""
        query_shape, value_shape, key_shape = self._unpack_shapes(
            query_shape, value_shape, key_shape, kwargs
        )
        super().build(query_shape, value_shape, key_shape)
        key_shape = value_shape if key_shape is None else key_shape
        query_dim, key_dim = query_shape[-1], key_shape[-1]
        check_known_last_axes(query=query_shape, key=key_shape)
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
        # keras.layers.Attention's weights, under its names and in its order.
        if self.use_scale:
            self.scale = self.add_weight(name="scale", shape=(), initializer="ones")
        if self.score_mode == "concat":
            self.concat_score_weight = self.add_weight(
                name="concat_score_weight", shape=(), initializer="ones"
            )

    def _projected_key_size(self):
        return getattr(self, "_key_dim", None)

    def _compute_scores(self, query, key):
        scale = None if self.scale is None else ops.cast(self.scale, query.dtype)
        if self.score_mode == "concat":
            summed = query[:, :, None, :] + key[:, None, :, :]  # (B, Tq, S, D)
            if scale is not None:
                summed = scale * summed
            weight = ops.cast(self.concat_score_weight, query.dtype)
            return weight * ops.sum(ops.tanh(summed), axis=-1)  # (B, Tq, S)
        if self.score_mode == "general":
            # q^T W k = (q W) . k: projecting the queries is cheaper than the keys.
            query = project_queries(self.query_dense, query)  # (B, Tq, Dk)
        elif self.score_mode == "scaled_dot":
            query = query * ops.cast(1.0 / math.sqrt(key.shape[-1]), query.dtype)
        scores = ops.matmul(query, ops.swapaxes(key, -2, -1))  # (B, Tq, S)
        return scores if scale is None else scores * scale

    def get_config(self):
        return {
            **super().get_config(),
            "score_mode": self.score_mode,
            "use_scale": self.use_scale,
            "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
        }
