"""The native image size of a caption source, and the objects of the built-in test scenes."""

import numpy as np
import tensorflow as tf

from keras_attention.tasks.captioning.builtin_objects import builtin_test_objects
from keras_attention.tasks.captioning.image_size import native_caption_image_size
from keras_attention.tasks.captioning.sources import load_caption_dataset


def test_builtin_scenes_and_a_folder_of_strips(tmp_path):
    assert native_caption_image_size("builtin") == ((48, 48), "built-in scenes drawn at")
    lines = []
    for index, (height, width) in enumerate([(16, 48), (16, 48), (20, 40), (16, 48), (12, 60)]):
        pixels = np.full((height, width, 3), 200, np.uint8)
        (tmp_path / f"{index}.png").write_bytes(tf.io.encode_png(pixels).numpy())
        lines.append(f"{index}.png\tone two")
    (tmp_path / "captions.tsv").write_text("\n".join(lines) + "\n")
    size, source = native_caption_image_size(f"folder:{tmp_path}", seed=0)
    train = load_caption_dataset(f"folder:{tmp_path}", None, seed=0)["train"]
    shapes = np.array([image.shape[:2] for image, _ in train.as_numpy_iterator()])
    assert size == tuple(int(side) for side in np.median(shapes, axis=0))
    assert source == "median training image"


def test_builtin_objects_belong_to_the_loaded_test_scenes():
    for image_size in ((32, 32), (48, 64)):
        objects = builtin_test_objects(image_size, (3, 2, 4), seed=1)
        test = load_caption_dataset("builtin", image_size, builtin_sizes=(3, 2, 4), seed=1)["test"]
        captions = [caption.decode() for _, caption in test.as_numpy_iterator()]
        assert len(objects) == len(captions) == 4
        for scene, caption in zip(objects, captions):
            assert [item["shape"] for item in scene] == [
                word for word in caption.split() if word in {item["shape"] for item in scene}
            ]
        # Drawn at the square side (at least 32 pixels), else at 64.
        side = 32 if image_size == (32, 32) else 64
        assert all(item["mask"].shape == (side, side) for scene in objects for item in scene)
