"""Additive (Bahdanau) attention: score(q, k) = v^T tanh(W_q q + W_k k + b)."""

import keras
from keras import ops

from keras_attention.layers.attention.base_attention import BaseAttention
from keras_attention.layers.attention.base_attention import clone_initializer
from keras_attention.layers.attention.base_attention import project_queries
from keras_attention.validation import check_bool
from keras_attention.validation import check_positive_int


@keras.saving.register_keras_serializable(package="keras_attention")
class AdditiveAttention(BaseAttention):
    """Additive attention of Bahdanau et al., for any query and key sizes.

    The alignment score of a query `q` and a key `k` is a one-hidden-layer
    MLP, `e = v^T tanh(W_q q + W_k k + b)`, with `W_q` `(Dq, units)`,
    `W_k` `(Dk, units)`, `b` `(units,)` and `v` `(units,)` learned; the
    weights are `softmax(e)` over the keys and the output is the weighted
    sum of the values. Keys default to the values.

    Paper: [Bahdanau et al., 2015](https://arxiv.org/abs/1409.0473).

    The term `W_k k + b` depends on the keys only: a decoder attending to a
    fixed memory at every step computes it once with
    `precompute_keys(memory)` and passes it as `precomputed_keys=`.

    Weights, in `get_weights()` order: `query_dense/kernel` `(Dq, units)`,
    `key_dense/kernel` `(Dk, units)`, `key_dense/bias` `(units,)` (with
    `use_bias=True`), `score_dense/kernel` `(units, 1)` (the vector `v`).

    Args:
        units: size of the hidden layer of the score MLP.
        dropout: fraction of the attention weights dropped in training.
        use_bias: whether the score MLP has the bias `b`.
        kernel_initializer: initializer of `W_q`, `W_k` and `v`.
        bias_initializer: initializer of `b`.
        seed: int seed of the dropout.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments and returns: those of `BaseAttention` (queries of one
    step or a sequence, values of a sequence or a feature map, padding
    masks, `use_causal_mask`, ...). `precomputed_keys` is
    `precompute_keys(key)`, `W_k k + b` of shape `(B, Tv, units)` or
    `(B, H, W, units)`, used instead of recomputing it.

    Example:

    >>> import numpy as np
    >>> from keras_attention.layers.attention.additive_attention import AdditiveAttention
    >>> attention = AdditiveAttention(units=16)
    >>> decoder_state = np.random.rand(2, 32).astype("float32")  # one step
    >>> encoder_outputs = np.random.rand(2, 7, 24).astype("float32")
    >>> context, weights = attention(decoder_state, encoder_outputs,
    ...                              return_attention_scores=True)
    >>> tuple(context.shape), tuple(weights.shape)
    ((2, 24), (2, 7))
    >>> feature_map = np.random.rand(2, 3, 3, 24).astype("float32")
    >>> context, weights = attention(decoder_state, feature_map,
    ...                              return_attention_scores=True)
    >>> tuple(context.shape), tuple(weights.shape)
    ((2, 24), (2, 3, 3))
    """

    def __init__(
        self,
        units,
        dropout=0.0,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        seed=None,
        **kwargs,
    ):
        super().__init__(dropout=dropout, seed=seed, **kwargs)
        check_positive_int("units", units)
        check_bool("use_bias", use_bias)
        self.units = units
        self.use_bias = use_bias
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)

    def build(self, query_shape, value_shape, key_shape=None):
        """Build the base layer, then the additive scoring weights for the key shape."""
        super().build(query_shape, value_shape, key_shape)
        key_shape = value_shape if key_shape is None else key_shape
        for name, shape in (("query", query_shape), ("key", key_shape)):
            if shape[-1] is None:
                raise ValueError(
                    f"The last axis of `{name}` must be known to build the layer. "
                    f"Received: {name}_shape={tuple(shape)}"
                )
        self.query_dense = keras.layers.Dense(
            self.units,
            use_bias=False,
            kernel_initializer=clone_initializer(self.kernel_initializer),
            dtype=self.dtype_policy,
            name="query_dense",
        )
        self.query_dense.build(tuple(query_shape))
        self.key_dense = keras.layers.Dense(
            self.units,
            use_bias=self.use_bias,
            kernel_initializer=clone_initializer(self.kernel_initializer),
            bias_initializer=clone_initializer(self.bias_initializer),
            dtype=self.dtype_policy,
            name="key_dense",
        )
        self.key_dense.build(tuple(key_shape))
        self.score_dense = keras.layers.Dense(
            1,
            use_bias=False,
            kernel_initializer=clone_initializer(self.kernel_initializer),
            dtype=self.dtype_policy,
            name="score_dense",
        )
        self.score_dense.build((None, self.units))

    def _project_keys(self, key):
        return self.key_dense(key)  # (B, ..., units): W_k k + b

    def _projected_key_size(self):
        return self.units

    def _compute_scores(self, query, key):
        projected_query = project_queries(self.query_dense, query)  # (B, Tq, units)
        # (B, Tq, 1, units) + (B, 1, S, units) -> (B, Tq, S, units)
        hidden = ops.tanh(projected_query[:, :, None, :] + key[:, None, :, :])
        # v^T hidden as an einsum on the kernel, not `score_dense(hidden)`: see
        # `project_queries` for why Dense is avoided on rank > 2 inputs here.
        v = ops.cast(self.score_dense.kernel[:, 0], hidden.dtype)  # (units,)
        return ops.einsum("bqsu,u->bqs", hidden, v)  # (B, Tq, S)

    def get_config(self):
        return {
            **super().get_config(),
            "units": self.units,
            "use_bias": self.use_bias,
            "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
            "bias_initializer": keras.initializers.serialize(self.bias_initializer),
        }
