import matplotlib.image
import numpy as np
import pytest
import tensorflow as tf

from keras_attention.visualization.image_attention import plot_caption_attention
from keras_attention.visualization.image_attention import upsample_attention

WORDS = ["a", "bird", "flying", "over", "water"]


def _reference_heat_map(attention, size, low=None):
    """Bilinear resize by TensorFlow, then scaling from `low` (default: the smallest) to the largest."""
    resized = tf.image.resize(attention[..., None], size, method="bilinear").numpy()[..., 0]
    low = resized.min() if low is None else low
    return (resized - low) / (resized.max() - low)


def _image(height=48, width=64):
    rng = np.random.default_rng(0)
    return rng.integers(0, 256, size=(height, width, 3), dtype=np.uint8)


@pytest.mark.parametrize("size", [(32, 48), (7, 5), (3, 3)])
def test_upsample_matches_bilinear_resize(size):
    attention = np.random.default_rng(1).random((3, 4))
    heat_map = upsample_attention(attention, size)
    assert heat_map.shape == size
    np.testing.assert_allclose(heat_map, _reference_heat_map(attention, size), atol=1e-5)
    assert heat_map.min() == 0.0 and heat_map.max() == 1.0


def test_upsampled_peak_sits_over_the_attended_cell():
    attention = np.zeros((4, 4))
    attention[1, 2] = 1.0  # second row, third column of a 4 x 4 grid
    heat_map = upsample_attention(attention, (40, 80))  # each cell covers 10 x 20 pixels
    row, column = np.unravel_index(heat_map.argmax(), heat_map.shape)
    assert 10 <= row < 20 and 40 <= column < 60


def test_constant_attention_has_no_peak():
    np.testing.assert_array_equal(upsample_attention(np.full((2, 3), 0.5), (4, 6)), 0.0)


def test_upsample_rejects_bad_input():
    with pytest.raises(
        ValueError, match=r"non-empty 2D \(h, w\) map. Received: attention.shape=\(2, 3, 4\)"
    ):
        upsample_attention(np.zeros((2, 3, 4)), (8, 8))
    with pytest.raises(ValueError, match="finite values. Received: attention="):
        upsample_attention(np.array([[0.0, np.nan]]), (8, 8))
    with pytest.raises(
        ValueError, match=r"two positive integers. Received: image_shape=\(8, 8, 3\)"
    ):
        upsample_attention(np.zeros((2, 2)), (8, 8, 3))
    with pytest.raises(ValueError, match=r"Received: image_shape=\(0, 8\)"):
        upsample_attention(np.zeros((2, 2)), (0, 8))


def test_caption_figure_has_the_image_then_one_panel_per_word(tmp_path):
    image = _image()
    attention = np.random.default_rng(2).random((len(WORDS), 3, 4))
    figure = plot_caption_attention(image, attention, WORDS, columns=3, title="a bird")

    assert len(figure.axes) == len(WORDS) + 1
    assert [axes.get_title() for axes in figure.axes] == [""] + WORDS
    assert figure.get_suptitle() == "a bird"
    np.testing.assert_allclose(figure.axes[0].images[0].get_array(), image / 255.0)
    for axes, word_attention in zip(figure.axes[1:], attention):
        picture, heat_map = axes.images
        # The heat map covers exactly the image's pixels, so it lines up with it.
        assert heat_map.get_array().shape == image.shape[:2]
        assert heat_map.get_extent() == picture.get_extent()
        # Coloured from weight 0 to the map's largest weight.
        expected = _reference_heat_map(word_attention, image.shape[:2], low=0.0)
        np.testing.assert_allclose(heat_map.get_array(), expected, atol=1e-5)

    path = tmp_path / "caption.png"
    figure.savefig(path)
    pixels = matplotlib.image.imread(path)
    assert pixels.ndim == 3 and pixels.shape[2] == 4 and pixels.std() > 0.0


def test_control_characters_of_a_generated_caption_are_drawn_as_escapes(tmp_path, recwarn):
    # An untrained captioner's byte pieces: no font has a glyph for them.
    words = ["a", "cat\x1f", "\x7f"]
    figure = plot_caption_attention(_image(), np.ones((3, 3, 4)), words, title="a cat\x1f\x7f")
    assert [axes.get_title() for axes in figure.axes[1:]] == ["a", "cat\\x1f", "\\x7f"]
    assert figure.get_suptitle() == "a cat\\x1f\\x7f"
    figure.savefig(tmp_path / "caption.png")
    assert not [w for w in recwarn if "missing from font" in str(w.message)]


def test_caption_figure_accepts_grayscale_float_images():
    image = np.linspace(0.0, 255.0, 32 * 32).reshape(32, 32, 1)
    figure = plot_caption_attention(image, np.ones((1, 2, 2)), [b"bird"])
    assert [axes.get_title() for axes in figure.axes] == ["", "bird"]
    np.testing.assert_allclose(figure.axes[0].images[0].get_array(), image[..., 0] / 255.0)


def test_caption_figure_rejects_bad_input():
    image = _image()
    with pytest.raises(
        ValueError,
        match=r"len\(words\) == attention.shape\[0\]. Received: len\(words\)=5, attention.shape=\(4, 3, 3\)",
    ):
        plot_caption_attention(image, np.ones((4, 3, 3)), WORDS)
    with pytest.raises(ValueError, match=r"shape \(T, h, w\).*Received: attention.shape=\(5, 9\)"):
        plot_caption_attention(image, np.ones((5, 9)), WORDS)
    with pytest.raises(ValueError, match=r"Received: image.shape=\(48, 64, 4\)"):
        plot_caption_attention(np.zeros((48, 64, 4)), np.ones((5, 3, 3)), WORDS)
    with pytest.raises(ValueError, match="positive integer. Received: columns=0"):
        plot_caption_attention(image, np.ones((5, 3, 3)), WORDS, columns=0)


@pytest.mark.parametrize("words", [[], (), np.array([], dtype=object)])
def test_empty_caption_draws_the_image_with_a_note(tmp_path, words):
    from keras_attention.visualization.image_attention import EMPTY_CAPTION_NOTE

    image = _image(32, 96)
    figure = plot_caption_attention(image, np.zeros((0, 8, 24)), words, title="")
    (axes,) = figure.axes
    assert axes.get_xlabel() == EMPTY_CAPTION_NOTE
    np.testing.assert_allclose(axes.images[0].get_array(), image / 255.0)
    figure.savefig(tmp_path / "empty.png")
    assert (tmp_path / "empty.png").stat().st_size > 0


def test_empty_caption_with_attention_maps_is_refused():
    with pytest.raises(
        ValueError,
        match=r"no attention map for an empty caption.*Received: len\(words\)=0, attention.shape=\(2, 3, 3\)",
    ):
        plot_caption_attention(_image(), np.ones((2, 3, 3)), [])


def _colour_bar_labels(panel):
    (bar_axes,) = panel.child_axes
    panel.figure.canvas.draw()
    return [label.get_text() for label in bar_axes.get_yticklabels()]


def test_every_word_panel_has_a_colour_bar_in_attention_weights():
    # A 2 x 2 map resized to 4 x 4 (half-pixel centres) keeps its largest weight,
    # 0.15 under the attended cell; the colours start at weight 0.
    attention = 0.05 + 0.1 * np.array([[[0.0, 1.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 1.0]]])
    figure = plot_caption_attention(np.zeros((4, 4, 3), "uint8"), attention, ["red", "circle"])
    assert [axes.get_title() for axes in figure.axes] == ["", "red", "circle"]
    assert not figure.axes[0].child_axes  # the plain image has no colour bar
    for panel in figure.axes[1:]:
        assert _colour_bar_labels(panel) == ["0", "0.075", "0.15"]


def test_upsample_scales_from_a_given_low_weight():
    attention = np.array([[0.2, 0.4], [0.4, 0.4]])
    heat_map, value_range = upsample_attention(attention, (2, 2), return_range=True, low=0.0)
    np.testing.assert_allclose(heat_map, attention / 0.4)
    assert value_range == (0.0, 0.4)
    np.testing.assert_allclose(upsample_attention(np.full((2, 3), 0.5), (4, 6), low=0.0), 1.0)
    np.testing.assert_array_equal(upsample_attention(np.zeros((2, 3)), (4, 6), low=0.0), 0.0)
    # A low above the smallest weight lowers to it: the heat map stays in [0, 1].
    assert upsample_attention(attention, (2, 2), low=0.3).min() == 0.0
    for low in ("0", float("nan"), True):
        with pytest.raises(ValueError, match="Received: low="):
            upsample_attention(attention, (2, 2), low=low)
