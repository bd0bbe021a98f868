"""Whether a dataset's elements are (float32 RGB image of a given size, one scalar)."""

import tensorflow as tf


def image_element_spec_ok(dataset, height, width, second_dtype):
    """(height, width, 3) float32 images, each with a scalar of `second_dtype`."""
    image, second = dataset.element_spec
    return (
        image.dtype == tf.float32
        and image.shape.as_list() == [height, width, 3]
        and second.dtype == second_dtype
        and second.shape.rank == 0
    )
