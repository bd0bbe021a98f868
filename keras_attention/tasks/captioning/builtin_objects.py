"""The objects of the built-in caption scenes, to measure where a captioner looks.

`load_caption_dataset("builtin", ...)` gives images and captions only; the
same scenes with their object masks come from `shape_scene_splits` with
the same sizes, seed and side.

Example:

>>> from keras_attention.tasks.captioning.builtin_objects import builtin_test_objects
>>> objects = builtin_test_objects((32, 32), (2, 1, 3), seed=0)
>>> len(objects), sorted(objects[0][0])
(3, ['color', 'mask', 'shape', 'word_index'])
"""

from keras_attention.tasks.captioning.builtin_scenes import shape_scene_splits


def builtin_test_objects(image_size, builtin_sizes, seed):
    """The objects of each built-in test scene, in caption order, with their masks.

    Scenes are drawn at the image size when it is square and at least 32
    pixels, else at 64 pixels, as `load_caption_dataset` draws them.

    Args:
        image_size: `(height, width)` the scenes were loaded at.
        builtin_sizes: `(num_train, num_validation, num_test)` scenes.
        seed: the scenes' seed.

    Returns:
        a list per test scene of object dicts ("shape", "mask", ...), as
        `attention_on_objects.attention_on_objects_summary` takes them.
    """
    height, width = image_size
    side = height if height == width and height >= 32 else 64
    scenes = shape_scene_splits(*builtin_sizes, image_size=side, seed=seed)
    return scenes["test"]["object_masks"]
