"""What the image classifiers (ViT, Swin) share before their patches: checks and pixel layers."""

import keras

from keras_attention.models.image_classification.vit_image_preprocessing import ResizeToModelSize
from keras_attention.models.image_classification.vit_image_preprocessing import TrainingAugmentation
from keras_attention.models.image_classification.vit_image_preprocessing import image_size_pair
from keras_attention.models.image_classification.vit_image_preprocessing import (
    rescaling_scale_offset,
)
from keras_attention.validation import check_positive_int


def check_pixel_classifier_arguments(
    image_size, patch_size, num_classes, channels, rescaling, class_names
):
    """Raises a ValueError naming the first bad argument; returns `(height, width)`.

    Example:

    >>> from keras_attention.models.image_classification.pixel_classifier_inputs import (
    ...     check_pixel_classifier_arguments)
    >>> check_pixel_classifier_arguments((32, 16), 4, 10, 3, "unit", None)
    (32, 16)
    """
    height, width = image_size_pair(image_size)
    for argument, value in (
        ("patch_size", patch_size),
        ("num_classes", num_classes),
        ("channels", channels),
    ):
        check_positive_int(argument, value)
    if height % patch_size or width % patch_size:
        raise ValueError(
            "`image_size` must be a multiple of `patch_size`. "
            f"Received: image_size={image_size}, patch_size={patch_size}"
        )
    rescaling_scale_offset(rescaling, channels)  # raises for a bad `rescaling`
    if class_names is not None and len(class_names) != num_classes:
        raise ValueError(
            "`class_names` must hold one name per class (`num_classes` names). "
            f"Received: len(class_names)={len(class_names)}, num_classes={num_classes}"
        )
    return height, width


def pixel_layers(image_size, augmentation, rescaling, channels=3):
    """The layers from raw pixels to the model's input: resize, augmentation, rescale.

    Args:
        image_size: `(height, width)` the model works at.
        augmentation: list of Keras layers applied only while training, or None.
        rescaling: a key of `RESCALINGS`, or per-channel "mean" and "std"
            (see `rescaling_scale_offset`).
        channels: the images' channels.

    Returns:
        `(resize, augmentation or None, rescale)`.

    Example:

    >>> from keras_attention.models.image_classification.pixel_classifier_inputs import pixel_layers
    >>> [None if layer is None else layer.name for layer in pixel_layers((8, 8), None, "unit")]
    ['resize', None, 'rescale']
    """
    scale, offset = rescaling_scale_offset(rescaling, channels)
    # Not `keras.layers.Resizing`: that layer's call defaults to training=True
    # and hands it on to every later layer, so a plain `model(images)` would
    # run dropout and augmentation.
    # float32 whatever the dtype policy: the pixels stay exact before rescaling.
    resize = ResizeToModelSize(tuple(image_size), dtype="float32", name="resize")
    augment = TrainingAugmentation(augmentation, name="augmentation") if augmentation else None
    return resize, augment, keras.layers.Rescaling(scale, offset=offset, name="rescale")


def augmentation_config(augmentation):
    """The `augmentation` config entry of a model whose layer is `augmentation` (or None)."""
    if augmentation is None:
        return None
    return [keras.saving.serialize_keras_object(layer) for layer in augmentation.augmentation]
