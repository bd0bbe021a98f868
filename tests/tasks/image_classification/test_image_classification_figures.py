"""A ViT's figures: the confusion matrix, rollout maps checked against NumPy, the HTML page."""

import numpy as np
import pytest

from keras_attention.tasks.image_classification import figures as vit_figures

RNG = np.random.default_rng(3)
CLASS_NAMES = ["circle", "square", "star"]


class FakeViT:
    """What the figures read from a ViT: a 2 x 2 grid after a class token, 2 layers of 2 heads."""

    token_layout = ((2, 2), True)

    def __init__(self, num_images):
        # (layers) of (batch, heads, tokens, tokens), rows summing to 1.
        self.maps = [RNG.dirichlet(np.ones(5), size=(num_images, 2, 5)) for _ in range(2)]

    def attention_maps(self, images):
        return [layer[: len(images)] for layer in self.maps]

    def classify(self, images, return_attention=False):
        predicted = [CLASS_NAMES[index % 3] for index in range(len(images))]
        probabilities = np.tile([[0.7, 0.2, 0.1]], (len(images), 1))
        return predicted, probabilities, self.attention_maps(images)


def _rollout_map(maps, index):
    """Class-token rollout of image `index`, computed independently: mean heads, add identity."""
    rollout = np.eye(5)
    for layer in maps:
        fused = layer[index].mean(axis=0)
        residual = 0.5 * fused + 0.5 * np.eye(5)
        residual /= residual.sum(axis=-1, keepdims=True)
        rollout = residual @ rollout
    return rollout[0, 1:].reshape(2, 2)


def test_draw_vit_figures_draws_each_images_rollout(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    drawn = []
    original = vit_figures.plot_rollout

    def recording(image, patch_map, title=None, map_title="attention rollout"):
        drawn.append((patch_map, title))
        return original(image, patch_map, title=title, map_title=map_title)

    monkeypatch.setattr(vit_figures, "plot_rollout", recording)
    model = FakeViT(num_images=2)
    images = RNG.integers(0, 256, (2, 16, 16, 3)).astype("float32")
    labels, predictions = np.array([0, 2, 1, 1]), np.array([0, 1, 1, 2])
    paths = vit_figures.draw_vit_figures(model, tmp_path, labels, predictions, images, CLASS_NAMES)
    assert paths == [
        str(tmp_path / name) for name in ("confusion_matrix.png", "rollout_0.png", "rollout_1.png")
    ]
    assert all(
        (tmp_path / name).stat().st_size > 0 for name in ("confusion_matrix.png", "rollout_1.png")
    )
    assert [title for _, title in drawn] == [
        "true circle, predicted circle",
        "true star, predicted square",
    ]
    for index, (patch_map, _) in enumerate(drawn):
        np.testing.assert_allclose(patch_map, _rollout_map(model.maps, index), rtol=1e-6)


def test_explorer_page_holds_each_image_and_its_prediction(tmp_path):
    model = FakeViT(num_images=3)
    images = RNG.integers(0, 256, (3, 16, 16, 3)).astype("uint8")
    page = tmp_path / "page.html"
    written = vit_figures.write_vit_attention_explorer(model, page, images, [1, 1, 0], CLASS_NAMES)
    text = page.read_text()
    assert written == page and text.startswith("<!DOCTYPE html>")
    assert "Vision Transformer attention" in text
    for label in (
        "true square, predicted circle",
        "true square, predicted square",
        "true circle, predicted star",
    ):
        assert label in text


class FakeSwin:
    """What the figures read from a windowed model: a 2 x 2 map of one token per window, shifted."""

    # Block 0: windows of 2 tokens side by side; block 1 (rolled by one column):
    # each window holds the right token of a row, then the left one.
    window_layouts = [((2, 2), np.array([[0, 1], [2, 3]])), ((2, 2), np.array([[1, 0], [3, 2]]))]

    def __init__(self, num_images):
        # (blocks) of (batch, windows, heads, 2, 2), rows summing to 1.
        self.maps = [RNG.dirichlet(np.ones(2), size=(num_images, 2, 3, 2)) for _ in range(2)]

    def attention_maps(self, images):
        return [block[: len(images)] for block in self.maps]

    def classify(self, images, return_attention=False):
        return FakeViT.classify(self, images, return_attention)


def test_draw_vit_figures_puts_window_attention_back_on_the_map(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    drawn, original = [], vit_figures.plot_rollout

    def recording(image, patch_map, title=None, map_title="attention rollout"):
        drawn.append(patch_map)
        return original(image, patch_map, title=title, map_title=map_title)

    monkeypatch.setattr(vit_figures, "plot_rollout", recording)
    saved = []
    monkeypatch.setattr(vit_figures, "save_figure", lambda f, path: saved.append(f) or path)
    model = FakeSwin(num_images=2)
    images = RNG.integers(0, 256, (2, 8, 8, 3)).astype("float32")
    paths = vit_figures.draw_vit_figures(
        model, tmp_path, np.array([0, 1]), np.array([0, 1]), images, CLASS_NAMES
    )
    assert paths[1:] == [str(tmp_path / f"window_attention_{i}.png") for i in range(2)]
    assert saved[1].axes[1].get_title() == "attention received in its window"
    for index, patch_map in enumerate(drawn):
        # Mean over heads and queries of the weight each key receives, per block,
        # placed at the key's map position, then averaged over the blocks.
        expected = np.zeros(4)
        for block, (_, positions) in zip(model.maps, FakeSwin.window_layouts):
            received = block[index].mean(axis=(1, 2))  # (windows, tokens)
            for window, tokens in enumerate(positions):
                expected[tokens] += received[window] / 2
        np.testing.assert_allclose(patch_map, expected.reshape(2, 2), rtol=1e-6)


def test_explorer_page_of_a_windowed_model(tmp_path):
    model = FakeSwin(num_images=2)
    images = RNG.integers(0, 256, (2, 8, 8, 3)).astype("uint8")
    page = tmp_path / "page.html"
    vit_figures.write_vit_attention_explorer(model, page, images, [1, 0], CLASS_NAMES)
    assert "true circle, predicted square" in page.read_text()
