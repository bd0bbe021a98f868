"""Patch merging: halve a feature map's height and width, double its channels.

Liu et al., "Swin Transformer: Hierarchical Vision Transformer using Shifted
Windows" (https://arxiv.org/abs/2103.14030), section 3.1.
"""

import keras
from keras import ops

from keras_attention.validation import check_finite_number
from keras_attention.validation import check_known_last_axes
from keras_attention.validation import check_rank


@keras.saving.register_keras_serializable(package="keras_attention")
class PatchMerging(keras.layers.Layer):
    """Concatenates each 2 x 2 group of neighbouring tokens and projects 4C to 2C.

    Between the stages of a Swin Transformer: `(B, H, W, C)` ->
    `(B, ceil(H/2), ceil(W/2), 4C)` (the features of the top-left,
    bottom-left, top-right and bottom-right token, in that order, as the
    paper's code) -> LayerNorm -> linear without bias -> `(B, ceil(H/2),
    ceil(W/2), 2C)`. An odd height or width is padded with one row or
    column of zeros at the bottom or right first.

    Args:
        layer_norm_epsilon: epsilon of the LayerNorm.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        inputs: `(B, H, W, C)` with known C.

    Returns:
        `(B, ceil(H/2), ceil(W/2), 2C)`.

    Example:

    >>> import numpy as np
    >>> from keras_attention.layers.vision.patch_merging import PatchMerging
    >>> tuple(PatchMerging()(np.zeros((2, 8, 5, 6))).shape)
    (2, 4, 3, 12)
    """

    def __init__(self, layer_norm_epsilon=1e-5, **kwargs):
        super().__init__(**kwargs)
        check_finite_number("layer_norm_epsilon", layer_norm_epsilon, positive=True)
        self.layer_norm_epsilon = layer_norm_epsilon

    def build(self, input_shape):
        input_shape = tuple(input_shape)
        check_rank("inputs", input_shape, 4, "a feature map (batch, height, width, channels)")
        check_known_last_axes(inputs=input_shape)
        channels = input_shape[-1]
        merged = tuple(input_shape[:1]) + (None, None, 4 * channels)
        self.norm = keras.layers.LayerNormalization(
            epsilon=self.layer_norm_epsilon, dtype=self.dtype_policy, name="norm"
        )
        self.norm.build(merged)
        self.reduction = keras.layers.Dense(
            2 * channels, use_bias=False, dtype=self.dtype_policy, name="reduction"
        )
        self.reduction.build(merged)

    def call(self, inputs):
        shape = ops.shape(inputs)
        # Zero rows and columns up to even sides; none when they already are.
        x = ops.pad(inputs, ((0, 0), (0, shape[1] % 2), (0, shape[2] % 2), (0, 0)))
        x = ops.concatenate(
            [x[:, 0::2, 0::2], x[:, 1::2, 0::2], x[:, 0::2, 1::2], x[:, 1::2, 1::2]], axis=-1
        )  # (B, ceil(H/2), ceil(W/2), 4C)
        return self.reduction(self.norm(x))

    def compute_output_shape(self, input_shape):
        def half(side):
            return None if side is None else (side + 1) // 2

        return (input_shape[0], half(input_shape[1]), half(input_shape[2]), 2 * input_shape[-1])

    def get_config(self):
        return {**super().get_config(), "layer_norm_epsilon": self.layer_norm_epsilon}
