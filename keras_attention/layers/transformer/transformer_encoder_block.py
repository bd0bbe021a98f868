"""The Transformer encoder block: self-attention and an MLP, each residual."""

import keras

from keras_attention.layers.transformer import transformer_block_common as common
from keras_attention.layers.transformer.stochastic_depth import StochasticDepth
from keras_attention.validation import check_rate


@keras.saving.register_keras_serializable(package="keras_attention")
class TransformerEncoderBlock(common.TransformerBlock):
    """Multi-head self-attention and a two-layer MLP with residuals and LayerNorm.

    Vaswani et al., "Attention Is All You Need" (https://arxiv.org/abs/1706.03762):

        x = norm(x + attention(x))      # norm_first=False (post-norm, the paper)
        x = norm(x + mlp(x))

    or, with `norm_first=True` (pre-norm, as in ViT and GPT-2):

        x = x + attention(norm(x))
        x = x + mlp(norm(x))

    The weights are created in the same order and shapes as
    `keras_hub.layers.TransformerEncoder`, so its weights can be copied in.

    Args:
        num_heads: number of attention heads.
        intermediate_dim: width of the MLP's hidden layer.
        dropout: dropout after attention and after the MLP, and on the
            attention weights.
        activation: activation of the MLP's hidden layer.
        norm_first: pre-norm when True, post-norm when False.
        normalize_first: keras-hub's name for `norm_first`; when given, it
            sets `norm_first` (both names are in `get_config`).
        layer_norm_epsilon: epsilon of the LayerNorms.
        key_dim: size of each head; defaults to `hidden_dim // num_heads`.
        stochastic_depth_rate: probability of dropping each residual branch
            per example while training (for small-data ViTs).
        kernel_initializer: initializer of the dense kernels.
        bias_initializer: initializer of the biases.
        implementation: attention kernel, see `ka.ops.dot_product_attention`.
        rotary_max_wavelength: if set, rotary positions in the attention.
        num_key_value_heads: None for multi-head attention (a
            `MultiHeadAttention` sublayer), or the number of key/value heads
            of grouped-query attention (a `GroupQueryAttention` sublayer with
            `num_heads` query heads of size `key_dim`); 1 is multi-query
            attention. It must divide `num_heads`.

    Call arguments:
        inputs: (batch, length, hidden_dim).
        padding_mask: optional (batch, length) bool, False at padding. The
            keras mask of `inputs` is used when it is not given.
        attention_mask: optional (batch, length, length) bool.
        return_attention_scores: also return the attention weights.
        training: whether dropout is active.
        attention_bias: optional float bias added to the scaled scores
            before the mask, broadcastable to (batch, num_heads, length,
            length): position biases such as `AlibiBias2D.bias(num_heads)`
            or `RelativePositionBias`'s.

    Returns:
        (batch, length, hidden_dim), and with `return_attention_scores=True`
        also the weights (batch, num_heads, length, length).

    Example:

    >>> import numpy as np
    >>> import keras_attention as ka
    >>> block = ka.layers.TransformerEncoderBlock(num_heads=2, intermediate_dim=32)
    >>> x = np.random.rand(2, 5, 16).astype("float32")
    >>> y, scores = block(x, return_attention_scores=True)
    >>> tuple(y.shape), tuple(scores.shape)
    ((2, 5, 16), (2, 2, 5, 5))

    Grouped-query attention: four query heads share two key/value heads, so
    the key projection makes 2 heads of size 16 // 4 = 4, while the scores
    keep one row per query head.

    >>> gqa = ka.layers.TransformerEncoderBlock(
    ...     num_heads=4, intermediate_dim=32, num_key_value_heads=2)
    >>> y, scores = gqa(x, return_attention_scores=True)
    >>> tuple(y.shape), tuple(scores.shape)
    ((2, 5, 16), (2, 4, 5, 5))
    >>> [tuple(w.shape) for w in gqa.weights if w.path.endswith("attention_layer/key/kernel")]
    [(16, 2, 4)]
    """

    def __init__(
        self,
        num_heads,
        intermediate_dim,
        dropout=0.0,
        activation="relu",
        norm_first=False,
        layer_norm_epsilon=1e-5,
        key_dim=None,
        stochastic_depth_rate=0.0,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        implementation="auto",
        rotary_max_wavelength=None,
        normalize_first=None,
        num_key_value_heads=None,
        **kwargs,
    ):
        """Check and keep the arguments; the sublayers are made in `build`."""
        super().__init__(
            num_heads=num_heads,
            intermediate_dim=intermediate_dim,
            dropout=dropout,
            activation=activation,
            norm_first=norm_first,
            layer_norm_epsilon=layer_norm_epsilon,
            key_dim=key_dim,
            kernel_initializer=kernel_initializer,
            bias_initializer=bias_initializer,
            implementation=implementation,
            rotary_max_wavelength=rotary_max_wavelength,
            normalize_first=normalize_first,
            num_key_value_heads=num_key_value_heads,
            **kwargs,
        )
        check_rate("stochastic_depth_rate", stochastic_depth_rate)
        self.stochastic_depth_rate = stochastic_depth_rate

    def build(self, inputs_shape):
        hidden_dim = common.hidden_dim_of(inputs_shape, "inputs")
        key_dim = common.key_dim_for(hidden_dim, self.num_heads, self.key_dim)
        self._self_attention_layer = self.attention_sublayer(
            "self_attention_layer", inputs_shape, inputs_shape, key_dim, rotary=True
        )
        self._self_attention_layer_norm = self.layer_norm("self_attention_layer_norm", inputs_shape)
        self._feedforward_layer_norm = self.layer_norm("feedforward_layer_norm", inputs_shape)
        self.build_feedforward(inputs_shape, hidden_dim)
        self._self_attention_dropout = self.dropout_layer("self_attention_dropout")
        self._feedforward_dropout = self.dropout_layer("feedforward_dropout")
        self._stochastic_depth = StochasticDepth(
            self.stochastic_depth_rate, dtype=self.dtype_policy
        )
        self.built = True

    def call(
        self,
        inputs,
        padding_mask=None,
        attention_mask=None,
        return_attention_scores=False,
        training=None,
        attention_bias=None,
    ):
        """Self-attention then feed-forward sub-block; see the class docstring."""
        if padding_mask is None:
            padding_mask = common.keras_mask_of(inputs)
        self_attention_mask = common.self_attention_mask(padding_mask, attention_mask)

        x, scores = self.self_attention_sub_block(
            inputs,
            training,
            return_attention_scores=return_attention_scores,
            attention_mask=self_attention_mask,
            attention_bias=attention_bias,
        )
        x, _ = self.residual_sub_block(
            x, self._feedforward_layer_norm, self.feedforward, self._feedforward_dropout, training
        )
        return (x, *scores) if return_attention_scores else x

    def drop_residual_branch(self, x, training):
        return self._stochastic_depth(x, training=training)

    def compute_mask(self, inputs, mask=None):
        return mask

    def compute_output_shape(self, inputs_shape):
        return inputs_shape

    def compute_output_spec(self, inputs, return_attention_scores=False, **kwargs):
        output = keras.KerasTensor(inputs.shape, dtype=self.compute_dtype)
        if not return_attention_scores:
            return output
        return output, self.scores_spec(inputs, inputs.shape[1])

    def get_config(self):
        return {**super().get_config(), "stochastic_depth_rate": self.stochastic_depth_rate}
