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
  digits side by side, captioned with their names ("one three five").

Every maker is deterministic in `seed` (0 for training, 1 for held-out data).

Example:

>>> import numpy as np
>>> from benchmarks.learning_digit_folders import pixel_digit
>>> cells = pixel_digit("7", np.random.default_rng(0))
>>> cells.shape, bool(np.all(cells * 16 == np.round(cells * 16)))
((8, 8), True)
"""

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
    num_per_class = _check_count(num_per_class, "num_per_class")
    scale = _check_scale(scale)
    rng = np.random.default_rng(seed)
    for digit in DIGITS:
        os.makedirs(os.path.join(directory, digit), exist_ok=True)
    for index in range(num_per_class):
        for digit in DIGITS:
            cells = pixel_digit(digit, rng, grid, levels, noise)
            pixels = _to_png_pixels(cells, scale, dark_ink)
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
