"""Built-in captioning data: coloured shapes in a scene, one caption per scene.

Each scene is a small RGB image with two (optionally three) coloured shapes on
a dark, lightly textured background. Its caption names every object by colour
and shape and says where it lies relative to the next one, for example
`"a red circle left of a blue square"`, so a captioner has to look at the right
place to get each word right. Everything is generated with NumPy from a seed,
so the data needs no download and is the same on every machine.

Caption rule (one deterministic caption per scene): the objects are ordered
left to right when their horizontal spread is at least their vertical spread,
top to bottom otherwise; each object is followed by its relation to the next
one ("left of", "right of", "above", "below"), taken from the larger of the
two centroid displacements. With two objects this gives "X left of Y" or
"X above Y". Placement keeps objects apart and keeps every relation clear (the
two displacements differ by a margin), so no caption is borderline.

Example:

>>> from keras_attention.tasks.captioning.builtin_scenes import generate_shape_scenes
>>> scenes = generate_shape_scenes(2, seed=3)
>>> scenes["images"].shape, scenes["images"].dtype
((2, 64, 64, 3), dtype('uint8'))
>>> words = scenes["captions"][0].split()
>>> first = scenes["object_masks"][0][0]
>>> words[first["word_index"]] == first["shape"]
True
"""

import numpy as np

from keras_attention.data.shape_masks import shape_mask

SCENE_COLORS = {
    "red": (220, 40, 40),
    "green": (40, 190, 60),
    "blue": (50, 90, 235),
    "yellow": (235, 215, 40),
    "white": (235, 235, 235),
}
SCENE_SHAPES = ("circle", "square", "triangle")
RELATION_WORDS = ("left of", "right of", "above", "below")

_MIN_IMAGE_SIZE = 32
# Object sizes as fractions of the image side: 12..20 px at 64 px.
_SIZE_RANGE = (12 / 64, 20 / 64)
# Smallest empty gap between object boxes and smallest difference between the
# horizontal and vertical centroid displacements, as fractions of the side.
_GAP = 2 / 64
_RELATION_MARGIN = 8 / 64
_BACKGROUND_MAX = 60
_BACKGROUND_NOISE = 5.0
_COLOR_JITTER = 20
_MAX_PLACEMENT_TRIES = 1000


def _check_int(name, value, minimum):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"`{name}` must be an integer >= {minimum}. Received: {name}={value!r}")
    if value < minimum:
        raise ValueError(f"`{name}` must be an integer >= {minimum}. Received: {name}={value!r}")


def _relation(source, target):
    """Relation word of `source` with respect to `target` from (row, col) centroids."""
    drow = target[0] - source[0]
    dcol = target[1] - source[1]
    if abs(dcol) > abs(drow):
        return "left of" if dcol > 0 else "right of"
    return "above" if drow > 0 else "below"


def _place_objects(rng, num_objects, image_size):
    """Draws sizes and positions until objects are apart and relations are clear."""
    min_size = int(round(_SIZE_RANGE[0] * image_size))
    max_size = int(round(_SIZE_RANGE[1] * image_size))
    gap = _GAP * image_size
    margin = _RELATION_MARGIN * image_size
    kinds = [(color, shape) for color in SCENE_COLORS for shape in SCENE_SHAPES]
    for _ in range(_MAX_PLACEMENT_TRIES):
        chosen = rng.choice(len(kinds), size=num_objects, replace=False)
        sizes = rng.integers(min_size, max_size + 1, size=num_objects)
        centers = [rng.uniform(size / 2 + 1, image_size - size / 2 - 1, size=2) for size in sizes]
        boxes_apart = all(
            max(
                abs(centers[i][0] - centers[j][0]) - (sizes[i] + sizes[j]) / 2,
                abs(centers[i][1] - centers[j][1]) - (sizes[i] + sizes[j]) / 2,
            )
            >= gap
            for i in range(num_objects)
            for j in range(i + 1, num_objects)
        )
        if not boxes_apart:
            continue
        masks = [
            shape_mask(kinds[k][1], centers[i], sizes[i], image_size) for i, k in enumerate(chosen)
        ]
        centroids = [np.argwhere(mask).mean(axis=0) for mask in masks]  # (row, col)
        relations_clear = all(
            abs(abs(centroids[i][0] - centroids[j][0]) - abs(centroids[i][1] - centroids[j][1]))
            >= margin
            for i in range(num_objects)
            for j in range(i + 1, num_objects)
        )
        if relations_clear:
            return [kinds[k] for k in chosen], masks, centroids
    raise RuntimeError(
        f"Could not place {num_objects} objects on a {image_size}x{image_size} image."
    )


def _generate(rng, num_scenes, image_size, max_objects):
    """`num_scenes` random scenes: their images, captions and per-object masks."""
    images = np.zeros((num_scenes, image_size, image_size, 3), dtype=np.uint8)
    captions = []
    object_masks = []
    for index in range(num_scenes):
        num_objects = int(rng.integers(2, max_objects + 1))
        kinds, masks, centroids = _place_objects(rng, num_objects, image_size)

        background = rng.integers(0, _BACKGROUND_MAX + 1, size=3).astype(np.float64)
        noise = rng.normal(0.0, _BACKGROUND_NOISE, size=(image_size, image_size, 1))
        canvas = background + noise  # (H, W, 3)
        for (color, _), mask in zip(kinds, masks):
            jitter = rng.integers(-_COLOR_JITTER, _COLOR_JITTER + 1, size=3)
            canvas[mask] = np.asarray(SCENE_COLORS[color]) + jitter + noise[mask]
        images[index] = np.clip(np.round(canvas), 0, 255).astype(np.uint8)

        rows = [c[0] for c in centroids]
        cols = [c[1] for c in centroids]
        by_columns = max(cols) - min(cols) >= max(rows) - min(rows)
        order = np.argsort(cols if by_columns else rows, kind="stable")

        words = []
        scene_objects = []
        for position, i in enumerate(order):
            color, shape = kinds[i]
            words += ["a", color, shape]
            scene_objects.append(
                {"mask": masks[i], "word_index": len(words) - 1, "color": color, "shape": shape}
            )
            if position + 1 < len(order):
                words += _relation(centroids[i], centroids[order[position + 1]]).split()
        captions.append(" ".join(words))
        object_masks.append(scene_objects)
    return {"images": images, "captions": captions, "object_masks": object_masks}


def _check_arguments(image_size, max_objects):
    _check_int("image_size", image_size, _MIN_IMAGE_SIZE)
    if isinstance(max_objects, bool) or max_objects not in (2, 3):
        raise ValueError(f"`max_objects` must be 2 or 3. Received: max_objects={max_objects!r}")


def generate_shape_scenes(num_scenes, image_size=64, seed=0, max_objects=2):
    """Generates captioned scenes of coloured shapes, deterministically from `seed`.

    Args:
        num_scenes: number of scenes.
        image_size: side of the square images in pixels (at least 32); shapes
            scale with it (12 to 20 px at 64).
        seed: integer seed; the same arguments always give the same scenes.
        max_objects: 2 or 3; each scene holds between 2 and `max_objects`
            objects, with distinct colour-shape pairs.

    Returns:
        dict with
        - "images": uint8 array `(num_scenes, image_size, image_size, 3)`;
        - "captions": list of `num_scenes` strings, words separated by one space;
        - "object_masks": list (one per scene, in caption order) of lists of
          dicts, one per object: "mask" bool `(image_size, image_size)`,
          "word_index" (index in `caption.split()` of the word naming the
          object's shape), "color" and "shape" (the words used).

    Example:

    >>> from keras_attention.tasks.captioning.builtin_scenes import generate_shape_scenes
    >>> scenes = generate_shape_scenes(3, image_size=32, seed=1)
    >>> len(scenes["captions"]), scenes["object_masks"][0][0]["mask"].shape
    (3, (32, 32))
    >>> scenes["captions"] == generate_shape_scenes(3, image_size=32, seed=1)["captions"]
    True
    """
    _check_int("num_scenes", num_scenes, 0)
    _check_arguments(image_size, max_objects)
    _check_int("seed", seed, 0)
    return _generate(np.random.default_rng(seed), num_scenes, image_size, max_objects)


def shape_scene_splits(num_train, num_validation, num_test, image_size=64, seed=0, max_objects=2):
    """Train, validation and test sets of shape scenes drawn from independent streams.

    Each split has its own random stream derived from `seed`, so a split does
    not change when the size of another one changes.

    Args:
        num_train: number of training scenes.
        num_validation: number of validation scenes.
        num_test: number of test scenes.
        image_size: side of the square images in pixels (at least 32).
        seed: integer seed.
        max_objects: 2 or 3 objects at most per scene.

    Returns:
        dict "train", "validation", "test" -> the dict `generate_shape_scenes`
        returns.

    Example:

    >>> from keras_attention.tasks.captioning.builtin_scenes import shape_scene_splits
    >>> splits = shape_scene_splits(4, 2, 2, image_size=32)
    >>> {name: len(split["captions"]) for name, split in splits.items()}
    {'train': 4, 'validation': 2, 'test': 2}
    """
    _check_int("num_train", num_train, 0)
    _check_int("num_validation", num_validation, 0)
    _check_int("num_test", num_test, 0)
    _check_arguments(image_size, max_objects)
    _check_int("seed", seed, 0)
    counts = {"train": num_train, "validation": num_validation, "test": num_test}
    return {
        name: _generate(np.random.default_rng([seed, stream]), count, image_size, max_objects)
        for stream, (name, count) in enumerate(counts.items())
    }
