"""Shape scenes: captions agree with the pixels, relations with the masks."""

import numpy as np
import pytest

from keras_attention.data.shape_masks import shape_mask
from keras_attention.tasks.captioning.builtin_scenes import generate_shape_scenes
from keras_attention.tasks.captioning.builtin_scenes import shape_scene_splits

RELATIONS = ("left of", "right of", "above", "below")


def colour_name_of(rgb):
    """Names a mean RGB colour by which channels are bright (independent of the palette)."""
    bright = tuple(bool(channel > 150) for channel in rgb)
    names = {
        (True, False, False): "red",
        (False, True, False): "green",
        (False, False, True): "blue",
        (True, True, False): "yellow",
        (True, True, True): "white",
    }
    return names.get(bright, f"unnamed {rgb}")


def shape_name_of(mask):
    """Names a filled shape by how much of its bounding box it fills, and how."""
    rows, cols = np.nonzero(mask)
    box = mask[rows.min() : rows.max() + 1, cols.min() : cols.max() + 1]
    fill = box.mean()
    widths = box.sum(axis=1)
    if fill > 0.93:
        return "square"
    if 0.65 < fill < 0.9 and max(widths[0], widths[-1]) < widths.max():
        return "circle"
    if 0.35 < fill < 0.65 and widths[0] < widths[-1] / 2:
        return "triangle"
    return f"unknown (fill {fill:.2f})"


def parse_caption(caption):
    """'a red circle left of a blue square' -> [('red', 'circle'), ...], ['left of']."""
    objects, relations = [], []
    rest = caption
    while True:
        article, colour, shape, *tail = rest.split(" ", 3)
        assert article == "a"
        objects.append((colour, shape))
        if not tail:
            return objects, relations
        relation = next(r for r in RELATIONS if tail[0].startswith(r + " a "))
        relations.append(relation)
        rest = tail[0][len(relation) + 1 :]


def centroid(mask):
    rows, cols = np.nonzero(mask)
    return rows.mean(), cols.mean()


def holds(relation, first, second):
    """Whether `first` is `relation` `second`, from (row, col) centroids."""
    drow, dcol = second[0] - first[0], second[1] - first[1]
    horizontal = abs(dcol) > abs(drow)
    return {
        "left of": horizontal and dcol > 0,
        "right of": horizontal and dcol < 0,
        "above": not horizontal and drow > 0,
        "below": not horizontal and drow < 0,
    }[relation]


def test_same_seed_gives_same_scenes_and_other_seed_does_not():
    first = generate_shape_scenes(6, image_size=48, seed=4)
    again = generate_shape_scenes(6, image_size=48, seed=4)
    other = generate_shape_scenes(6, image_size=48, seed=5)
    np.testing.assert_array_equal(first["images"], again["images"])
    assert first["captions"] == again["captions"]
    for scene, scene_again in zip(first["object_masks"], again["object_masks"]):
        for obj, obj_again in zip(scene, scene_again):
            np.testing.assert_array_equal(obj["mask"], obj_again["mask"])
            assert obj["word_index"] == obj_again["word_index"]
    assert not np.array_equal(first["images"], other["images"])


def test_shapes_and_types():
    scenes = generate_shape_scenes(5, image_size=40, seed=1)
    assert scenes["images"].shape == (5, 40, 40, 3)
    assert scenes["images"].dtype == np.uint8
    assert len(scenes["captions"]) == len(scenes["object_masks"]) == 5
    for objects in scenes["object_masks"]:
        assert len(objects) == 2
        for obj in objects:
            assert obj["mask"].shape == (40, 40) and obj["mask"].dtype == bool


@pytest.mark.parametrize("max_objects", [2, 3])
def test_caption_words_match_the_pixels_under_each_mask(max_objects):
    scenes = generate_shape_scenes(40, seed=7, max_objects=max_objects)
    counts = set()
    for image, caption, objects in zip(
        scenes["images"], scenes["captions"], scenes["object_masks"]
    ):
        words = caption.split()
        mentioned, _ = parse_caption(caption)
        assert len(mentioned) == len(objects)
        counts.add(len(objects))
        for (colour, shape), obj in zip(mentioned, objects):
            assert words[obj["word_index"]] == shape == obj["shape"]
            assert words[obj["word_index"] - 1] == colour == obj["color"]
            mean_rgb = image[obj["mask"]].mean(axis=0)
            assert colour_name_of(mean_rgb) == colour, caption
            assert shape_name_of(obj["mask"]) == shape, caption
    assert counts == set(range(2, max_objects + 1))


@pytest.mark.parametrize("max_objects", [2, 3])
def test_relation_words_agree_with_mask_centroids(max_objects):
    scenes = generate_shape_scenes(60, seed=3, max_objects=max_objects)
    for caption, objects in zip(scenes["captions"], scenes["object_masks"]):
        _, relations = parse_caption(caption)
        assert len(relations) == len(objects) - 1
        centroids = [centroid(obj["mask"]) for obj in objects]
        for index, relation in enumerate(relations):
            assert holds(relation, centroids[index], centroids[index + 1]), caption
        if len(objects) == 2:
            # Two objects: the left-most or top-most one is named first.
            assert relations[0] in ("left of", "above"), caption


def test_masks_are_disjoint_non_empty_and_background_differs():
    scenes = generate_shape_scenes(30, seed=11, max_objects=3)
    for image, objects in zip(scenes["images"], scenes["object_masks"]):
        masks = np.stack([obj["mask"] for obj in objects])
        assert masks.sum(axis=(1, 2)).min() >= 12 * 12 * 0.4
        assert masks.sum(axis=0).max() == 1
        background = image[~masks.any(axis=0)].astype(float)
        assert background.mean() < 80


def test_two_object_captions_cover_both_relations_and_all_words():
    captions = generate_shape_scenes(200, seed=0)["captions"]
    words = set(" ".join(captions).split())
    expected = {"a", "left", "of", "above", "red", "green", "blue", "yellow", "white"}
    assert expected | {"circle", "square", "triangle"} == words
    assert {len(caption.split()) for caption in captions} == {7, 8}


def test_splits_have_their_sizes_and_do_not_depend_on_each_other():
    splits = shape_scene_splits(5, 3, 2, image_size=32, seed=9)
    assert {name: len(split["captions"]) for name, split in splits.items()} == {
        "train": 5,
        "validation": 3,
        "test": 2,
    }
    resized = shape_scene_splits(5, 7, 4, image_size=32, seed=9)
    np.testing.assert_array_equal(splits["train"]["images"], resized["train"]["images"])
    train = {image.tobytes() for image in splits["train"]["images"]}
    assert not train & {image.tobytes() for image in splits["test"]["images"]}


def test_shape_mask_areas_follow_the_geometry():
    size, centre, side = 100, (64, 64), 128
    expected = {
        "square": size**2,
        "circle": np.pi * 50**2,
        "triangle": size**2 / 2,
        "diamond": size**2 / 2,
        "ring": np.pi * (50**2 - 27.5**2),
        # Two 100x(100/3) bars sharing their (100/3)^2 centre.
        "plus": 2 * size * size / 3 - (size / 3) ** 2,
    }
    for shape, area in expected.items():
        drawn = shape_mask(shape, centre, size, side).sum()
        assert abs(drawn - area) / area < 0.03, shape


def test_shape_mask_triangle_points_up():
    mask = shape_mask("triangle", (8, 8), 8, 16)
    widths = mask.sum(axis=1)[4:12]
    assert list(widths) == sorted(widths) and widths[0] < widths[-1]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"num_scenes": -1}, "num_scenes"),
        ({"num_scenes": 2, "image_size": 16}, "image_size"),
        ({"num_scenes": 2, "max_objects": 4}, "max_objects"),
        ({"num_scenes": 2, "seed": 1.5}, "seed"),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=f"Received: {message}="):
        generate_shape_scenes(**kwargs)


def test_bad_split_size_and_shape_are_named():
    with pytest.raises(ValueError, match="Received: num_validation=-2"):
        shape_scene_splits(2, -2, 1)
    with pytest.raises(ValueError, match="Received: shape='star'"):
        shape_mask("star", (4, 4), 4, 8)
    with pytest.raises(ValueError, match="Received: size=0"):
        shape_mask("square", (4, 4), 0, 8)
