"""Digit image folders as users bring them: pixel-art digits and strips of digits, as PNGs.

Where `benchmarks.learning_datasets` draws smooth anti-aliased glyphs at the
size the model sees, these are the small bitmaps people often have at hand:

- `pixel_digit`: a digit as a coarse bitmap (8 x 8 cells by default, 16 grey
  levels, as scikit-learn's `load_digits` gives them, or 1-bit as a paint
  program draws), from `render_glyph`'s strokes with random slant, size,
  position and stroke thickness;
- `make_pixel_digit_folder`: one class folder per digit of such bitmaps,
  enlarged by repeating each cell (nearest neighbour), light ink on black or
  black ink on white, as PNGs: what a user writes to disk to train
  `train_vit.py --dataset folder:DIR`;
- `make_pixel_digit_strip_folder`: a captioning folder of strips of such
  digits side by side, captioned with their names ("one three five");
- `handwritten_digit`, `make_handwritten_digit_folder`: digits as people
  write them, the way scikit-learn's `load_digits` keeps them (8 x 8 cells,
  each counting the 4 x 4 pen pixels under it: 16 grey levels): several
  ways of writing each digit, wobbly, slanted, off centre, thin or heavy,
  some strokes broken; thin strokes leave many cells lighter than mid-grey.

Every maker is deterministic in `seed` (0 for training, 1 for held-out data).

Example:

>>> import numpy as np
>>> from benchmarks.learning_digit_folders import pixel_digit
>>> cells = pixel_digit("7", np.random.default_rng(0))
>>> cells.shape, bool(np.all(cells * 16 == np.round(cells * 16)))
((8, 8), True)
"""

import functools
import math
import os

import numpy as np
from PIL import Image

from benchmarks.learning_datasets import _INK_THRESHOLD
from benchmarks.learning_datasets import DIGIT_WORDS
from benchmarks.learning_datasets import _check_count
from benchmarks.learning_datasets import _check_noise
from benchmarks.learning_datasets import _tight_box
from benchmarks.learning_datasets import _write_caption_folder
from benchmarks.learning_datasets import render_glyph

# A cell's ink is the share of its pixels under the pen, counted on a grid this many
# times finer (scikit-learn's digits count 4 x 4 blocks of a 32 x 32 bitmap).
_FINE_PER_CELL = 4
GREY_LEVELS = 16
# Stroke thickness: the counted ink is multiplied by a factor drawn in this range.
_THICKNESS = (1.3, 2.2)
DIGITS = "0123456789"


def pixel_digit(digit, rng, grid=8, levels=GREY_LEVELS, noise=0.0):
    """A digit as a `grid x grid` bitmap of `levels` ink levels above blank.

    The digit's strokes (`render_glyph`: random rotation, shear, scale and
    position) are drawn `_FINE_PER_CELL` times finer, each cell takes the
    share of its fine pixels under the pen, times a random thickness
    factor, and is rounded to a multiple of `1 / levels` (with `levels=1`:
    ink or blank, a 1-bit bitmap).

    Args:
        digit: one character of "0123456789".
        rng: a `numpy.random.Generator`.
        grid: cells a side (>= 4).
        levels: ink levels above blank (>= 1).
        noise: standard deviation of noise added to each cell's ink, in [0, 1].

    Returns:
        float32 `(grid, grid)` in [0, 1], multiples of `1 / levels`.
    """
    if not isinstance(digit, str) or digit not in DIGITS or len(digit) != 1:
        raise ValueError(f"`digit` must be one of {DIGITS!r}. Received: digit={digit!r}")
    grid = _check_count(grid, "grid", 4)
    levels = _check_count(levels, "levels", 1)
    noise = _check_noise(noise)
    fine = render_glyph(digit, grid * _FINE_PER_CELL, rng)  # (grid * 4, grid * 4)
    cells = fine.reshape(grid, _FINE_PER_CELL, grid, _FINE_PER_CELL).mean(axis=(1, 3))
    cells = cells * rng.uniform(*_THICKNESS)
    if noise > 0:
        cells = cells + rng.normal(0.0, noise, size=cells.shape)
    return (np.round(np.clip(cells, 0.0, 1.0) * levels) / levels).astype(np.float32)


def _to_png_pixels(cells, scale, dark_ink):
    """`(h, w)` ink in [0, 1] -> uint8 RGB `(h * scale, w * scale, 3)`.

    Light ink on black, or black ink on white with `dark_ink`; each cell
    becomes a `scale x scale` block (nearest-neighbour enlarging).
    """
    big = np.kron(cells, np.ones((scale, scale), np.float32))  # (h * scale, w * scale)
    grey = np.rint((1.0 - big if dark_ink else big) * 255.0).astype(np.uint8)
    return np.repeat(grey[..., None], 3, axis=-1)


def _check_scale(scale):
    return _check_count(scale, "scale", 1)


def make_pixel_digit_folder(
    directory,
    num_per_class=135,
    grid=8,
    scale=4,
    levels=GREY_LEVELS,
    dark_ink=False,
    seed=0,
    noise=0.0,
):
    """Writes one class folder per digit of pixel-art digits enlarged `scale` times.

    Args:
        directory: folder to write (created if missing).
        num_per_class: images per digit.
        grid: bitmap cells a side.
        scale: pixels per cell side in the written PNGs (nearest neighbour).
        levels: ink levels of `pixel_digit` (1: a 1-bit bitmap).
        dark_ink: black ink on white (light ink on black when False).
        seed: seed of everything drawn.
        noise: standard deviation of per-cell noise, in [0, 1].

    Returns:
        dict with "directory", "class_names", "num_per_class", "num_images"
        and "image_size" `(grid * scale, grid * scale)`.

    Example:

    >>> import os, tempfile
    >>> from PIL import Image
    >>> from benchmarks.learning_digit_folders import make_pixel_digit_folder
    >>> with tempfile.TemporaryDirectory() as directory:
    ...     info = make_pixel_digit_folder(directory, num_per_class=1)
    ...     image = Image.open(os.path.join(directory, "3", "3_00000.png"))
    ...     sorted(os.listdir(directory)) == list("0123456789"), image.size, image.mode
    (True, (32, 32), 'RGB')
    """
    draw = functools.partial(pixel_digit, grid=grid, levels=levels, noise=noise)
    return _write_digit_folder(directory, num_per_class, draw, grid, scale, dark_ink, seed)


def make_pixel_digit_strip_folder(
    directory,
    num_images=3000,
    digits_per_image=3,
    grid=8,
    scale=4,
    levels=GREY_LEVELS,
    dark_ink=False,
    seed=0,
    noise=0.0,
):
    """Writes a captioning folder of pixel-art digits side by side, named left to right.

    Each strip is `digits_per_image` bitmaps of `pixel_digit` in a row (one
    `grid x grid` bitmap each), enlarged `scale` times; its caption is their
    words ("one three five") and `boxes.json` holds each digit's box around
    its ink.

    Args:
        directory: folder to write (created if missing).
        num_images: number of strips.
        digits_per_image: digits in each strip.
        grid: bitmap cells a side of each digit.
        scale: pixels per cell side in the written PNGs.
        levels: ink levels of `pixel_digit` (1: a 1-bit bitmap).
        dark_ink: black ink on white (light ink on black when False).
        seed: seed of everything drawn.
        noise: standard deviation of per-cell noise, in [0, 1].

    Returns:
        dict with "directory", "captions_path", "boxes_path", "num_images",
        "image_size" `(grid * scale, digits_per_image * grid * scale)`,
        "words" and "caption_lengths".

    Example:

    >>> import tempfile
    >>> from benchmarks.learning_digit_folders import make_pixel_digit_strip_folder
    >>> with tempfile.TemporaryDirectory() as directory:
    ...     info = make_pixel_digit_strip_folder(directory, num_images=2)
    ...     caption = open(info["captions_path"]).readline().split("\\t")[1].split()
    >>> info["image_size"], len(caption)
    ((32, 96), 3)
    """
    num_images = _check_count(num_images, "num_images")
    count = _check_count(digits_per_image, "digits_per_image")
    scale = _check_scale(scale)
    rng = np.random.default_rng(seed)
    images, captions, boxes = [], [], []
    for _ in range(num_images):
        labels = rng.integers(0, len(DIGITS), size=count)
        cells = [pixel_digit(DIGITS[label], rng, grid, levels, noise) for label in labels]
        strip = np.concatenate(cells, axis=1)  # (grid, count * grid)
        images.append(_to_png_pixels(strip, scale, dark_ink))
        captions.append(" ".join(DIGIT_WORDS[label] for label in labels))
        boxes.append(
            [
                _tight_box(
                    np.kron(ink, np.ones((scale, scale))) > _INK_THRESHOLD, 0, i * grid * scale
                )
                for i, ink in enumerate(cells)
            ]
        )
    sizes = {"image_size": (grid * scale, count * grid * scale), "caption_lengths": (count, count)}
    return _write_caption_folder(
        directory, images, captions, boxes, words=list(DIGIT_WORDS), **sizes
    )


# Handwritten digits: each digit's pen strokes as control points in the unit box (x right,
# y down), one tuple per stroke, several ways of writing most digits (allographs): the 1
# with or without its flag and foot, the open or closed 4, the 7 with a bar, and so on.
# fmt: off
_DIGIT_HANDS = {
    "0": (
        (((0.5, 0.1), (0.25, 0.25), (0.22, 0.6), (0.4, 0.9), (0.65, 0.85), (0.78, 0.5),
          (0.7, 0.2), (0.5, 0.1), (0.42, 0.16)),),
        (((0.55, 0.12), (0.3, 0.2), (0.25, 0.55), (0.35, 0.85), (0.6, 0.9), (0.75, 0.6),
          (0.72, 0.25), (0.58, 0.1)),),
    ),
    "1": (
        (((0.52, 0.1), (0.5, 0.5), (0.48, 0.9)),),
        (((0.32, 0.3), (0.55, 0.1), (0.52, 0.5), (0.5, 0.9)),),
        (((0.32, 0.28), (0.55, 0.1), (0.52, 0.5), (0.5, 0.88)), ((0.3, 0.9), (0.72, 0.88))),
    ),
    "2": (
        (((0.22, 0.3), (0.38, 0.12), (0.62, 0.1), (0.76, 0.28), (0.68, 0.48), (0.42, 0.7),
          (0.2, 0.9), (0.5, 0.88), (0.82, 0.88)),),
        (((0.22, 0.28), (0.4, 0.1), (0.66, 0.14), (0.72, 0.34), (0.55, 0.58), (0.3, 0.8),
          (0.25, 0.9), (0.38, 0.78), (0.5, 0.88), (0.8, 0.9)),),
    ),
    "3": (
        (((0.25, 0.18), (0.48, 0.08), (0.72, 0.2), (0.65, 0.4), (0.42, 0.48), (0.66, 0.56),
          (0.76, 0.74), (0.6, 0.9), (0.38, 0.9), (0.22, 0.8)),),
        (((0.25, 0.12), (0.75, 0.12), (0.45, 0.42), (0.68, 0.52), (0.76, 0.72), (0.6, 0.9),
          (0.36, 0.9), (0.22, 0.78)),),
    ),
    "4": (
        (((0.62, 0.9), (0.62, 0.5), (0.62, 0.1), (0.38, 0.4), (0.15, 0.66), (0.5, 0.66),
          (0.85, 0.65)),),
        (((0.32, 0.1), (0.26, 0.4), (0.22, 0.6), (0.55, 0.6), (0.85, 0.58)),
         ((0.66, 0.3), (0.65, 0.6), (0.64, 0.92))),
    ),
    "5": (
        (((0.75, 0.12), (0.3, 0.12)), ((0.3, 0.12), (0.27, 0.45), (0.52, 0.4), (0.74, 0.55),
          (0.72, 0.8), (0.5, 0.9), (0.25, 0.82))),
        (((0.3, 0.14), (0.27, 0.46), (0.55, 0.4), (0.75, 0.58), (0.7, 0.82), (0.48, 0.9),
          (0.24, 0.8)), ((0.3, 0.13), (0.55, 0.11), (0.78, 0.1))),
    ),
    "6": (
        (((0.7, 0.1), (0.45, 0.22), (0.28, 0.5), (0.3, 0.8), (0.5, 0.9), (0.7, 0.78),
          (0.68, 0.58), (0.5, 0.5), (0.3, 0.62)),),
        (((0.62, 0.08), (0.4, 0.35), (0.3, 0.65), (0.42, 0.9), (0.66, 0.85), (0.7, 0.62),
          (0.48, 0.55), (0.32, 0.7)),),
    ),
    "7": (
        (((0.2, 0.14), (0.5, 0.12), (0.8, 0.12), (0.6, 0.5), (0.42, 0.9)),),
        (((0.2, 0.14), (0.5, 0.12), (0.8, 0.12), (0.6, 0.5), (0.42, 0.9)),
         ((0.35, 0.5), (0.55, 0.5), (0.75, 0.49))),
        (((0.22, 0.2), (0.2, 0.12), (0.8, 0.12), (0.55, 0.45), (0.5, 0.7), (0.5, 0.9)),),
    ),
    "8": (
        (((0.66, 0.2), (0.5, 0.1), (0.32, 0.2), (0.38, 0.38), (0.62, 0.56), (0.7, 0.76),
          (0.5, 0.9), (0.3, 0.76), (0.38, 0.56), (0.62, 0.38), (0.66, 0.2)),),
        (((0.5, 0.1), (0.32, 0.22), (0.5, 0.46), (0.68, 0.22), (0.5, 0.1)),
         ((0.5, 0.46), (0.28, 0.68), (0.5, 0.9), (0.72, 0.68), (0.5, 0.46))),
    ),
    "9": (
        (((0.7, 0.3), (0.55, 0.12), (0.32, 0.18), (0.3, 0.38), (0.5, 0.48), (0.7, 0.32)),
         ((0.7, 0.22), (0.69, 0.55), (0.68, 0.9))),
        (((0.7, 0.3), (0.55, 0.12), (0.32, 0.18), (0.3, 0.38), (0.5, 0.48), (0.7, 0.32),
          (0.68, 0.65), (0.45, 0.9), (0.3, 0.84)),),
    ),
}
# fmt: on
# Fine pixels per cell side: a cell's grey level counts its fine pixels under the pen, as
# scikit-learn's digits count the 4 x 4 blocks of a 32 x 32 bitmap (0 to 16).
_HAND_FINE = 4
_SPLINE_STEPS = 8  # points drawn between two control points
# The pen's width, drawn for each image, as a share of the image side: thin to heavy.
_HAND_PEN = (0.05, 0.12)


def _spline(points, steps=_SPLINE_STEPS):
    """A Catmull-Rom curve through `points` `(P, 2)`: `((P - 1) * steps + 1, 2)` points."""
    padded = np.concatenate([points[:1], points, points[-1:]])  # (P + 2, 2)
    t = np.linspace(0.0, 1.0, steps, endpoint=False)[:, None]  # (steps, 1)
    pieces = []
    for i in range(len(points) - 1):
        p0, p1, p2, p3 = padded[i : i + 4]
        pieces.append(
            0.5
            * (
                2 * p1
                + (p2 - p0) * t
                + (2 * p0 - 5 * p1 + 4 * p2 - p3) * t**2
                + (3 * p1 - p0 - 3 * p2 + p3) * t**3
            )
        )
    return np.concatenate(pieces + [points[-1:]])


def _break_stroke(curve, rng, broken):
    """The curve, or with probability `broken` its two parts around a gap."""
    if len(curve) < 8 or rng.uniform() >= broken:
        return [curve]
    gap = max(2, int(len(curve) * rng.uniform(0.1, 0.25)))
    start = int(rng.integers(2, len(curve) - gap - 1))
    return [curve[: start + 1], curve[start + gap :]]


def handwritten_digit(digit, rng, grid=8, broken=0.2, wobble=0.035):
    """A digit as a person might write it, as a `grid x grid` bitmap of 16 ink levels.

    One of the digit's ways of writing (`_DIGIT_HANDS`) is drawn with its
    control points wobbled by `wobble`, slanted, rotated, squeezed and
    moved off centre; each stroke may be broken (`broken`); the pen's width
    varies from thin to heavy. Drawn `_HAND_FINE` times finer as a 1-bit
    bitmap, each cell counts its fine pixels under the pen: 0 to 16 of 16.

    Args:
        digit: one character of "0123456789".
        rng: a `numpy.random.Generator`.
        grid: cells a side (>= 4).
        broken: chance of a gap in each stroke, in [0, 1].
        wobble: standard deviation of each control point's offset, in
            units of the image side, in [0, 1].

    Returns:
        float32 `(grid, grid)` in [0, 1], multiples of 1/16.

    Example:

    >>> import numpy as np
    >>> from benchmarks.learning_digit_folders import handwritten_digit
    >>> cells = handwritten_digit("4", np.random.default_rng(0))
    >>> cells.shape, bool(np.all(cells * 16 == np.round(cells * 16))), bool(cells.max() > 0)
    ((8, 8), True, True)
    """
    if not isinstance(digit, str) or digit not in DIGITS or len(digit) != 1:
        raise ValueError(f"`digit` must be one of {DIGITS!r}. Received: digit={digit!r}")
    grid = _check_count(grid, "grid", 4)
    for name, value in (("broken", broken), ("wobble", wobble)):
        if not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
            raise ValueError(f"`{name}` must be a number in [0, 1]. Received: {name}={value!r}")
    hands = _DIGIT_HANDS[digit]
    strokes = hands[int(rng.integers(len(hands)))]
    angle = math.radians(rng.uniform(-10.0, 10.0))
    slant = rng.uniform(-0.45, 0.25)  # x moves by slant * (y - 0.5): forward slant mostly
    rotation = np.array([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])
    linear = rotation @ np.array([[1.0, slant], [0.0, 1.0]])
    linear = linear @ np.diag([rng.uniform(0.6, 1.15), rng.uniform(0.75, 1.05)])
    offset = 0.5 + rng.uniform(-0.07, 0.07, size=2)
    curves = []
    for stroke in strokes:
        points = np.asarray(stroke, np.float64) + rng.normal(0.0, wobble, (len(stroke), 2))
        curve = (_spline(points) - 0.5) @ linear.T + offset  # (N, 2) in the unit box
        curves.extend(_break_stroke(curve, rng, broken))
    side = grid * _HAND_FINE
    half_width = rng.uniform(*_HAND_PEN) * side / 2 + 0.5  # in fine pixels
    centres = np.arange(side, dtype=np.float64) + 0.5  # fine pixel centres
    rows, cols = centres[:, None, None], centres[None, :, None]  # (F, 1, 1), (1, F, 1)
    distance = np.full((side, side), np.inf)
    for curve in curves:
        start, end = curve[:-1] * side, curve[1:] * side  # (S, 2) as (x, y)
        direction = end - start
        length2 = np.maximum((direction**2).sum(-1), 1e-9)
        from_x, from_y = cols - start[:, 0], rows - start[:, 1]  # (1, F, S), (F, 1, S)
        along = np.clip((from_x * direction[:, 0] + from_y * direction[:, 1]) / length2, 0, 1)
        gap = (from_x - along * direction[:, 0]) ** 2 + (from_y - along * direction[:, 1]) ** 2
        distance = np.minimum(distance, np.sqrt(gap.min(-1)))  # (F, F)
    fine = (distance <= half_width).astype(np.float32)  # (F, F) 1-bit pen
    counts = fine.reshape(grid, _HAND_FINE, grid, _HAND_FINE).sum(axis=(1, 3))  # (grid, grid)
    return (counts / _HAND_FINE**2).astype(np.float32)


def make_handwritten_digit_folder(
    directory,
    num_per_class=135,
    grid=8,
    scale=4,
    dark_ink=False,
    broken=0.2,
    wobble=0.035,
    seed=0,
):
    """Writes one class folder per digit of `handwritten_digit` bitmaps enlarged `scale` times.

    Like scikit-learn's `load_digits` images (8 x 8 cells of 16 ink levels)
    enlarged to 32 x 32 by repeating each cell: digits written in several
    ways, slanted, off centre, thin or heavy, some strokes broken.

    Args:
        directory: folder to write (created if missing).
        num_per_class: images per digit.
        grid: bitmap cells a side.
        scale: pixels per cell side in the written PNGs (nearest neighbour).
        dark_ink: black ink on white (light ink on black when False).
        broken: chance of a gap in each stroke.
        wobble: how far each control point strays (`handwritten_digit`).
        seed: seed of everything drawn.

    Returns:
        dict with "directory", "class_names", "num_per_class", "num_images"
        and "image_size" `(grid * scale, grid * scale)`.

    Example:

    >>> import os, tempfile
    >>> from PIL import Image
    >>> from benchmarks.learning_digit_folders import make_handwritten_digit_folder
    >>> with tempfile.TemporaryDirectory() as directory:
    ...     info = make_handwritten_digit_folder(directory, num_per_class=1)
    ...     image = Image.open(os.path.join(directory, "7", "7_00000.png"))
    ...     info["num_images"], image.size, image.mode
    (10, (32, 32), 'RGB')
    """
    draw = functools.partial(handwritten_digit, grid=grid, broken=broken, wobble=wobble)
    return _write_digit_folder(directory, num_per_class, draw, grid, scale, dark_ink, seed)


def _write_digit_folder(directory, num_per_class, draw, grid, scale, dark_ink, seed):
    """Writes `num_per_class` PNGs per digit, `draw(digit, rng)`'s cells enlarged `scale` times.

    One image of each digit is drawn in turn, so that with more images per
    class a seed still gives the same first ones. Returns the makers' dict.
    """
    num_per_class = _check_count(num_per_class, "num_per_class")
    scale = _check_scale(scale)
    rng = np.random.default_rng(seed)
    for digit in DIGITS:
        os.makedirs(os.path.join(directory, digit), exist_ok=True)
    for index in range(num_per_class):
        for digit in DIGITS:
            pixels = _to_png_pixels(draw(digit, rng), scale, dark_ink)
            path = os.path.join(directory, digit, f"{digit}_{index:05d}.png")
            Image.fromarray(pixels, mode="RGB").save(path)
    side = grid * scale
    return {
        "directory": directory,
        "class_names": list(DIGITS),
        "num_per_class": num_per_class,
        "num_images": num_per_class * len(DIGITS),
        "image_size": (side, side),
    }
