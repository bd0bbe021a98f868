"""How many decoded images a training shuffle may hold, whatever their size.

A shuffle buffer of 4,096 images is 50 MB of 32 x 32 pixels but 2.4 GB of
224 x 224 ones (float32): the buffer is cut to `SHUFFLE_BYTES`. The order of
a data set of files is drawn among their names before they are decoded
(every epoch anew), so a small buffer of pixels loses little.

Example:

>>> import tensorflow as tf
>>> from keras_attention.data.image_shuffle import image_shuffle_buffer
>>> large = tf.data.Dataset.from_tensors((tf.zeros((224, 224, 3)), 0))
>>> small = tf.data.Dataset.from_tensors((tf.zeros((32, 32, 3)), 0))
>>> image_shuffle_buffer(large, 32, 4096), image_shuffle_buffer(small, 32, 4096)
(445, 4096)
"""

import tensorflow as tf

# Decoded pixels a training shuffle may hold.
SHUFFLE_BYTES = 256 * 2**20
# The pixels counted for images of their own sizes, whose shape is unknown.
_UNKNOWN_IMAGE = 224 * 224 * 3


def image_shuffle_buffer(dataset, batch_size, most):
    """Elements a shuffle of `dataset` holds: `most`, or fewer within `SHUFFLE_BYTES`.

    Args:
        dataset: a `tf.data.Dataset` whose elements hold one image, its
            only tensor of rank 3 `(height, width, channels)`.
        batch_size: the batch the shuffle feeds: the buffer holds one at
            least, whatever its bytes.
        most: the buffer wanted where memory allows.

    Returns:
        int.
    """
    images = [spec for spec in tf.nest.flatten(dataset.element_spec) if spec.shape.rank == 3]
    if not images:
        return most
    image_spec = images[0]
    pixels = image_spec.shape.num_elements() or _UNKNOWN_IMAGE
    per_image = pixels * image_spec.dtype.size
    return max(batch_size, min(most, SHUFFLE_BYTES // per_image))
