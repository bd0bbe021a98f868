"""Data sets made in code for measuring what the example models learn.

They differ on purpose from the package's built-in sets (square scenes of
circles and squares, shape classification, the Spanish-like corpus) and are
written to disk in the formats users give the example scripts:

- `make_glyph_caption_folder`: wide images of hand-drawn-like digits side by
  side, captioned with their names ("one three five"); `folder:PATH`.
- `make_object_scene_caption_folder`: non-square scenes of filled objects
  (triangle, star, cross, ring, diamond) captioned with their spatial
  relations ("star above ring left of cross"); `folder:PATH`.
- `make_glyph_classification_folder`: one sub-folder of glyph images per
  class; `folder:PATH`.
- `make_text_task_tsv`: `source<TAB>target` lines for formatting tasks where
  every character of the target matters (dates, numbers in words, title
  case, transliteration, detokenization); `tsv:PATH`.
- `make_compound_tsv`: English noun phrases, head first, -> one long
  German or Dutch compound word, its parts in the reverse order
  ("field of flower of sun" -> "Sonnenblumenfeld"); `tsv:PATH`.
- `make_number_word_tsv`: English number words -> the number's Dutch or
  Finnish name as one word ("seven hundred and sixty-nine" ->
  "zevenhonderdnegenenzestig"; `benchmarks.number_words`); `tsv:PATH`.

Captioning folders also hold `boxes.json`: file name -> list of
`[row0, col0, row1, col1]` boxes, one per object word of the caption in
caption order, rows `row0 <= r < row1` and columns `col0 <= c < col1` in
pixels of the written image, tight around the object's ink.

Every maker is deterministic in `seed`; the convention is `seed=0` for
training data and `seed=1` for the held-out set, written to another place.

Example:

>>> import tempfile
>>> from benchmarks.learning_datasets import make_glyph_caption_folder
>>> with tempfile.TemporaryDirectory() as directory:
...     info = make_glyph_caption_folder(directory, num_images=4, seed=0)
...     open(info["captions_path"]).readline().count("\\t")
1
"""

import json
import math
import os

import numpy as np
from PIL import Image

from benchmarks.compound_parts import COMPOUND_LANGUAGES
from benchmarks.number_words import LARGEST_NUMBER
from benchmarks.number_words import NUMBER_WORD_LANGUAGES
from benchmarks.number_words import number_word
from keras_attention.data.image_arguments import int_pair

CAPTIONS_FILE = "captions.tsv"
BOXES_FILE = "boxes.json"
DIGIT_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
OBJECT_NAMES = ("triangle", "star", "cross", "ring", "diamond")
TEXT_TASKS = ("dates", "numbers", "titlecase", "transliterate", "detokenize")

# Ink below this value does not count as part of a glyph's or object's box.
_INK_THRESHOLD = 0.1


def _ellipse(cx, cy, rx, ry, points=20, start=0.0, end=2 * math.pi):
    angles = np.linspace(start, end, points)
    return [(cx + rx * math.cos(a), cy + ry * math.sin(a)) for a in angles]


# Strokes in a unit box: x right, y down, both in [0, 1]; one polyline per stroke.
GLYPH_STROKES = {
    "0": [_ellipse(0.5, 0.5, 0.26, 0.4, points=24)],
    "1": [[(0.33, 0.27), (0.52, 0.1), (0.52, 0.9)], [(0.34, 0.9), (0.7, 0.9)]],
    "2": [
        [
            (0.25, 0.3),
            (0.33, 0.15),
            (0.5, 0.1),
            (0.67, 0.15),
            (0.74, 0.3),
            (0.68, 0.47),
            (0.25, 0.9),
            (0.77, 0.9),
        ]
    ],
    "3": [
        [
            (0.25, 0.14),
            (0.72, 0.12),
            (0.45, 0.44),
            (0.64, 0.5),
            (0.75, 0.68),
            (0.66, 0.86),
            (0.46, 0.91),
            (0.25, 0.83),
        ]
    ],
    "4": [[(0.62, 0.9), (0.62, 0.1), (0.2, 0.65), (0.8, 0.65)]],
    "5": [
        [
            (0.73, 0.1),
            (0.32, 0.1),
            (0.28, 0.46),
            (0.5, 0.4),
            (0.7, 0.5),
            (0.75, 0.7),
            (0.63, 0.88),
            (0.42, 0.91),
            (0.25, 0.82),
        ]
    ],
    "6": [
        [
            (0.7, 0.12),
            (0.47, 0.14),
            (0.32, 0.36),
            (0.27, 0.66),
            (0.37, 0.88),
            (0.55, 0.91),
            (0.71, 0.8),
            (0.72, 0.62),
            (0.58, 0.5),
            (0.4, 0.52),
            (0.28, 0.64),
        ]
    ],
    "7": [[(0.22, 0.1), (0.78, 0.1), (0.42, 0.9)], [(0.38, 0.5), (0.68, 0.5)]],
    "8": [_ellipse(0.5, 0.3, 0.19, 0.19, points=18), _ellipse(0.5, 0.7, 0.24, 0.2, points=20)],
    "9": [_ellipse(0.48, 0.33, 0.22, 0.22, points=20), [(0.7, 0.35), (0.66, 0.9)]],
    "A": [[(0.2, 0.9), (0.5, 0.1), (0.8, 0.9)], [(0.32, 0.6), (0.68, 0.6)]],
    "C": [_ellipse(0.52, 0.5, 0.3, 0.4, points=18, start=0.25 * math.pi, end=1.75 * math.pi)],
    "E": [[(0.75, 0.1), (0.28, 0.1), (0.28, 0.9), (0.75, 0.9)], [(0.28, 0.5), (0.65, 0.5)]],
    "F": [[(0.75, 0.1), (0.28, 0.1), (0.28, 0.9)], [(0.28, 0.5), (0.65, 0.5)]],
    "H": [[(0.25, 0.1), (0.25, 0.9)], [(0.75, 0.1), (0.75, 0.9)], [(0.25, 0.5), (0.75, 0.5)]],
    "K": [[(0.28, 0.1), (0.28, 0.9)], [(0.75, 0.1), (0.28, 0.55)], [(0.42, 0.45), (0.77, 0.9)]],
    "L": [[(0.3, 0.1), (0.3, 0.9), (0.75, 0.9)]],
    "M": [[(0.18, 0.9), (0.22, 0.1), (0.5, 0.6), (0.78, 0.1), (0.82, 0.9)]],
    "N": [[(0.25, 0.9), (0.25, 0.1), (0.75, 0.9), (0.75, 0.1)]],
    "T": [[(0.2, 0.1), (0.8, 0.1)], [(0.5, 0.1), (0.5, 0.9)]],
    "V": [[(0.2, 0.1), (0.5, 0.9), (0.8, 0.1)]],
    "X": [[(0.22, 0.1), (0.78, 0.9)], [(0.78, 0.1), (0.22, 0.9)]],
    "Y": [[(0.2, 0.1), (0.5, 0.5), (0.8, 0.1)], [(0.5, 0.5), (0.5, 0.9)]],
    "Z": [[(0.22, 0.1), (0.78, 0.1), (0.22, 0.9), (0.78, 0.9)]],
}


def _size_pair(size, name):
    pair = int_pair(size)
    if pair is None or min(pair) < 4:
        raise ValueError(
            f"`{name}` must be an int >= 4 or a (height, width) pair of ints >= 4. "
            f"Received: {name}={size!r}"
        )
    return pair


def _check_count(value, name, minimum=1):
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"`{name}` must be an int >= {minimum}. Received: {name}={value!r}")
    return int(value)


def _check_noise(noise):
    if not isinstance(noise, (int, float)) or not 0.0 <= noise <= 1.0:
        raise ValueError(f"`noise` must be a number in [0, 1]. Received: noise={noise!r}")
    return float(noise)


def _segments(char):
    """The glyph's strokes as an array of segments `(S, 2, 2)` of (x, y) end points."""
    key = char.upper() if isinstance(char, str) else char
    if key not in GLYPH_STROKES:
        raise ValueError(
            f"`char` must be one of {''.join(GLYPH_STROKES)!r} (letters in either case). "
            f"Received: char={char!r}"
        )
    pieces = []
    for stroke in GLYPH_STROKES[key]:
        points = np.asarray(stroke, dtype=np.float32)  # (P, 2)
        pieces.append(np.stack([points[:-1], points[1:]], axis=1))  # (P - 1, 2, 2)
    return np.concatenate(pieces, axis=0)


def render_glyph(char, size, rng, noise=0.0):
    """Draws one glyph as randomly distorted strokes of random width.

    The glyph's polylines (`GLYPH_STROKES`: the digits 0-9 and the letters
    A C E F H K L M N T V X Y Z) are rotated (up to 12 degrees), sheared,
    scaled and shifted at random, then drawn with anti-aliased thick lines:
    a pixel's ink falls off linearly with its distance to the nearest
    segment.

    Args:
        char: one character of `GLYPH_STROKES` (letters in either case).
        size: int or `(height, width)` of the image, each at least 4.
        rng: a `numpy.random.Generator`; the only source of randomness.
        noise: standard deviation of Gaussian noise added to the ink, in
            [0, 1]; the result is clipped to [0, 1].

    Returns:
        float32 array `(height, width)` of ink in [0, 1] (0 is blank).

    Example:

    >>> import numpy as np
    >>> from benchmarks.learning_datasets import render_glyph
    >>> ink = render_glyph("7", (32, 24), np.random.default_rng(0))
    >>> ink.shape, ink.dtype.name, bool(ink.max() == 1.0), bool(ink.min() == 0.0)
    ((32, 24), 'float32', True, True)
    """
    height, width = _size_pair(size, "size")
    noise = _check_noise(noise)
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            f"`rng` must be a numpy.random.Generator. Received: rng={type(rng).__name__}"
        )
    segments = _segments(char) - 0.5  # (S, 2, 2), centred on the unit box
    angle = math.radians(rng.uniform(-12.0, 12.0))
    shear = rng.uniform(-0.25, 0.25)
    scale_x, scale_y = rng.uniform(0.8, 1.0), rng.uniform(0.85, 1.0)
    rotation = np.array([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])
    linear = rotation @ np.array([[1.0, shear], [0.0, 1.0]]) @ np.diag([scale_x, scale_y])
    offset = rng.uniform(-0.06, 0.06, size=2) + 0.5
    points = segments @ linear.T.astype(np.float32) + offset  # (S, 2, 2) in the unit box
    points = points * np.array([width, height], dtype=np.float32)  # pixels
    stroke = rng.uniform(0.07, 0.13) * min(height, width)
    half_width = max(stroke, 1.2) / 2.0

    start, end = points[:, 0], points[:, 1]  # (S, 2)
    direction = end - start
    length2 = np.maximum((direction**2).sum(axis=-1), 1e-9)  # (S,)
    cols = np.arange(width, dtype=np.float32)[None, :, None] + 0.5  # (1, W, 1)
    rows = np.arange(height, dtype=np.float32)[:, None, None] + 0.5  # (H, 1, 1)
    from_x, from_y = cols - start[:, 0], rows - start[:, 1]  # (1, W, S), (H, 1, S)
    along = (from_x * direction[:, 0] + from_y * direction[:, 1]) / length2  # (H, W, S)
    along = np.clip(along, 0.0, 1.0)
    gap_x = from_x - along * direction[:, 0]  # (H, W, S)
    gap_y = from_y - along * direction[:, 1]
    distance = np.sqrt((gap_x**2 + gap_y**2).min(axis=-1))  # (H, W)
    ink = np.clip(half_width + 0.5 - distance, 0.0, 1.0)
    if noise > 0:
        ink = np.clip(ink + rng.normal(0.0, noise, size=ink.shape), 0.0, 1.0)
    return ink.astype(np.float32)


def _tight_box(mask, row0, col0):
    """`[row0, col0, row1, col1]` of the True cells of `mask`, offset to the canvas."""
    rows = np.flatnonzero(mask.any(axis=1))
    cols = np.flatnonzero(mask.any(axis=0))
    if rows.size == 0:
        return None
    return [
        int(row0 + rows[0]),
        int(col0 + cols[0]),
        int(row0 + rows[-1] + 1),
        int(col0 + cols[-1] + 1),
    ]


def _count_range(value, name):
    """An int or a `(min, max)` pair -> `(min, max)` of ints >= 1."""
    pair = int_pair(value)
    if pair is None or not 1 <= pair[0] <= pair[1]:
        raise ValueError(
            f"`{name}` must be an int >= 1 or a (min, max) pair with 1 <= min <= max. "
            f"Received: {name}={value!r}"
        )
    return pair


def _compose(ink_layers, colours, background, noise, rng):
    """Ink layers `(n, H, W)` and their RGB colours -> uint8 image `(H, W, 3)`."""
    image = np.broadcast_to(np.asarray(background, np.float32), ink_layers.shape[1:] + (3,))
    image = image.copy()
    for ink, colour in zip(ink_layers, colours):
        alpha = ink[..., None]
        image = image * (1.0 - alpha) + np.asarray(colour, np.float32) * alpha
    if noise > 0:
        image = image + rng.normal(0.0, noise * 255.0, size=image.shape)
    return np.clip(np.rint(image), 0, 255).astype(np.uint8)


def _ink_colours(count, colour, rng):
    """Background and `count` ink colours, far apart in brightness."""
    if not colour:
        return (235.0, 235.0, 235.0), [(20.0, 20.0, 20.0)] * count
    dark_background = rng.random() < 0.5
    background = rng.uniform(0, 70, size=3) if dark_background else rng.uniform(180, 255, size=3)
    inks = [
        rng.uniform(150, 255, size=3) if dark_background else rng.uniform(0, 110, size=3)
        for _ in range(count)
    ]
    return tuple(background), inks


def _write_caption_folder(directory, images, captions, boxes, **details):
    """Writes the images, captions.tsv and boxes.json; returns the folder's
    description: its paths, the number of images and `details`."""
    os.makedirs(directory, exist_ok=True)
    names = []
    for index, image in enumerate(images):
        name = f"{index:05d}.png"
        Image.fromarray(image, mode="RGB").save(os.path.join(directory, name))
        names.append(name)
    captions_path = os.path.join(directory, CAPTIONS_FILE)
    with open(captions_path, "w", encoding="utf-8") as handle:
        for name, caption in zip(names, captions):
            handle.write(f"{name}\t{caption}\n")
    boxes_path = os.path.join(directory, BOXES_FILE)
    with open(boxes_path, "w", encoding="utf-8") as handle:
        json.dump(dict(zip(names, boxes)), handle)
    return {
        "directory": directory,
        "captions_path": captions_path,
        "boxes_path": boxes_path,
        "num_images": len(images),
        **details,
    }


def make_glyph_caption_folder(
    directory,
    num_images=3000,
    height=32,
    width=96,
    glyphs_per_image=3,
    words=DIGIT_WORDS,
    seed=0,
    noise=0.0,
    colour=False,
    glyphs=None,
):
    """Writes a captioning folder of glyphs side by side named by their words.

    Each image holds `glyphs_per_image` glyphs from left to right, one per
    equal slot of the width, each at a random height (55-100% of the image)
    and jittered position; the caption is their words left to right. Glyph
    `i` is `glyphs[i]` (the digits by default) and is called `words[i]`.

    Args:
        directory: folder to write (created if missing).
        num_images: number of images.
        height: image height in pixels (>= 8).
        width: image width in pixels (>= 8).
        glyphs_per_image: int, or `(min, max)` for captions of varying length.
        words: the word of each glyph; at most as many as `glyphs`.
        seed: seed of everything drawn.
        noise: standard deviation of pixel noise, as a share of 255.
        colour: random ink and background colours per image (dark ink on a
            light grey background when False).
        glyphs: string of glyph characters (default "0123456789").

    Returns:
        dict with "directory", "captions_path", "boxes_path", "num_images",
        "image_size" `(height, width)`, "words" and "caption_lengths"
        `(min, max)` in words.

    Example:

    >>> import json, tempfile
    >>> from benchmarks.learning_datasets import make_glyph_caption_folder
    >>> with tempfile.TemporaryDirectory() as directory:
    ...     info = make_glyph_caption_folder(directory, num_images=2, glyphs_per_image=(1, 3))
    ...     boxes = json.load(open(info["boxes_path"]))
    ...     lines = open(info["captions_path"]).read().splitlines()
    >>> [len(boxes[line.split("\\t")[0]]) == len(line.split("\\t")[1].split()) for line in lines]
    [True, True]
    """
    num_images = _check_count(num_images, "num_images")
    height = _check_count(height, "height", 8)
    width = _check_count(width, "width", 8)
    low, high = _count_range(glyphs_per_image, "glyphs_per_image")
    noise = _check_noise(noise)
    glyphs = "0123456789" if glyphs is None else glyphs
    if (
        not isinstance(glyphs, str)
        or not glyphs
        or any(g.upper() not in GLYPH_STROKES for g in glyphs)
    ):
        raise ValueError(
            f"`glyphs` must be a string of characters from {''.join(GLYPH_STROKES)!r}. "
            f"Received: glyphs={glyphs!r}"
        )
    words = tuple(words)
    if (
        not words
        or len(words) > len(glyphs)
        or not all(isinstance(w, str) and w and " " not in w for w in words)
    ):
        raise ValueError(
            f"`words` must be 1 to {len(glyphs)} non-empty words without spaces, one per glyph. "
            f"Received: words={words!r}"
        )
    if width // high < 6:
        raise ValueError(
            "`width` must leave at least 6 pixels per glyph. "
            f"Received: width={width!r} with glyphs_per_image={glyphs_per_image!r}"
        )
    rng = np.random.default_rng(seed)
    images, captions, boxes = [], [], []
    for _ in range(num_images):
        count = int(rng.integers(low, high + 1))
        slot = width / count
        labels = rng.integers(0, len(words), size=count)
        layers = np.zeros((count, height, width), np.float32)
        image_boxes = []
        for index, label in enumerate(labels):
            glyph_height = int(round(height * rng.uniform(0.55, 1.0)))
            glyph_width = int(min(round(glyph_height * rng.uniform(0.6, 0.85)), int(slot)))
            glyph_height, glyph_width = max(glyph_height, 4), max(glyph_width, 4)
            row0 = int(rng.integers(0, height - glyph_height + 1))
            left = int(math.ceil(index * slot))
            right = int(math.floor((index + 1) * slot)) - glyph_width
            col0 = int(rng.integers(left, max(left, right) + 1))
            ink = render_glyph(glyphs[label], (glyph_height, glyph_width), rng)
            layers[index, row0 : row0 + glyph_height, col0 : col0 + glyph_width] = ink
            image_boxes.append(_tight_box(ink > _INK_THRESHOLD, row0, col0))
        background, inks = _ink_colours(count, colour, rng)
        images.append(_compose(layers, inks, background, noise, rng))
        captions.append(" ".join(words[label] for label in labels))
        boxes.append(image_boxes)
    sizes = {"image_size": (height, width), "caption_lengths": (low, high)}
    return _write_caption_folder(directory, images, captions, boxes, words=list(words), **sizes)


def make_glyph_classification_folder(
    directory, num_per_class=135, size=32, classes="0123456789", seed=0, noise=0.0
):
    """Writes one sub-folder of glyph images per class.

    Images are RGB PNGs of one glyph (dark ink on a light background, random
    grey levels) as `keras.utils.image_dataset_from_directory` reads them;
    the sub-folder of glyph `c` is named `c`.

    Args:
        directory: folder to write (created if missing).
        num_per_class: images per class.
        size: int or `(height, width)` of the images.
        classes: string of glyph characters, one class each (no repeats).
        seed: seed of everything drawn.
        noise: standard deviation of pixel noise, as a share of 255.

    Returns:
        dict with "directory", "class_names" (in the order keras labels
        them: sorted), "num_per_class", "num_images" and "image_size".

    Example:

    >>> import os, tempfile
    >>> from benchmarks.learning_datasets import make_glyph_classification_folder
    >>> with tempfile.TemporaryDirectory() as directory:
    ...     info = make_glyph_classification_folder(directory, num_per_class=2, classes="017")
    ...     sorted(os.listdir(directory)), len(os.listdir(os.path.join(directory, "7")))
    (['0', '1', '7'], 2)
    """
    num_per_class = _check_count(num_per_class, "num_per_class")
    height, width = _size_pair(size, "size")
    noise = _check_noise(noise)
    if (
        not isinstance(classes, str)
        or not classes
        or len(set(classes.upper())) != len(classes)
        or any(c.upper() not in GLYPH_STROKES for c in classes)
    ):
        raise ValueError(
            f"`classes` must be a string of distinct characters from {''.join(GLYPH_STROKES)!r}. "
            f"Received: classes={classes!r}"
        )
    rng = np.random.default_rng(seed)
    for name in classes:
        os.makedirs(os.path.join(directory, name), exist_ok=True)
    for index in range(num_per_class):
        for name in classes:
            ink = render_glyph(name, (height, width), rng)
            background = rng.uniform(170, 255)
            foreground = rng.uniform(0, 90)
            image = _compose(ink[None], [(foreground,) * 3], (background,) * 3, noise, rng)
            Image.fromarray(image, mode="RGB").save(
                os.path.join(directory, name, f"{name}_{index:05d}.png")
            )
    return {
        "directory": directory,
        "class_names": sorted(classes),
        "num_per_class": num_per_class,
        "num_images": num_per_class * len(classes),
        "image_size": (height, width),
    }


def _polygon_mask(vertices, rows, cols):
    """Even-odd fill of a polygon `(V, 2)` of (row, col) vertices on a pixel grid."""
    inside = np.zeros(rows.shape, dtype=bool)
    count = len(vertices)
    for index in range(count):
        (r1, c1), (r2, c2) = vertices[index], vertices[(index - 1) % count]
        crosses = (r1 > rows) != (r2 > rows)
        with np.errstate(divide="ignore", invalid="ignore"):
            col_at = (c2 - c1) * (rows - r1) / (r2 - r1) + c1
        inside ^= crosses & (cols < col_at)
    return inside


def _object_mask(name, centre, radius, angle, shape):
    """Boolean mask `shape` of one filled object of `OBJECT_NAMES`."""
    rows, cols = np.meshgrid(
        np.arange(shape[0], dtype=np.float32) + 0.5,
        np.arange(shape[1], dtype=np.float32) + 0.5,
        indexing="ij",
    )
    # Object coordinates: rotated, in units of the radius.
    dr, dc = (rows - centre[0]) / radius, (cols - centre[1]) / radius
    cos, sin = math.cos(angle), math.sin(angle)
    u, v = cos * dc + sin * dr, -sin * dc + cos * dr  # u right, v down
    if name == "ring":
        distance = np.sqrt(dc**2 + dr**2)
        return (distance <= 1.0) & (distance >= 0.55)
    if name == "diamond":
        return np.abs(u) * 1.25 + np.abs(v) <= 1.0
    if name == "cross":
        return ((np.abs(u) <= 0.3) & (np.abs(v) <= 1.0)) | ((np.abs(v) <= 0.3) & (np.abs(u) <= 1.0))
    if name == "triangle":
        corners = [(-math.pi / 2 + k * 2 * math.pi / 3) for k in range(3)]
    elif name == "star":
        corners = [(-math.pi / 2 + k * math.pi / 5) for k in range(10)]
    else:
        raise ValueError(f"`name` must be one of {OBJECT_NAMES}. Received: name={name!r}")
    radii = [1.0 if name == "triangle" or k % 2 == 0 else 0.45 for k in range(len(corners))]
    vertices = [(r * math.sin(a), r * math.cos(a)) for r, a in zip(radii, corners)]  # (v, u)
    return _polygon_mask(vertices, v, u)


_RELATIONS = {(0, 1): "left of", (0, -1): "right of", (1, 0): "above", (-1, 0): "below"}


def make_object_scene_caption_folder(
    directory,
    num_images=2000,
    height=64,
    width=96,
    objects_per_image=(2, 3),
    names=OBJECT_NAMES,
    seed=0,
    noise=0.0,
    grid=None,
):
    """Writes a captioning folder of objects captioned by their spatial relations.

    The image is divided into a grid of cells (2 x 3 for a wide image, 3 x 2
    for a tall one); the objects sit in a chain of neighbouring cells (a
    random walk without revisits), each in a random colour, size and small
    rotation, so every relation is clear. The caption walks the chain:
    "star above ring left of cross" means the star is in the cell above the
    ring, and the ring in the cell left of the cross. No object name repeats
    within an image. Each caption is a function of its image: the cells'
    neighbours form exactly the chain (no loops), and the chain starts from
    the object a reader meets first (top row first, then left), which is
    one of its ends.

    Args:
        directory: folder to write (created if missing).
        num_images: number of images.
        height: image height in pixels (>= 16).
        width: image width in pixels (>= 16).
        objects_per_image: int or `(min, max)`, at least 2.
        names: object names, a subset of `OBJECT_NAMES`.
        seed: seed of everything drawn.
        noise: standard deviation of pixel noise, as a share of 255.
        grid: `(rows, cols)` of cells; default (2, 3) when `width >= height`,
            else (3, 2).

    Returns:
        dict with "directory", "captions_path", "boxes_path", "num_images",
        "image_size", "words" (object names then relation words) and
        "caption_lengths" `(min, max)` in words.

    Example:

    >>> import tempfile
    >>> from benchmarks.learning_datasets import make_object_scene_caption_folder
    >>> with tempfile.TemporaryDirectory() as directory:
    ...     info = make_object_scene_caption_folder(directory, num_images=3, height=80, width=60)
    ...     captions = [line.split("\\t")[1] for line in open(info["captions_path"])]
    >>> all(c.split()[0] in ("triangle", "star", "cross", "ring", "diamond") for c in captions)
    True
    """
    num_images = _check_count(num_images, "num_images")
    height = _check_count(height, "height", 16)
    width = _check_count(width, "width", 16)
    low, high = _count_range(objects_per_image, "objects_per_image")
    noise = _check_noise(noise)
    names = tuple(names)
    if len(names) < 2 or len(set(names)) != len(names) or any(n not in OBJECT_NAMES for n in names):
        raise ValueError(
            f"`names` must be at least 2 distinct names from {OBJECT_NAMES}. "
            f"Received: names={names!r}"
        )
    grid = ((2, 3) if width >= height else (3, 2)) if grid is None else tuple(grid)
    if (
        len(grid) != 2
        or not all(isinstance(g, int) and g >= 1 for g in grid)
        or grid[0] * grid[1] < 2
    ):
        raise ValueError(
            f"`grid` must be (rows, cols) of at least 2 cells. Received: grid={grid!r}"
        )
    if low < 2 or high > min(len(names), grid[0] * grid[1]):
        raise ValueError(
            f"`objects_per_image` must be between 2 and min(len(names), cells)="
            f"{min(len(names), grid[0] * grid[1])}. "
            f"Received: objects_per_image={objects_per_image!r}"
        )
    cell_h, cell_w = height / grid[0], width / grid[1]
    rng = np.random.default_rng(seed)
    images, captions, boxes = [], [], []
    while len(images) < num_images:
        count = int(rng.integers(low, high + 1))
        path = [(int(rng.integers(grid[0])), int(rng.integers(grid[1])))]
        while len(path) < count:
            steps = [
                (path[-1][0] + dr, path[-1][1] + dc)
                for dr, dc in _RELATIONS
                if 0 <= path[-1][0] + dr < grid[0]
                and 0 <= path[-1][1] + dc < grid[1]
                and (path[-1][0] + dr, path[-1][1] + dc) not in path
            ]
            if not steps:
                break
            path.append(steps[int(rng.integers(len(steps)))])
        if len(path) < count:
            continue  # a dead end: draw another walk
        adjacent_pairs = sum(
            abs(r1 - r2) + abs(c1 - c2) == 1
            for i, (r1, c1) in enumerate(path)
            for (r2, c2) in path[i + 1 :]
        )
        if adjacent_pairs != count - 1:
            continue  # the cells close a loop: more than one chain would describe them
        # The image fixes the chain but not which end it starts from: start from
        # the object a reader meets first (top row, then left), so the caption is
        # a function of the image. Chains with that object in their middle would
        # need a rule no reader uses: draw another.
        if min(path) == path[-1]:
            path.reverse()
        if min(path) != path[0]:
            continue
        chosen = [names[i] for i in rng.permutation(len(names))[:count]]
        dark = rng.random() < 0.5
        background = rng.uniform(0, 60, size=3) if dark else rng.uniform(190, 255, size=3)
        layers = np.zeros((count, height, width), np.float32)
        colours, image_boxes = [], []
        for index, (name, (row, col)) in enumerate(zip(chosen, path)):
            radius = 0.5 * min(cell_h, cell_w) * rng.uniform(0.6, 0.9)
            centre = (
                (row + 0.5) * cell_h + rng.uniform(-1, 1) * (cell_h / 2 - radius),
                (col + 0.5) * cell_w + rng.uniform(-1, 1) * (cell_w / 2 - radius),
            )
            mask = _object_mask(name, centre, radius, rng.uniform(-0.3, 0.3), (height, width))
            layers[index] = mask
            image_boxes.append(_tight_box(mask, 0, 0))
            colours.append(rng.uniform(130, 255, size=3) if dark else rng.uniform(0, 120, size=3))
        words = [chosen[0]]
        for (r1, c1), (r2, c2), name in zip(path, path[1:], chosen[1:]):
            words += [_RELATIONS[(r2 - r1, c2 - c1)], name]
        images.append(_compose(layers, colours, tuple(background), noise, rng))
        captions.append(" ".join(words))
        boxes.append(image_boxes)
    relation_words = sorted({w for relation in _RELATIONS.values() for w in relation.split()})
    lengths = (1 + 2 * (low - 1), 1 + 3 * (high - 1))
    sizes = {"image_size": (height, width), "caption_lengths": lengths}
    words = list(names) + relation_words
    return _write_caption_folder(directory, images, captions, boxes, words=words, **sizes)


# ---------------------------------------------------------------------------
# Text tasks

MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_DAYS_IN_MONTH = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_ONES = (
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
)
_NUMBERS_LIMIT = 100000
_TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")

# Latin -> Greek letters; digraphs first (they take precedence over single letters).
TRANSLITERATION = {
    "th": "θ",
    "ph": "φ",
    "ps": "ψ",
    "ch": "χ",
    "a": "α",
    "b": "β",
    "c": "κ",
    "d": "δ",
    "e": "ε",
    "f": "φ",
    "g": "γ",
    "h": "η",
    "i": "ι",
    "j": "ξ",
    "k": "κ",
    "l": "λ",
    "m": "μ",
    "n": "ν",
    "o": "ο",
    "p": "π",
    "q": "κ",
    "r": "ρ",
    "s": "σ",
    "t": "τ",
    "u": "υ",
    "v": "β",
    "w": "ω",
    "x": "χ",
    "y": "υ",
    "z": "ζ",
}

_SUBJECTS = (
    "the dog",
    "my sister",
    "a farmer",
    "the old man",
    "we",
    "they",
    "you",
    "she",
    "he",
    "the children",
    "our neighbour",
    "the teacher",
)
_VERBS = (
    "sees",
    "likes",
    "finds",
    "paints",
    "carries",
    "follows",
    "calls",
    "washes",
    "visits",
    "feeds",
    "watches",
    "thanks",
)
_OBJECTS = (
    "the cat",
    "a red box",
    "two horses",
    "the bridge",
    "her brother",
    "the river",
    "a green apple",
    "the garden",
    "three birds",
    "the phone",
    "a small ship",
    "the photo",
)
_PLURAL_VERBS = {"carries": "carry", "washes": "wash", "watches": "watch"}
_EXTRAS = (
    "today",
    "at noon",
    "in the morning",
    "again",
    "on Sunday",
    "with care",
    "near the church",
    "after school",
)


def number_in_words(value):
    """English words of an int in [0, 999999], British style ("and" after hundreds).

    Example:

    >>> from benchmarks.learning_datasets import number_in_words
    >>> number_in_words(312), number_in_words(2005), number_in_words(70)
    ('three hundred and twelve', 'two thousand and five', 'seventy')
    """
    if not isinstance(value, (int, np.integer)) or not 0 <= value <= 999999:
        raise ValueError(f"`value` must be an int in [0, 999999]. Received: value={value!r}")
    value = int(value)

    def below_hundred(n):
        if n < 20:
            return _ONES[n]
        return _TENS[n // 10] + ("" if n % 10 == 0 else "-" + _ONES[n % 10])

    def below_thousand(n):
        hundreds, rest = divmod(n, 100)
        if hundreds == 0:
            return below_hundred(rest)
        head = _ONES[hundreds] + " hundred"
        return head if rest == 0 else head + " and " + below_hundred(rest)

    if value < 1000:
        return below_thousand(value)
    thousands, rest = divmod(value, 1000)
    head = below_thousand(thousands) + " thousand"
    if rest == 0:
        return head
    return head + (" and " if rest < 100 else " ") + below_thousand(rest)


def _ordinal(day):
    suffix = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def _date_pair(rng):
    year = int(rng.integers(1900, 2100))
    month = int(rng.integers(1, 13))
    days = _DAYS_IN_MONTH[month - 1] + (
        1 if month == 2 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 0
    )
    day = int(rng.integers(1, days + 1))
    name = MONTHS[month - 1]
    formats = (
        f"{day} {name} {year}",
        f"{name} {day}, {year}",
        f"{day}/{month}/{year}",
        f"{name[:3]}. {day}, {year}",
        f"the {_ordinal(day)} of {name} {year}",
        f"{year}-{month:02d}-{day:02d}",
    )
    source = formats[int(rng.integers(len(formats)))]
    return source, f"{day:02d}.{month:02d}.{year}"


def _numbers_pair(rng):
    digits = int(rng.integers(1, 6))
    value = int(rng.integers(0 if digits == 1 else 10 ** (digits - 1), 10**digits))  # 0..99999
    return number_in_words(value), str(value)


def _sentence(rng):
    """A lower-case sentence with commas, contractions, digits or quotes, and its end mark."""
    pick = lambda options: options[int(rng.integers(len(options)))]  # noqa: E731
    subject, verb, obj = pick(_SUBJECTS), pick(_VERBS), pick(_OBJECTS)
    if subject in ("we", "they", "you", "the children"):
        verb = _PLURAL_VERBS.get(verb, verb[:-1])
    kind = int(rng.integers(6))
    if kind == 0:
        return f"{subject} {verb} {obj}, isn't it?"
    if kind == 1:
        return f"{subject} {verb} {obj} {pick(_EXTRAS)}."
    if kind == 2:
        return f"it's {obj}, and {subject} {verb} it!"
    if kind == 3:
        word = pick(("yes", "no", "maybe", "hello", "thanks"))
        return f'{subject} said "{word}" {pick(_EXTRAS)}.'
    if kind == 4:
        return f"{subject} can't say why {int(rng.integers(2, 100))} people came."
    return f"{pick(_EXTRAS)}, {subject} {verb} {obj}; then {pick(_SUBJECTS)} left."


def title_case(text):
    """Upper-cases the first letter of every space-separated word.

    Characters before a word's first letter (quotes, digits) are kept.

    Example:

    >>> from benchmarks.learning_datasets import title_case
    >>> title_case("it's a dog, isn't it?"), title_case('she said "yes".')
    ("It's A Dog, Isn't It?", 'She Said "Yes".')
    """
    words = []
    for word in text.split(" "):
        first = next((i for i, char in enumerate(word) if char.isalpha()), None)
        if first is not None:
            word = word[:first] + word[first].upper() + word[first + 1 :]
        words.append(word)
    return " ".join(words)


def transliterate(text):
    """Latin letters -> Greek letters (`TRANSLITERATION`), everything else kept.

    Digraphs ("th", "ph", "ps", "ch") are read first, left to right; an upper
    case Latin letter (or a digraph starting with one) gives an upper case
    Greek letter.

    Example:

    >>> from benchmarks.learning_datasets import transliterate
    >>> transliterate("The photo, 3 ships!")
    'Θε φοτο, 3 σηιψ!'
    """
    out, index = [], 0
    while index < len(text):
        pair = text[index : index + 2]
        if pair.lower() in TRANSLITERATION and len(pair) == 2:
            letter, step = TRANSLITERATION[pair.lower()], 2
        elif text[index].lower() in TRANSLITERATION:
            letter, step = TRANSLITERATION[text[index].lower()], 1
        else:
            out.append(text[index])
            index += 1
            continue
        out.append(letter.upper() if text[index].isupper() else letter)
        index += step
    return "".join(out)


def _spaced(text):
    """Spaces around punctuation and apostrophes, as word tokenizers leave text."""
    out = []
    for char in text:
        if char in ",.;!?\"'":
            out.append(f" {char} ")
        else:
            out.append(char)
    return " ".join("".join(out).split())


def _text_pair(task, rng):
    if task == "dates":
        return _date_pair(rng)
    if task == "numbers":
        return _numbers_pair(rng)
    sentence = _sentence(rng)
    if task == "titlecase":
        return sentence, title_case(sentence)
    if task == "transliterate":
        sentence = sentence[0].upper() + sentence[1:]
        return sentence, transliterate(sentence)
    return _spaced(sentence), sentence


def _write_pairs_tsv(path, pairs):
    """Writes `source<TAB>target` lines, creating the file's folder if missing."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        for source, target in pairs:
            handle.write(f"{source}\t{target}\n")


def make_text_task_tsv(path, task, num_pairs, seed=0):
    """Writes `source<TAB>target` lines of a text-formatting task.

    Tasks (the target is exact: spacing, punctuation and case matter):
    - "dates": a date in one of six formats ("15 April 1957", "April 15,
      1957", "15/4/1957", "Apr. 15, 1957", "the 15th of April 1957",
      "1957-04-15") -> "15.04.1957".
    - "numbers": English words of 0..99999 -> digits
      ("three hundred and twelve" -> "312").
    - "titlecase": a sentence -> every word capitalised
      ("it's a dog, isn't it?" -> "It's A Dog, Isn't It?").
    - "transliterate": a sentence -> Greek letters, digraphs first, other
      characters kept (`transliterate`).
    - "detokenize": a sentence with spaces around punctuation
      ("it ' s a dog , isn ' t it ?") -> the sentence as written.

    Sources within a file are distinct.

    Args:
        path: file to write (its folder is created if missing).
        task: one of `TEXT_TASKS`.
        num_pairs: number of lines.
        seed: seed of the pairs.

    Returns:
        dict with "path", "task" and "num_pairs".

    Example:

    >>> import os, tempfile
    >>> from benchmarks.learning_datasets import make_text_task_tsv
    >>> with tempfile.TemporaryDirectory() as directory:
    ...     info = make_text_task_tsv(os.path.join(directory, "d.tsv"), "dates", 3, seed=0)
    ...     lines = open(info["path"], encoding="utf-8").read().splitlines()
    >>> len(lines), all(len(line.split("\\t")[1]) == 10 for line in lines)
    (3, True)
    """
    if task not in TEXT_TASKS:
        raise ValueError(f"`task` must be one of {TEXT_TASKS}. Received: task={task!r}")
    num_pairs = _check_count(num_pairs, "num_pairs")
    if task == "numbers" and num_pairs > _NUMBERS_LIMIT:
        raise ValueError(
            f"`num_pairs` must be at most {_NUMBERS_LIMIT} for task 'numbers' (0..99999). "
            f"Received: num_pairs={num_pairs!r}"
        )
    rng = np.random.default_rng(seed)
    pairs, seen = [], set()
    attempts = 0
    while len(pairs) < num_pairs:
        attempts += 1
        if attempts > 50 * num_pairs + 1000:
            raise ValueError(
                f"`num_pairs` is more than the distinct sources task {task!r} can make. "
                f"Received: num_pairs={num_pairs!r}"
            )
        source, target = _text_pair(task, rng)
        if task == "numbers" and num_pairs > _NUMBERS_LIMIT // 2 and source in seen:
            # Nearly every number is wanted: take the next unused one instead of drawing.
            value = (int(target) + 1) % _NUMBERS_LIMIT
            while number_in_words(value) in seen:
                value = (value + 1) % _NUMBERS_LIMIT
            source, target = number_in_words(value), str(value)
        if source not in seen:
            seen.add(source)
            pairs.append((source, target))
    _write_pairs_tsv(path, pairs)
    return {"path": path, "task": task, "num_pairs": num_pairs}


# ---------------------------------------------------------------------------
# Long compounds


def compound_pair(english_parts, language):
    """The source phrase parts and the compound word of `english_parts`, head first.

    The compound writes the parts in the reverse order, each but the last in
    its modifier form (with its linking element), the head last.

    Args:
        english_parts: English nouns of `COMPOUND_LANGUAGES[language]`, the
            head first ("field", "flower", "sun": a field of sunflowers).
        language: a key of `COMPOUND_LANGUAGES`.

    Returns:
        the compound, one word.

    Example:

    >>> from benchmarks.learning_datasets import compound_pair
    >>> compound_pair(["field", "flower", "sun"], "german")
    'Sonnenblumenfeld'
    >>> compound_pair(["guide", "museum", "student"], "dutch")
    'studentenmuseumgids'
    """
    table = COMPOUND_LANGUAGES[language]
    head, *modifiers = english_parts
    word = "".join(table["parts"][part][1] for part in reversed(modifiers))
    word += table["parts"][head][0]
    return word[0].upper() + word[1:] if table["capitalize"] else word


def _check_range(value, name, minimum):
    if (
        not isinstance(value, (tuple, list))
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
        or not minimum <= value[0] <= value[1]
    ):
        raise ValueError(
            f"`{name}` must be a (low, high) pair of ints with {minimum} <= low <= high. "
            f"Received: {name}={value!r}"
        )
    return tuple(value)


def make_compound_tsv(
    path,
    num_pairs,
    language="german",
    parts=(3, 5),
    separators=(" of ",),
    target_length=(20, 60),
    seed=0,
):
    """Writes `source<TAB>target` lines: English phrases -> one long compound word.

    The source names 2 or more distinct nouns head first, joined by one of
    `separators` ("field of flower of sun", "field-flower-sun"); the target
    is the compound the language writes for it, one word with the parts in
    the reverse order and linking elements between them
    ("Sonnenblumenfeld"; see `compound_pair`). Only compounds whose length
    in characters lies in `target_length` are kept, so every target is a
    long word the tokenizer spells in many pieces. Sources within a file are
    distinct.

    Args:
        path: file to write (its folder is created if missing).
        num_pairs: number of lines.
        language: a key of `COMPOUND_LANGUAGES` ("german", "dutch").
        parts: (fewest, most) nouns per compound.
        separators: strings that join the English nouns; one is drawn per line.
        target_length: (shortest, longest) compound in characters.
        seed: seed of the pairs.

    Returns:
        dict with "path", "language" and "num_pairs".

    Example:

    >>> import os, tempfile
    >>> from benchmarks.learning_datasets import make_compound_tsv
    >>> with tempfile.TemporaryDirectory() as directory:
    ...     info = make_compound_tsv(os.path.join(directory, "c.tsv"), 3, seed=0)
    ...     lines = open(info["path"], encoding="utf-8").read().splitlines()
    >>> [20 <= len(line.split("\\t")[1]) <= 60 for line in lines]
    [True, True, True]
    """
    if language not in COMPOUND_LANGUAGES:
        raise ValueError(
            f"`language` must be one of {tuple(COMPOUND_LANGUAGES)}. "
            f"Received: language={language!r}"
        )
    num_pairs = _check_count(num_pairs, "num_pairs")
    fewest, most = _check_range(parts, "parts", 2)
    shortest, longest = _check_range(target_length, "target_length", 1)
    if (
        not isinstance(separators, (tuple, list))
        or not separators
        or not all(isinstance(s, str) and s for s in separators)
    ):
        raise ValueError(
            "`separators` must be a non-empty sequence of non-empty strings. "
            f"Received: separators={separators!r}"
        )
    english = sorted(COMPOUND_LANGUAGES[language]["parts"])
    if most > len(english):
        raise ValueError(
            f"`parts` must allow at most the {len(english)} nouns of {language!r}. "
            f"Received: parts={parts!r}"
        )
    rng = np.random.default_rng(seed)
    pairs, seen, attempts = [], set(), 0
    while len(pairs) < num_pairs:
        attempts += 1
        if attempts > 50 * num_pairs + 1000:
            raise ValueError(
                "`num_pairs` is more than the distinct compounds of these lengths. "
                f"Received: num_pairs={num_pairs!r}, parts={parts!r}, "
                f"target_length={target_length!r}"
            )
        count = int(rng.integers(fewest, most + 1))
        chosen = [english[i] for i in rng.choice(len(english), size=count, replace=False)]
        separator = separators[int(rng.integers(len(separators)))]
        source, target = separator.join(chosen), compound_pair(chosen, language)
        if source not in seen and shortest <= len(target) <= longest:
            seen.add(source)
            pairs.append((source, target))
    _write_pairs_tsv(path, pairs)
    return {"path": path, "language": language, "num_pairs": num_pairs}


# ---------------------------------------------------------------------------
# Numbers written as one word


NUMBER_SPREADS = ("digits", "values")


def make_number_word_tsv(path, num_pairs, language="dutch", spread="digits", seed=0):
    """Writes `source<TAB>target` lines: English number words -> the number as one word.

    The source is `number_in_words` ("seven hundred and sixty-nine"), the
    target the number's name in Dutch or Finnish, written as one word
    (`benchmarks.number_words`: "zevenhonderdnegenenzestig"). With
    `spread="digits"` the number of digits is drawn first, 1 to 6 alike,
    then the number, so that short and long names both occur; with
    `"values"` every number of 0..999,999 is alike, so that nine in ten have
    six digits and a number below a thousand is rare (six-digit names are
    40-90 characters long). Sources within a file are distinct.

    Args:
        path: file to write (its folder is created if missing).
        num_pairs: number of lines, at most 500,000.
        language: one of `number_words.NUMBER_WORD_LANGUAGES`.
        spread: `"digits"` or `"values"`: how the numbers are drawn.
        seed: seed of the pairs.

    Returns:
        dict with "path", "language" and "num_pairs".

    Example:

    >>> import os, tempfile
    >>> from benchmarks.learning_datasets import make_number_word_tsv
    >>> with tempfile.TemporaryDirectory() as directory:
    ...     info = make_number_word_tsv(os.path.join(directory, "n.tsv"), 3, "finnish")
    ...     lines = open(info["path"], encoding="utf-8").read().splitlines()
    >>> [" " in line.split("\\t")[1] for line in lines]
    [False, False, False]
    """
    if language not in NUMBER_WORD_LANGUAGES:
        raise ValueError(
            f"`language` must be one of {NUMBER_WORD_LANGUAGES}. Received: language={language!r}"
        )
    if spread not in NUMBER_SPREADS:
        raise ValueError(f"`spread` must be one of {NUMBER_SPREADS}. Received: spread={spread!r}")
    num_pairs = _check_count(num_pairs, "num_pairs")
    if num_pairs > (LARGEST_NUMBER + 1) // 2:
        raise ValueError(
            f"`num_pairs` must be at most {(LARGEST_NUMBER + 1) // 2} (numbers 0..{LARGEST_NUMBER}"
            f" drawn at random). Received: num_pairs={num_pairs!r}"
        )
    rng = np.random.default_rng(seed)
    values, seen = [], set()
    while len(values) < num_pairs:
        if spread == "values":
            value = int(rng.integers(0, LARGEST_NUMBER + 1))
        else:
            digits = int(rng.integers(1, 7))
            value = int(rng.integers(0 if digits == 1 else 10 ** (digits - 1), 10**digits))
        # Short numbers run out first: take the next unused one of any length instead.
        while value in seen:
            value = (value + 1) % (LARGEST_NUMBER + 1)
        seen.add(value)
        values.append(value)
    _write_pairs_tsv(path, [(number_in_words(v), number_word(v, language)) for v in values])
    return {"path": path, "language": language, "num_pairs": num_pairs}
