"""Pool a sequence of tokens into one vector: the class token or the mean."""

import keras
from keras import ops

from keras_attention.validation import check_choice
from keras_attention.validation import check_rank

POOLING_MODES = ("token", "gap")


@keras.saving.register_keras_serializable(package="keras_attention")
class TokenPooling(keras.layers.Layer):
    """Reduces `(B, N, D)` tokens to `(B, D)`: the class token or their mean.

    `"token"` takes the token at index 0 (the `ClassToken` of the Vision
    Transformer, [Dosovitskiy et al., 2021](https://arxiv.org/abs/2010.11929));
    `"gap"` is global average pooling over the tokens, counting only those a
    mask marks as present.

    Args:
        pooling: `"token"` or `"gap"`.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        inputs: `(B, N, D)` tokens.
        mask: optional bool `(B, N)`, True for real tokens (taken from the
            Keras mask of `inputs` when not given); used by `"gap"` only.
            A sequence with no real token pools to 0.

    Returns:
        `(B, D)` in the compute dtype (the mean is accumulated in float32).

    Example:

    >>> import numpy as np
    >>> from keras_attention.layers.vision.token_pooling import TokenPooling
    >>> tokens = np.arange(6, dtype="float32").reshape(1, 3, 2)
    >>> np.asarray(TokenPooling("token")(tokens)).tolist()
    [[0.0, 1.0]]
    >>> mask = np.array([[True, True, False]])
    >>> np.asarray(TokenPooling("gap")(tokens, mask=mask)).tolist()
    [[1.0, 2.0]]
    """

    def __init__(self, pooling="token", **kwargs):
        super().__init__(**kwargs)
        check_choice("pooling", pooling, POOLING_MODES)
        self.pooling = pooling
        self.supports_masking = True

    def build(self, input_shape):
        check_rank("inputs", input_shape, 3, "tokens (batch, tokens, features)")

    def call(self, inputs, mask=None):
        if mask is not None and len(mask.shape) != 2:
            raise ValueError(
                f"`mask` must be (batch, tokens). Received: mask.shape={tuple(mask.shape)}"
            )
        if self.pooling == "token":
            return inputs[:, 0]
        values = ops.cast(inputs, "float32")
        if mask is None:
            return ops.cast(ops.mean(values, axis=1), self.compute_dtype)
        weights = ops.cast(mask, "float32")[:, :, None]  # (B, N, 1)
        total = ops.sum(values * weights, axis=1)  # (B, D)
        count = ops.maximum(ops.sum(weights, axis=1), 1.0)  # (B, 1); empty -> 0 / 1
        return ops.cast(total / count, self.compute_dtype)

    def compute_mask(self, inputs, mask=None):
        return None

    def compute_output_shape(self, input_shape):
        return (input_shape[0], input_shape[2])

    def get_config(self):
        return {**super().get_config(), "pooling": self.pooling}
