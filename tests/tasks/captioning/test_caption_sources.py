"""load_caption_dataset: built-in scenes, a captions.tsv folder, and tfds (mocked)."""

import collections

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_datasets as tfds
from image_element_spec import image_element_spec_ok

from keras_attention.data.skipped_items import SkippedItems
from keras_attention.tasks.captioning.builtin_scenes import shape_scene_splits
from keras_attention.tasks.captioning.sources import load_caption_dataset


def as_pairs(dataset):
    return [(image, caption.decode()) for image, caption in dataset.as_numpy_iterator()]


def image_caption_spec_ok(dataset, height, width):
    return image_element_spec_ok(dataset, height, width, tf.string)


def write_png(path, pixels):
    path.write_bytes(tf.io.encode_png(tf.constant(pixels, dtype=tf.uint8)).numpy())


@pytest.fixture
def caption_folder(tmp_path):
    """Three real 8x8 PNGs, one corrupt file, and a line naming a missing file."""
    rng = np.random.default_rng(0)
    pixels = {f"img{i}.png": rng.integers(0, 256, size=(8, 8, 3), dtype=np.uint8) for i in range(3)}
    for name, image in pixels.items():
        write_png(tmp_path / name, image)
    (tmp_path / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n not really a png")
    lines = [
        "img0.png\timg0 first caption",
        "img0.png\timg0 second caption",
        "img1.png#0\timg1 only caption",  # Flickr8k-style caption numbering
        "img2.png\timg2 caption a",
        "img2.png\timg2 caption b",
        "img2.png\timg2 caption c",
        "broken.png\ta corrupt image",
        "gone.png\ta missing image",
    ]
    (tmp_path / "captions.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path, pixels


def test_builtin_gives_the_generated_scenes_one_pair_each():
    splits = load_caption_dataset("builtin", 32, builtin_sizes=(4, 2, 3), seed=5)
    scenes = shape_scene_splits(4, 2, 3, image_size=32, seed=5)
    assert set(splits) == {"train", "validation", "test"}
    for name, dataset in splits.items():
        assert image_caption_spec_ok(dataset, 32, 32)
        pairs = as_pairs(dataset)
        assert [caption for _, caption in pairs] == scenes[name]["captions"]
        np.testing.assert_array_equal(
            np.stack([image for image, _ in pairs]), scenes[name]["images"].astype(np.float32)
        )


def test_builtin_resizes_to_a_rectangular_size():
    splits = load_caption_dataset("builtin", (48, 40), builtin_sizes=(2, 1, 1))
    assert image_caption_spec_ok(splits["train"], 48, 40)
    image, _ = next(iter(splits["train"]))
    assert 0.0 <= float(tf.reduce_min(image)) and float(tf.reduce_max(image)) <= 255.0


def test_folder_skips_missing_files_at_once_and_undecodable_ones_where_met(
    caption_folder, tmp_path_factory
):
    folder, pixels = caption_folder
    log = tmp_path_factory.mktemp("run") / "skipped_images.txt"
    skipped = SkippedItems("image files that cannot be decoded", log)
    with pytest.warns(UserWarning) as record:
        splits = load_caption_dataset(
            f"folder:{folder}",
            8,
            validation_fraction=0.34,
            test_fraction=0.33,
            seed=1,
            skipped=skipped,
        )
    # A missing file is found by listing; an image is only read where the pipeline meets it.
    messages = " ".join(str(warning.message) for warning in record)
    assert "gone.png" in messages and "broken.png" not in messages
    assert "Skipped 1 of 5" in messages
    assert len(record) == 1

    images_per_split = {}
    captions = []
    for name, dataset in splits.items():
        assert image_caption_spec_ok(dataset, 8, 8)
        pairs = as_pairs(dataset)
        captions += [caption for _, caption in pairs]
        images_per_split[name] = {caption.split()[0] for _, caption in pairs}
        for image, caption in pairs:
            # Every caption comes with its own image (same size: no resampling).
            expected = pixels[caption.split()[0] + ".png"].astype(np.float32)
            np.testing.assert_allclose(image, expected, atol=1e-3)
    assert len(captions) == 6
    assert collections.Counter(c.split()[0] for c in captions) == {"img0": 2, "img1": 1, "img2": 3}
    # Split by image: each image sits in exactly one split, with all its captions.
    in_splits = [image for images in images_per_split.values() for image in images]
    assert sorted(in_splits) == ["img0", "img1", "img2"]
    assert sum(splits.sizes.values()) == 4  # the listed images that exist
    assert skipped.take_count() == 1 and log.read_text() == f"{folder / 'broken.png'}\n"


def test_folder_split_is_deterministic_and_seeded(caption_folder):
    folder, _ = caption_folder

    def assignment(seed):
        with pytest.warns(UserWarning):
            splits = load_caption_dataset(
                f"folder:{folder}", 4, validation_fraction=0.34, test_fraction=0.33, seed=seed
            )
        return {name: sorted(c for _, c in as_pairs(ds)) for name, ds in splits.items()}

    first = assignment(0)
    assert assignment(0) == first
    assert any(assignment(seed) != first for seed in (1, 2, 3))


def test_folder_errors_name_the_dataset(tmp_path):
    with pytest.raises(ValueError, match="Received: dataset='folder:"):
        load_caption_dataset(f"folder:{tmp_path / 'absent'}", 8)
    with pytest.raises(ValueError, match="captions.tsv"):
        load_caption_dataset(f"folder:{tmp_path}", 8)
    (tmp_path / "captions.tsv").write_text("nothing.png\ta caption\n", encoding="utf-8")
    with pytest.warns(UserWarning, match="nothing.png"):
        with pytest.raises(ValueError, match="no readable image"):
            load_caption_dataset(f"folder:{tmp_path}", 8)


def test_folder_warns_about_lines_without_a_tab(tmp_path):
    write_png(tmp_path / "a.png", np.zeros((4, 4, 3), dtype=np.uint8))
    (tmp_path / "captions.tsv").write_text("a.png\tfine\nno tab here\n", encoding="utf-8")
    with pytest.warns(UserWarning, match="line 2"):
        splits = load_caption_dataset(f"folder:{tmp_path}", 4)
    assert sum(len(as_pairs(dataset)) for dataset in splits.values()) == 1


def test_coco_captions_gives_one_pair_per_caption():
    with tfds.testing.mock_data(num_examples=3):
        splits = load_caption_dataset("coco_captions", (24, 16))
        expected = sum(
            int(tf.size(example["captions"]["text"]))
            for example in tfds.load("coco_captions", split="val")
        )
        assert set(splits) == {"train", "validation", "test"}
        for dataset in splits.values():
            assert image_caption_spec_ok(dataset, 24, 16)
        assert len(as_pairs(splits["validation"])) == expected > 3


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"dataset": "flickr30k", "image_size": 8}, "Received: dataset='flickr30k'"),
        ({"dataset": 3, "image_size": 8}, "Received: dataset=3"),
        ({"dataset": "builtin", "image_size": 0}, "Received: image_size=0"),
        ({"dataset": "builtin", "image_size": (8,)}, r"Received: image_size=\(8,\)"),
        ({"dataset": "builtin", "image_size": 8, "test_fraction": 1.5}, "test_fraction=1.5"),
        (
            dict(dataset="builtin", image_size=8, validation_fraction=0.5, test_fraction=0.5),
            "validation_fraction=0.5, test_fraction=0.5",
        ),
        ({"dataset": "builtin", "image_size": 32, "builtin_sizes": (1, 2)}, "builtin_sizes="),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        load_caption_dataset(**kwargs)


def test_folder_splits_know_their_length_and_native_sizes(tmp_path):
    from keras_attention.tasks.captioning.sources import median_image_size

    rng = np.random.default_rng(0)
    lines = []
    for index in range(10):
        # Mostly wide strips, one tall outlier: the median is the strip.
        shape = (12, 36, 3) if index else (40, 8, 3)
        write_png(tmp_path / f"{index}.png", rng.integers(0, 256, size=shape, dtype=np.uint8))
        lines += [f"{index}.png\tone two three", f"{index}.png\tthree two one"]
    (tmp_path / "captions.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    splits = load_caption_dataset(f"folder:{tmp_path}", (16, 48), seed=0)
    # The captions of each split are known from the listing: a schedule counted in steps needs it.
    counts = [splits.elements[name] for name in ("train", "validation", "test")]
    assert counts == [16, 2, 2] and [len(as_pairs(splits[name])) for name in splits] == counts
    native = load_caption_dataset(f"folder:{tmp_path}", None, seed=0)
    assert native["train"].element_spec[0].shape.as_list() == [None, None, 3]
    assert median_image_size(native["train"]) == (12, 36)
    assert median_image_size(native["train"], limit=1) in {(12, 36), (40, 8)}
    with pytest.raises(ValueError, match=r"`limit` must be a positive int. Received: limit=0"):
        median_image_size(native["train"], limit=0)
