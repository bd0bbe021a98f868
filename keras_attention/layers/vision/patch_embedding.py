"""Split an image into non-overlapping patches and project each one linearly."""

import keras
from keras import ops

from keras_attention.validation import check_bool


def _patch_pair(patch_size):
    """`patch_size` as (rows, cols) of positive ints, or a ValueError."""
    if isinstance(patch_size, (tuple, list)):
        pair = tuple(patch_size)
    else:
        pair = (patch_size, patch_size)
    if len(pair) != 2 or any(
        isinstance(size, bool) or not isinstance(size, int) or size <= 0 for size in pair
    ):
        raise ValueError(
            "`patch_size` must be a positive integer or a pair of positive integers. "
            f"Received: patch_size={patch_size!r}"
        )
    return pair


def _clone(initializer):
    """A fresh copy, so that the layer's own initializer object is never shared."""
    return initializer.__class__.from_config(initializer.get_config())


@keras.saving.register_keras_serializable(package="keras_attention")
class PatchEmbedding(keras.layers.Layer):
    """Non-overlapping image patches, each flattened and linearly projected.

    The input stage of the Vision Transformer
    ([Dosovitskiy et al., 2021](https://arxiv.org/abs/2010.11929), "An image
    is worth 16x16 words"): an `(H, W)` image is cut into `(H/p) x (W/p)`
    patches of `p x p` pixels, and each patch (`p * p * C` values) is mapped
    to `hidden_dim` features by one shared linear map. This is a
    convolution with kernel = stride = patch size, which is how it runs.
    The patch grid is flattened row-major: token `i * (W/p) + j` is the
    patch in row `i`, column `j`.

    Args:
        patch_size: `p` or `(p_rows, p_cols)`, in pixels.
        hidden_dim: features per patch.
        use_bias: whether the projection adds a bias.
        kernel_initializer: initializer of the projection kernel.
        bias_initializer: initializer of the bias.
        flatten: return the tokens `(B, N, hidden_dim)` (default), or keep
            the grid `(B, H/p, W/p, hidden_dim)`.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        inputs: images `(B, H, W, C)` (channels last).

    Returns:
        `(B, N, hidden_dim)` with `N = (H/p_rows) * (W/p_cols)`, or the grid
        `(B, H/p_rows, W/p_cols, hidden_dim)` with `flatten=False`, in the
        compute dtype. A static `H` or `W` not divisible by the patch size
        raises a `ValueError`; an image size only known at run time is not
        checked, and the rows and columns past the last whole patch are
        then ignored.

    Example:

    >>> import numpy as np
    >>> from keras_attention.layers.vision.patch_embedding import PatchEmbedding
    >>> layer = PatchEmbedding(patch_size=4, hidden_dim=8)
    >>> tuple(layer(np.zeros((2, 8, 12, 3))).shape)
    (2, 6, 8)
    >>> layer.grid_size((2, 8, 12, 3))
    (2, 3)
    """

    def __init__(
        self,
        patch_size,
        hidden_dim,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        flatten=True,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self._patch_rows, self._patch_cols = _patch_pair(patch_size)
        if isinstance(hidden_dim, bool) or not isinstance(hidden_dim, int) or hidden_dim <= 0:
            raise ValueError(
                f"`hidden_dim` must be a positive integer. Received: hidden_dim={hidden_dim!r}"
            )
        self.patch_size = tuple(patch_size) if isinstance(patch_size, (tuple, list)) else patch_size
        self.hidden_dim = hidden_dim
        check_bool("use_bias", use_bias)
        check_bool("flatten", flatten)
        self.use_bias = use_bias
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.flatten = flatten

    def grid_size(self, image_shape):
        """The patch grid `(rows, cols)` of images shaped `image_shape`.

        Args:
            image_shape: `(B, H, W, C)` (or `(H, W, C)`); `H` and `W` may be
                ints, `None` or scalar tensors (e.g. from `keras.ops.shape`).

        Returns:
            `(H // p_rows, W // p_cols)`, `None` where a size is `None`.

        Example:

        >>> from keras_attention.layers.vision.patch_embedding import PatchEmbedding
        >>> PatchEmbedding(patch_size=(2, 4), hidden_dim=8).grid_size((1, 6, 8, 3))
        (3, 2)
        """
        height, width = tuple(image_shape)[-3:-1]
        sizes = (("height", height, self._patch_rows), ("width", width, self._patch_cols))
        for name, size, patch in sizes:
            if isinstance(size, int) and size % patch:
                raise ValueError(
                    f"The image {name} must be a multiple of the patch size. Received: "
                    f"image size (H, W)=({height}, {width}), patch_size={self.patch_size!r}"
                )
        rows = None if height is None else height // self._patch_rows
        cols = None if width is None else width // self._patch_cols
        return rows, cols

    def build(self, input_shape):
        if len(input_shape) != 4 or input_shape[-1] is None:
            raise ValueError(
                "`inputs` must be images (batch, height, width, channels) with known channels. "
                f"Received: inputs.shape={tuple(input_shape)}"
            )
        self.grid_size(input_shape)  # checks divisibility of static sizes
        self.projection = keras.layers.Conv2D(
            self.hidden_dim,
            kernel_size=(self._patch_rows, self._patch_cols),
            strides=(self._patch_rows, self._patch_cols),
            padding="valid",
            data_format="channels_last",
            use_bias=self.use_bias,
            kernel_initializer=_clone(self.kernel_initializer),
            bias_initializer=_clone(self.bias_initializer),
            dtype=self.dtype_policy,
            name="projection",
        )
        self.projection.build(input_shape)

    def call(self, inputs):
        self.grid_size(inputs.shape)
        patches = self.projection(inputs)  # (B, h, w, hidden_dim)
        if not self.flatten:
            return patches
        shape = ops.shape(patches)
        # (B, h, w, hidden_dim) -> (B, h * w, hidden_dim), row-major
        return ops.reshape(patches, (-1, shape[1] * shape[2], self.hidden_dim))

    def compute_output_shape(self, input_shape):
        rows, cols = self.grid_size(input_shape)
        if not self.flatten:
            return (input_shape[0], rows, cols, self.hidden_dim)
        tokens = None if rows is None or cols is None else rows * cols
        return (input_shape[0], tokens, self.hidden_dim)

    def get_config(self):
        return {
            **super().get_config(),
            "patch_size": self.patch_size,
            "hidden_dim": self.hidden_dim,
            "use_bias": self.use_bias,
            "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
            "bias_initializer": keras.initializers.serialize(self.bias_initializer),
            "flatten": self.flatten,
        }
