"""A learned class token prepended to a sequence of tokens."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_attention")
class ClassToken(keras.layers.Layer):
    """Prepends one learned token to every sequence: `(B, N, D) -> (B, N + 1, D)`.

    The `[class]` token of BERT and of the Vision Transformer
    ([Dosovitskiy et al., 2021](https://arxiv.org/abs/2010.11929)): after
    the encoder its output (position 0) summarises the sequence, e.g. for
    classification with `TokenPooling("token")`.

    Args:
        initializer: initializer of the `(1, 1, D)` token; zeros by
            default, as in big_vision's ViT.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        inputs: `(B, N, D)` tokens.

    Returns:
        `(B, N + 1, D)` in the compute dtype, the learned token first. A Keras
        mask `(B, N)` on `inputs` becomes `(B, N + 1)` with the class token
        always visible.

    Example:

    >>> import numpy as np
    >>> from keras_attention.layers.vision.class_token import ClassToken
    >>> layer = ClassToken()
    >>> tokens = layer(np.ones((2, 3, 4)))
    >>> tuple(tokens.shape), np.asarray(tokens)[0, :, 0].tolist()
    ((2, 4, 4), [0.0, 1.0, 1.0, 1.0])
    """

    def __init__(self, initializer="zeros", **kwargs):
        super().__init__(**kwargs)
        self.initializer = keras.initializers.get(initializer)
        self.supports_masking = True

    def build(self, input_shape):
        if len(input_shape) != 3 or input_shape[-1] is None:
            raise ValueError(
                "`inputs` must be tokens (batch, tokens, features) with known features. "
                f"Received: inputs.shape={tuple(input_shape)}"
            )
        self.token = self.add_weight(
            name="token",
            shape=(1, 1, input_shape[-1]),
            initializer=self.initializer,
            trainable=True,
        )

    def call(self, inputs):
        batch_size = ops.shape(inputs)[0]
        token = ops.cast(self.token, self.compute_dtype)
        token = ops.broadcast_to(token, (batch_size, 1, self.token.shape[-1]))  # (B, 1, D)
        return ops.concatenate([token, inputs], axis=1)  # (B, N + 1, D)

    def compute_mask(self, inputs, mask=None):
        if mask is None:
            return None
        visible = ops.ones_like(mask[:, :1], dtype="bool")  # (B, 1)
        return ops.concatenate([visible, ops.cast(mask, "bool")], axis=1)  # (B, N + 1)

    def compute_output_shape(self, input_shape):
        tokens = None if input_shape[1] is None else input_shape[1] + 1
        return (input_shape[0], tokens, input_shape[2])

    def get_config(self):
        return {
            **super().get_config(),
            "initializer": keras.initializers.serialize(self.initializer),
        }
