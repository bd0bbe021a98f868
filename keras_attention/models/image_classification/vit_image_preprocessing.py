"""What the Vision Transformer does to pixels before its patches: resize, augment, rescale."""

import keras
import numpy as np
from keras import ops

# Pixels 0..255 are mapped to one of these ranges inside the model.
RESCALINGS = {
    "symmetric": (1.0 / 127.5, -1.0),  # [-1, 1], as big_vision's ViT
    "unit": (1.0 / 255.0, 0.0),  # [0, 1]
}


def rescaling_scale_offset(rescaling, channels):
    """`(scale, offset)` of `keras.layers.Rescaling` for a classifier's `rescaling` option.

    `rescaling` is a name of `RESCALINGS`, or `{"mean": [...], "std": [...]}`
    with one value per channel for pixels in 0..1, as Hugging Face image
    processors give them: a pixel `x` in 0..255 becomes `(x / 255 - mean) / std`.

    Example:

    >>> scale, offset = rescaling_scale_offset({"mean": [0.5] * 3, "std": [0.5] * 3}, 3)
    >>> [round(s * 255, 6) for s in scale], offset
    ([2.0, 2.0, 2.0], [-1.0, -1.0, -1.0])
    """
    if isinstance(rescaling, str) and rescaling in RESCALINGS:
        return RESCALINGS[rescaling]
    if isinstance(rescaling, dict) and set(rescaling) == {"mean", "std"}:
        mean, std = (list(rescaling[key]) for key in ("mean", "std"))
        if len(mean) == len(std) == channels and all(value > 0 for value in std):
            return [1.0 / (255.0 * s) for s in std], [-m / s for m, s in zip(mean, std)]
    raise ValueError(
        f"`rescaling` must be one of {tuple(RESCALINGS)} or a dict of per-channel 'mean' and "
        f"'std' ({channels} values each, std > 0). Received: rescaling={rescaling!r}"
    )


def image_size_pair(image_size, name="image_size"):
    """`image_size` (a side, or `(height, width)`) as a `(height, width)` pair of positive ints.

    Raises a ValueError naming the argument `name` otherwise.
    """
    if isinstance(image_size, (tuple, list)) and len(image_size) == 2:
        pair = tuple(image_size)
    else:
        pair = (image_size, image_size)
    for side in pair:
        if isinstance(side, bool) or not isinstance(side, (int, np.integer)) or side <= 0:
            raise ValueError(
                f"`{name}` must be a positive integer or a (height, width) pair of them. "
                f"Received: {name}={image_size!r}"
            )
    return int(pair[0]), int(pair[1])


@keras.saving.register_keras_serializable(package="keras_attention")
class TrainingAugmentation(keras.layers.Layer):
    """Applies image augmentation layers while training, and nothing otherwise.

    Keras' random preprocessing layers (`RandomFlip`, ...) augment whenever
    they are not told `training=False`, so a plain `model(images)` call
    would augment. This wrapper augments only under `training=True` (as in
    `fit`); any other call returns the images unchanged.

    Args:
        augmentation: list of Keras layers mapping `(B, H, W, C)` images
            to images of the same shape, applied in order.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        inputs: images `(B, H, W, C)`.
        training: augment only when True.

    Returns:
        images shaped like `inputs`.

    Example:

    >>> import keras
    >>> import numpy as np
    >>> from keras_attention.models import TrainingAugmentation
    >>> layer = TrainingAugmentation([keras.layers.RandomFlip("vertical")])
    >>> images = np.arange(4, dtype="float32").reshape(1, 2, 2, 1)
    >>> np.asarray(layer(images, training=True)).shape
    (1, 2, 2, 1)
    >>> np.asarray(layer(images))[0, :, :, 0].tolist()
    [[0.0, 1.0], [2.0, 3.0]]
    """

    def __init__(self, augmentation, **kwargs):
        super().__init__(**kwargs)
        if isinstance(augmentation, keras.layers.Layer):
            augmentation = [augmentation]
        if isinstance(augmentation, (str, bytes)) or not hasattr(augmentation, "__iter__"):
            augmentation = [augmentation]
        augmentation = list(augmentation)
        for layer in augmentation:
            if not isinstance(layer, keras.layers.Layer):
                raise ValueError(
                    "`augmentation` must be a list of Keras layers (e.g. keras.layers.RandomFlip). "
                    f"Received: augmentation containing {layer!r}"
                )
        self.augmentation = augmentation

    def build(self, input_shape):
        for layer in self.augmentation:
            if not layer.built:
                layer.build(input_shape)

    def call(self, inputs, training=None):
        if not training:
            return inputs
        for layer in self.augmentation:
            inputs = layer(inputs, training=True)
        return inputs

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {
            **super().get_config(),
            "augmentation": [
                keras.saving.serialize_keras_object(layer) for layer in self.augmentation
            ],
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["augmentation"] = [
            keras.saving.deserialize_keras_object(layer) for layer in config["augmentation"]
        ]
        return cls(**config)


@keras.saving.register_keras_serializable(package="keras_attention")
class ResizeToModelSize(keras.layers.Layer):
    """Bilinearly resizes images to the model's size, skipping images already that size.

    The check is on static shapes, made when the step is traced: batches of
    a fixed native size (as a training pipeline gives) pass through
    untouched, while images of unknown or other sizes (a serving signature
    of any size) are resized. A bilinear resize to the same size returns its
    input anyway, so both paths give the same numbers.

    Args:
        size: `(height, width)` to resize to.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        inputs: images `(B, H, W, C)`.

    Returns:
        images `(B, height, width, C)`.

    Example:

    >>> import numpy as np
    >>> from keras_attention.models.image_classification import vit_image_preprocessing
    >>> ResizeToModelSize = vit_image_preprocessing.ResizeToModelSize
    >>> layer = ResizeToModelSize((4, 6))
    >>> tuple(layer(np.zeros((2, 8, 8, 3), "float32")).shape)
    (2, 4, 6, 3)
    """

    def __init__(self, size, **kwargs):
        super().__init__(**kwargs)
        self.size = image_size_pair(size)

    def call(self, inputs):
        if tuple(inputs.shape[1:3]) == self.size:
            return inputs
        return ops.image.resize(inputs, self.size, interpolation="bilinear")

    def compute_output_shape(self, input_shape):
        return (input_shape[0], *self.size, input_shape[-1])

    def get_config(self):
        return {**super().get_config(), "size": self.size}
