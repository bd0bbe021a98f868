"""Training-time image augmentation applied in the `tf.data` pipeline.

Augmenting batches in the input pipeline rather than inside the model keeps
the model free of random layers, which XLA cannot compile, and keeps the
exported model free of anything that could augment at inference: only the
training batches pass through `augment_batches`.

Kinds (`IMAGE_AUGMENTATIONS`):
- "none": images as they are.
- "geometric": a small random shift (up to 10% of each side), rotation (up
  to 12 degrees) and zoom (0.9 to 1.1 times), drawn for each image on its
  own; no flips, so digits, letters and other glyphs keep their meaning.
- "flip": "geometric" plus random left-right flips, for natural images
  whose class does not depend on the side.

What the model is tested on are the images as they are, so the augmented
ones keep their look:

- one resampling per image, by the nearest pixel: every output pixel is a
  pixel of the image (or its background colour, below), so sharp edges stay
  sharp and no new pixel values appear (three bilinear resamplings in a row, as chained Keras
  `RandomTranslation`, `RandomRotation` and `RandomZoom` make, blur
  upscaled pixel art into grey ramps the plain images never have);
- what the shift or rotation uncovers is filled with the image's own
  background colour, the median of its border pixels (repeating the edge
  pixels smears a stroke that touches the edge across the image);
- `PLAIN_SHARE` of the images stay as they are, so the training batches
  always hold the plain images the model will be asked about;
- the draws come from `tf.data.Dataset.random(seed, rerandomize_each_iteration=True)`:
  different at every batch and epoch, yet the same for the same seed (a
  seeded stateful random op in a `tf.data` function draws the same numbers
  at every epoch).

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

import math

import tensorflow as tf

IMAGE_AUGMENTATIONS = ("none", "geometric", "flip")
# Largest shift as a fraction of each side, largest rotation in degrees, and the range
# of the zoom factor (above 1 enlarges the content).
MAX_SHIFT = 0.1
MAX_ROTATION_DEGREES = 12.0
ZOOM_RANGE = (0.9, 1.1)
# Share of the training images left as they are.
PLAIN_SHARE = 0.25


def background_colours(images):
    """The median colour of each image's border pixels: what lies around its content.

    Args:
        images: `(B, H, W, C)` float tensor.

    Returns:
        `(B, C)` tensor.

    Example:

    >>> import numpy as np
    >>> from keras_attention.data.image_augmentation import background_colours
    >>> images = np.full((1, 6, 6, 3), 200.0, "float32")
    >>> images[0, 2:4, :] = 10.0  # a stroke across the image touches two sides
    >>> background_colours(images).numpy().tolist()
    [[200.0, 200.0, 200.0]]
    """
    images = tf.convert_to_tensor(images)
    border = tf.concat(
        [
            images[:, 0],  # (B, W, C) top row
            images[:, -1],  # bottom row
            images[:, 1:-1, 0],  # (B, H - 2, C) left column
            images[:, 1:-1, -1],  # right column
        ],
        axis=1,
    )  # (B, P, C) with P = 2 W + 2 (H - 2) border pixels
    middle = tf.shape(border)[1] // 2
    return tf.sort(border, axis=1)[:, middle]  # (B, C)


def random_affine_transforms(seed, batch_size, height, width, flip=False):
    """One random shift, rotation and zoom per image, as projective transform rows.

    Each row `[a0, a1, a2, b0, b1, b2, 0, 0]` maps an output pixel `(x, y)`
    to the input point `(a0 x + a1 y + a2, b0 x + b1 y + b2)` it is read
    from (the convention of `ImageProjectiveTransformV3` and
    `keras.ops.image.affine_transform`). A `PLAIN_SHARE` of the rows is the
    identity.

    Args:
        seed: int tensor `(2,)`, the seed of the stateless draws.
        batch_size: number of transforms.
        height: image height in pixels.
        width: image width in pixels.
        flip: also mirror half of the images left to right.

    Returns:
        float32 tensor `(batch_size, 8)`.

    Example:

    >>> from keras_attention.data.image_augmentation import random_affine_transforms
    >>> random_affine_transforms([1, 2], 4, 32, 32).shape
    TensorShape([4, 8])
    """
    seeds = tf.random.experimental.stateless_split(tf.cast(seed, tf.int64), num=6)
    shape = (batch_size,)
    height, width = tf.cast(height, tf.float32), tf.cast(width, tf.float32)

    def uniform(index, low, high):
        return tf.random.stateless_uniform(shape, seeds[index], low, high)

    angle = uniform(0, -1.0, 1.0) * math.radians(MAX_ROTATION_DEGREES)
    zoom = uniform(1, *ZOOM_RANGE)
    shift_x = uniform(2, -MAX_SHIFT, MAX_SHIFT) * width
    shift_y = uniform(3, -MAX_SHIFT, MAX_SHIFT) * height
    mirror = tf.where(uniform(4, 0.0, 1.0) < 0.5, -1.0, 1.0) if flip else tf.ones(shape)
    plain = uniform(5, 0.0, 1.0) < PLAIN_SHARE
    # Output -> input: undo the shift, then the rotation and zoom about the centre.
    cos, sin = tf.cos(angle) / zoom, tf.sin(angle) / zoom
    a0, a1, b0, b1 = cos * mirror, -sin, sin * mirror, cos
    centre_x, centre_y = (width - 1.0) / 2.0, (height - 1.0) / 2.0
    a2 = centre_x - a0 * (centre_x + shift_x) - a1 * (centre_y + shift_y)
    b2 = centre_y - b0 * (centre_x + shift_x) - b1 * (centre_y + shift_y)
    zeros = tf.zeros(shape)
    transforms = tf.stack([a0, a1, a2, b0, b1, b2, zeros, zeros], axis=1)  # (B, 8)
    identity = tf.constant([1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
    return tf.where(plain[:, None], identity, transforms)


def augment_images(images, kind, seed):
    """One batch augmented: each image moved on its own, by the nearest pixel.

    Args:
        images: float32 `(B, H, W, C)`.
        kind: one of `IMAGE_AUGMENTATIONS`.
        seed: int tensor `(2,)`, the seed of the draws.

    Returns:
        float32 `(B, H, W, C)`; every pixel is one of the image's own
        pixels or its background colour.

    Example:

    >>> import numpy as np
    >>> from keras_attention.data.image_augmentation import augment_images
    >>> images = np.zeros((2, 8, 8, 1), "float32")
    >>> images[:, 3:5, 3:5] = 255.0
    >>> out = augment_images(images, "geometric", seed=[0, 1]).numpy()
    >>> sorted(set(out.ravel().tolist()))
    [0.0, 255.0]
    """
    check_augmentation_kind(kind)
    images = tf.convert_to_tensor(images, tf.float32)
    if kind == "none":
        return images
    shape = tf.shape(images)
    transforms = random_affine_transforms(seed, shape[0], shape[1], shape[2], kind == "flip")
    # Moving `images - background` with zeros as the fill, then adding the background
    # back, fills every uncovered pixel with its own image's background colour.
    background = background_colours(images)[:, None, None, :]  # (B, 1, 1, C)
    moved = tf.raw_ops.ImageProjectiveTransformV3(
        images=images - background,
        transforms=transforms,
        output_shape=shape[1:3],
        fill_value=0.0,
        interpolation="NEAREST",
        fill_mode="CONSTANT",
    )
    return moved + background


def check_augmentation_kind(kind):
    """Raises a `ValueError` unless `kind` is one of `IMAGE_AUGMENTATIONS`.

    Example:

    >>> from keras_attention.data.image_augmentation import check_augmentation_kind
    >>> check_augmentation_kind("flip")
    'flip'
    """
    if kind not in IMAGE_AUGMENTATIONS:
        raise ValueError(f"`kind` must be one of {IMAGE_AUGMENTATIONS}. Received: kind={kind!r}")
    return kind


def augment_batches(dataset, kind, seed=None):
    """Augments every batch of `(images, labels)` of a batched dataset.

    Use it on the training batches only: validation and test batches, and
    anything the model sees at inference, stay as they are.

    Args:
        dataset: batched `tf.data.Dataset` of `(images (B, H, W, C) float32
            in 0..255, labels)`.
        kind: one of `IMAGE_AUGMENTATIONS`.
        seed: seed of the draws (None: unseeded).

    Returns:
        the dataset with its images augmented (new draws at every batch and
        epoch); `dataset` itself for "none". Pixel values stay those of the
        images.

    Example:

    >>> import numpy as np
    >>> import tensorflow as tf
    >>> from keras_attention.data.image_augmentation import augment_batches
    >>> pairs = tf.data.Dataset.from_tensor_slices((np.zeros((2, 4, 4, 3), "float32"), [0, 1]))
    >>> augment_batches(pairs.batch(2), "none") is not None
    True
    """
    check_augmentation_kind(kind)
    if kind == "none":
        return dataset
    # One stateless seed (2,) per batch, new at every epoch.
    seeds = tf.data.Dataset.random(seed=seed, rerandomize_each_iteration=True).batch(2)

    def augment(batch, batch_seed):
        images, labels = batch
        return augment_images(images, kind, batch_seed), labels

    return tf.data.Dataset.zip(dataset, seeds).map(augment, num_parallel_calls=tf.data.AUTOTUNE)
