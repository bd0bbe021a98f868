import math

import numpy as np
import pytest

from keras_attention.tasks.captioning.attention_on_objects import attention_on_mask
from keras_attention.tasks.captioning.attention_on_objects import attention_on_objects_summary
from keras_attention.tasks.captioning.attention_on_objects import mask_coverage_on_grid
from keras_attention.tasks.captioning.attention_on_objects import object_attention_fractions
from keras_attention.tasks.captioning.builtin_scenes import generate_shape_scenes

RNG = np.random.default_rng(0)


def _mass_in_mask_by_box_upsampling(attention, mask):
    """Spread each cell's weight evenly over its pixels on a grid fine enough for
    cells and pixels to align, then add the weight on the mask's pixels."""
    (h, w), (H, W) = attention.shape, mask.shape
    rows, cols = math.lcm(h, H), math.lcm(w, W)
    fine_attention = np.kron(attention, np.ones((rows // h, cols // w))) / (rows // h * cols // w)
    fine_mask = np.kron(mask.astype(float), np.ones((rows // H, cols // W)))
    return (fine_attention * fine_mask).sum() / attention.sum()


@pytest.mark.parametrize("grid, image", [((4, 4), (16, 16)), ((3, 5), (16, 12)), ((5, 5), (5, 5))])
def test_attention_on_mask_is_the_mass_in_the_mask_after_box_upsampling(grid, image):
    for _ in range(3):
        attention = RNG.random(grid)
        mask = RNG.random(image) < 0.3
        expected = _mass_in_mask_by_box_upsampling(attention, mask)
        assert attention_on_mask(attention, mask) == pytest.approx(expected, abs=1e-12)


def test_coverage_by_hand():
    mask = np.zeros((6, 6), bool)
    mask[0:3, 0:2] = True  # a 3x2 block in the top-left corner
    # 3x3 cells of 2x2 pixels: the first column of cells holds 4, 2 and 0 mask pixels.
    np.testing.assert_allclose(
        mask_coverage_on_grid(mask, (3, 3)), [[1, 0, 0], [0.5, 0, 0], [0, 0, 0]]
    )
    # 4 rows of 1.5 pixels: row 1 covers pixels 1.5..3 -> pixel 1 half, pixel 2 whole.
    np.testing.assert_allclose(mask_coverage_on_grid(mask, (4, 1))[:, 0], [1 / 3, 1 / 3, 0, 0])
    assert attention_on_mask(np.zeros((3, 3)), mask) == 0.0


def test_objects_are_matched_to_the_occurrences_of_their_shape_word():
    top = np.zeros((4, 4), bool)
    top[:2] = True
    bottom = ~top
    objects = [
        {"shape": "circle", "mask": top},
        {"shape": "circle", "mask": bottom},
        {"shape": "square", "mask": top},
    ]
    on_top = np.array([[1.0, 1.0], [0.0, 0.0]])
    half = np.full((2, 2), 0.25)
    attention = np.stack([half, on_top, half, on_top[::-1], half])  # 5 steps
    words = ["a", "circle", "and", b"circle", "x"]
    assert object_attention_fractions(words, attention, objects) == [1.0, 1.0, None]
    summary = attention_on_objects_summary([words], attention[None], [objects])
    assert summary == {"fraction": 1.0, "chance": 0.5, "measured": 2, "objects": 3}


def test_on_generated_scenes_the_shape_word_step_is_measured_and_uniform_maps_score_chance():
    scenes = generate_shape_scenes(4, image_size=48, seed=1)
    for caption, objects in zip(scenes["captions"], scenes["object_masks"]):
        words = caption.split()
        attention = RNG.random((len(words), 12, 12))
        expected = [
            _mass_in_mask_by_box_upsampling(attention[item["word_index"]], item["mask"])
            for item in objects
        ]
        np.testing.assert_allclose(object_attention_fractions(words, attention, objects), expected)
        uniform = object_attention_fractions(words, np.ones_like(attention), objects)
        np.testing.assert_allclose(uniform, [item["mask"].mean() for item in objects])


def test_bad_arguments():
    mask = np.ones((4, 4), bool)
    with pytest.raises(
        ValueError, match=r"`mask` must be a non-empty \(H, W\) array. Received: mask.shape=\(4,\)"
    ):
        mask_coverage_on_grid(np.ones(4), (2, 2))
    with pytest.raises(
        ValueError, match=r"`grid_size` must be \(h, w\), .* Received: grid_size=\(8, 2\)"
    ):
        mask_coverage_on_grid(mask, (8, 2))
    with pytest.raises(
        ValueError, match=r"`attention` must be a finite, non-negative \(h, w\) map"
    ):
        attention_on_mask(-np.ones((2, 2)), mask)
    with pytest.raises(
        ValueError,
        match=r"`attention` must be \(steps, h, w\) .* Received: attention.shape=\(1, 2, 2\) for 2 words",
    ):
        object_attention_fractions(["a", "b"], np.ones((1, 2, 2)), [])
    with pytest.raises(ValueError, match=r"one entry per scene. Received: 1, 2 and 1 entries"):
        attention_on_objects_summary([["a"]], [np.ones((1, 2, 2))] * 2, [[]])


def test_attention_peak_in_box_on_a_non_square_grid():
    from keras_attention.tasks.captioning.attention_on_objects import attention_peak_in_box

    # An 8 x 24 grid over a 32 x 96 strip: cell (r, c) is centred on (4 r + 2, 4 c + 2).
    for row, column in [(0, 0), (3, 10), (7, 23)]:
        attention = np.full((8, 24), 0.1)
        attention[row, column] = 1.0
        centre = (4 * row + 2, 4 * column + 2)
        inside = (centre[0] - 1, centre[1] - 1, centre[0] + 1, centre[1] + 1)
        assert attention_peak_in_box(attention, inside, (32, 96))
        beside = (0, centre[1] + 1, 32, 96)
        assert not attention_peak_in_box(attention, beside, (32, 96))
    with pytest.raises(
        ValueError, match=r"`box` must be \(top, left, bottom, right\). Received: box=\(1, 2\)"
    ):
        attention_peak_in_box(np.ones((2, 2)), (1, 2), (8, 8))
    with pytest.raises(ValueError, match=r"`attention` must be a finite, non-empty \(h, w\) map"):
        attention_peak_in_box(np.ones(4), (0, 0, 1, 1), (8, 8))
