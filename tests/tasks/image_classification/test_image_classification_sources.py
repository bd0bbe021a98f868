"""load_image_classification_dataset: built-in shapes, class folders, tfds (mocked)."""

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_datasets as tfds
from image_element_spec import image_element_spec_ok

from keras_attention.tasks.image_classification.builtin_shapes import shape_classification_splits
from keras_attention.tasks.image_classification.sources import ImageClassificationData
from keras_attention.tasks.image_classification.sources import load_image_classification_dataset

CLASS_COLOURS = {"cat": (250, 0, 0), "dog": (0, 250, 0), "owl": (0, 0, 250)}


def image_label_spec_ok(dataset, height, width):
    return image_element_spec_ok(dataset, height, width, tf.int32)


@pytest.fixture
def class_folder(tmp_path):
    """Four 6x6 PNGs per class; each class has its own colour, each file its own shade."""
    for class_name, colour in CLASS_COLOURS.items():
        (tmp_path / class_name).mkdir()
        for index in range(4):
            pixels = np.full((6, 6, 3), colour, dtype=np.uint8)
            pixels[..., :] += np.uint8(index)  # shade 0..3 tells the files apart
            png = tf.io.encode_png(tf.constant(pixels)).numpy()
            (tmp_path / class_name / f"{index}.png").write_bytes(png)
    return tmp_path


def folder_contents(data):
    """split -> sorted list of (class name, dominant channel, shade) per image."""
    contents = {}
    for name, dataset in data.splits.items():
        rows = []
        for image, label in dataset.as_numpy_iterator():
            dominant = int(np.argmax(image.mean(axis=(0, 1))))
            shade = int(round(float(image.min())))
            rows.append((data.class_names[label], dominant, shade))
        contents[name] = sorted(rows)
    return contents


def test_builtin_gives_the_generated_images():
    data = load_image_classification_dataset("builtin", 32, builtin_sizes=(12, 6, 6), seed=2)
    arrays, class_names = shape_classification_splits(12, 6, 6, image_size=32, seed=2)
    assert isinstance(data, ImageClassificationData)
    assert data.class_names == class_names and data.num_classes == 12
    for name, dataset in data.splits.items():
        assert image_label_spec_ok(dataset, 32, 32)
        images, labels = zip(*dataset.as_numpy_iterator())
        np.testing.assert_array_equal(np.stack(images), arrays[name][0].astype(np.float32))
        np.testing.assert_array_equal(np.array(labels), arrays[name][1])


def test_builtin_resizes_to_a_rectangular_size():
    data = load_image_classification_dataset("builtin", (40, 20), builtin_sizes=(2, 1, 1))
    assert all(image_label_spec_ok(dataset, 40, 20) for dataset in data.splits.values())


def test_folder_labels_follow_sub_folders_and_split_is_fixed(class_folder):
    spec = f"folder:{class_folder}"
    kwargs = dict(validation_fraction=0.25, test_fraction=0.25, seed=7)
    data = load_image_classification_dataset(spec, (6, 6), **kwargs)
    assert data.class_names == ["cat", "dog", "owl"]
    for dataset in data.splits.values():
        assert image_label_spec_ok(dataset, 6, 6)
    contents = folder_contents(data)
    assert [len(contents[name]) for name in ("train", "validation", "test")] == [6, 3, 3]
    everything = sorted(row for rows in contents.values() for row in rows)
    # Every file appears once, with the label of its folder (cat red, dog green, owl blue).
    files = [
        (name, channel, shade) for channel, name in enumerate(CLASS_COLOURS) for shade in range(4)
    ]
    assert everything == sorted(files)
    again = folder_contents(load_image_classification_dataset(spec, (6, 6), **kwargs))
    assert again["validation"] == contents["validation"] and again["test"] == contents["test"]


def test_folder_without_held_out_images_keeps_everything_for_training(class_folder):
    data = load_image_classification_dataset(
        f"folder:{class_folder}", 6, validation_fraction=0.0, test_fraction=0.0
    )
    contents = folder_contents(data)
    assert [len(contents[name]) for name in ("train", "validation", "test")] == [12, 0, 0]


def test_folder_errors_name_the_path(tmp_path):
    (tmp_path / "loose.png").write_bytes(b"")
    with pytest.raises(ValueError, match=f"{tmp_path} has none"):
        load_image_classification_dataset(f"folder:{tmp_path}", 8)
    absent = tmp_path / "absent"
    with pytest.raises(ValueError, match=f"{absent} is not one"):
        load_image_classification_dataset(f"folder:{absent}", 8)


@pytest.mark.parametrize(
    "dataset, num_classes", [("cifar10", 10), ("cifar100", 100), ("imagenette", 10)]
)
def test_tfds_names_give_three_resized_splits(dataset, num_classes):
    with tfds.testing.mock_data(num_examples=2):
        data = load_image_classification_dataset(dataset, (20, 12))
        assert set(data.splits) == {"train", "validation", "test"}
        assert data.num_classes == num_classes
        for split in data.splits.values():
            assert image_label_spec_ok(split, 20, 12)
            for image, label in split.as_numpy_iterator():
                assert image.shape == (20, 12, 3) and 0 <= label < num_classes
                assert 0.0 <= image.min() and image.max() <= 255.0


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"dataset": "mnist", "image_size": 8}, "Received: dataset='mnist'"),
        ({"dataset": None, "image_size": 8}, "Received: dataset=None"),
        ({"dataset": "builtin", "image_size": -2}, "Received: image_size=-2"),
        ({"dataset": "builtin", "image_size": 8, "validation_fraction": -0.1}, "=-0.1"),
        ({"dataset": "cifar10", "image_size": 8, "validation_fraction": 0.0}, "=0.0"),
        ({"dataset": "builtin", "image_size": 32, "builtin_sizes": (4,)}, "builtin_sizes="),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        load_image_classification_dataset(**kwargs)


def test_native_image_size_is_the_median_of_the_folder(tmp_path):
    from keras_attention.tasks.image_classification.sources import native_image_size

    for class_name, sizes in {"a": [(12, 20), (12, 20)], "b": [(12, 20), (30, 10)]}.items():
        (tmp_path / class_name).mkdir()
        for index, (height, width) in enumerate(sizes):
            png = tf.io.encode_png(tf.zeros((height, width, 3), tf.uint8)).numpy()
            (tmp_path / class_name / f"{index}.png").write_bytes(png)
    (tmp_path / "a" / "notes.txt").write_text("not an image")
    assert native_image_size(f"folder:{tmp_path}") == (12, 20)
    # Files are taken round robin over the classes: one of each here.
    assert native_image_size(f"folder:{tmp_path}", max_files=2) == (12, 20)
    assert native_image_size("builtin") is None and native_image_size("cifar10") is None
    with pytest.raises(ValueError, match=r"`dataset` must name an existing folder"):
        native_image_size(f"folder:{tmp_path / 'absent'}")
    with pytest.raises(
        ValueError, match=r"`max_files` must be a positive integer. Received: max_files=0"
    ):
        native_image_size(f"folder:{tmp_path}", max_files=0)


def test_folder_keeps_a_non_square_size(class_folder):
    data = load_image_classification_dataset(f"folder:{class_folder}", (6, 12), seed=0)
    assert image_label_spec_ok(data.splits["train"], 6, 12)
