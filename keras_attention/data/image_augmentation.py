"""Training-time image augmentation applied in the `tf.data` pipeline.

Augmenting batches in the input pipeline rather than inside the model keeps
the model free of Keras' random affine layers, which XLA cannot compile (a
model holding them trains without `jit_compile`), and keeps the exported
model free of anything that could augment at inference: only the training
batches pass through `augment_batches`.

Kinds (`IMAGE_AUGMENTATIONS`):
- "none": images as they are.
- "geometric": small random shifts (up to 10% of each side), rotations (up
  to about 15 degrees) and zoom (-15%..+10%), edges repeated; no flips, so
  digits, letters and other glyphs keep their meaning.
- "flip": "geometric" plus random left-right flips, for natural images
  whose class does not depend on the side.

Example:

>>> import numpy as np
>>> import tensorflow as tf
>>> from keras_attention.data.image_augmentation import augment_batches
>>> images = tf.data.Dataset.from_tensor_slices(
...     (np.zeros((4, 8, 8, 3), "float32"), np.arange(4))).batch(2)
>>> batch, labels = next(iter(augment_batches(images, "geometric", seed=0)))
>>> tuple(batch.shape), labels.numpy().tolist()
((2, 8, 8, 3), [0, 1])
"""

import keras
import tensorflow as tf

IMAGE_AUGMENTATIONS = ("none", "geometric", "flip")
# Largest shift as a fraction of the side, rotation as a fraction of a full
# turn (0.04 * 360 = 14.4 degrees), and zoom range (negative zooms in).
MAX_SHIFT = 0.1
MAX_ROTATION = 0.04
ZOOM_RANGE = (-0.15, 0.1)


def image_augmentation_layers(kind, seed=None):
    """The Keras preprocessing layers of one augmentation kind.

    Args:
        kind: one of `IMAGE_AUGMENTATIONS`.
        seed: seed of the random layers (None: unseeded).

    Returns:
        list of Keras layers, applied in order, mapping `(B, H, W, C)`
        images to images of the same shape; empty for "none".

    Example:

    >>> from keras_attention.data.image_augmentation import image_augmentation_layers
    >>> [type(layer).__name__ for layer in image_augmentation_layers("geometric", seed=0)]
    ['RandomTranslation', 'RandomRotation', 'RandomZoom']
    """
    if kind not in IMAGE_AUGMENTATIONS:
        raise ValueError(f"`kind` must be one of {IMAGE_AUGMENTATIONS}. Received: kind={kind!r}")
    if kind == "none":
        return []

    def layer_seed(offset):
        return None if seed is None else seed + offset

    layers = [
        keras.layers.RandomTranslation(
            MAX_SHIFT, MAX_SHIFT, fill_mode="nearest", seed=layer_seed(0)
        ),
        keras.layers.RandomRotation(MAX_ROTATION, fill_mode="nearest", seed=layer_seed(1)),
        keras.layers.RandomZoom(ZOOM_RANGE, fill_mode="nearest", seed=layer_seed(2)),
    ]
    if kind == "flip":
        layers.append(keras.layers.RandomFlip("horizontal", seed=layer_seed(3)))
    return layers


def augment_batches(dataset, kind, seed=None):
    """Augments every batch of `(images, labels)` of a batched dataset.

    Use it on the training batches only: validation and test batches, and
    anything the model sees at inference, stay as they are.

    Args:
        dataset: batched `tf.data.Dataset` of `(images (B, H, W, C) float32
            in 0..255, labels)`.
        kind: one of `IMAGE_AUGMENTATIONS`.
        seed: seed of the random layers.

    Returns:
        the dataset with its images augmented (a new draw at every epoch);
        `dataset` itself for "none". Pixel values stay in 0..255.

    Example:

    >>> import numpy as np
    >>> import tensorflow as tf
    >>> from keras_attention.data.image_augmentation import augment_batches
    >>> pairs = tf.data.Dataset.from_tensor_slices((np.zeros((2, 4, 4, 3), "float32"), [0, 1]))
    >>> augment_batches(pairs.batch(2), "none") is not None
    True
    """
    layers = image_augmentation_layers(kind, seed)
    if not layers:
        return dataset

    def augment(images, labels):
        for layer in layers:
            images = layer(images, training=True)
        return images, labels

    return dataset.map(augment, num_parallel_calls=tf.data.AUTOTUNE)
