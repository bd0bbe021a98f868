"""The explorer pages in a real headless browser: controls, hovering, clicking and colours.

Each page is written once per module and opened from `file://` in Chromium
(through playwright). What is shown is read back from the DOM (`data-weight`
attributes) and from screenshots, and compared with the input arrays and
with matplotlib's viridis, computed here in NumPy.
"""

import io
import shutil

import numpy as np
import pytest

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install playwright)"
)
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium executable on PATH (apt-get install chromium)"
)
pytest.importorskip("matplotlib")
import matplotlib  # noqa: E402  (after the skips: playwright and matplotlib are optional)
import matplotlib.image  # noqa: E402

from keras_attention.visualization import write_caption_explorer  # noqa: E402
from keras_attention.visualization import write_translation_explorer  # noqa: E402
from keras_attention.visualization import write_vit_explorer  # noqa: E402

RNG = np.random.default_rng(3)
# Colours are within 3/255 of matplotlib's viridis, plus a little for rounding.
COLOR_TOLERANCE = 5

TRANSLATION = [
    {
        "source_tokens": ["la", "maison", "bleue", "</script>"],
        "target_tokens": ["the", "blue", "house"],
        "cross_attention": RNG.dirichlet(np.ones(4), size=(2, 3, 3)),  # (L, H, T, S)
        "encoder_attention": RNG.dirichlet(np.ones(4), size=(2, 3, 4)),  # (L, H, S, S)
        "decoder_attention": RNG.dirichlet(np.ones(3), size=(2, 3, 3)),  # (L, H, T, T)
    },
    {
        "source_tokens": ["hola", "mundo"],
        "target_tokens": ["hello", "world", "!"],
        "cross_attention": RNG.dirichlet(np.ones(2), size=(1, 2, 3)),
        "name": "greeting",
    },
]
CAPTION = [
    {
        "image": RNG.integers(0, 256, (48, 64, 3), dtype="uint8"),
        "words": ["a", "red", "circle", "left"],
        "attention": RNG.dirichlet(np.ones(12), size=4).reshape(4, 3, 4),  # (T, h, w)
    }
]
VIT = [
    {
        "image": RNG.integers(0, 256, (32, 48, 3), dtype="uint8"),
        "label": "cat",
        "probability": 0.75,
        "attention": RNG.dirichlet(np.ones(7), size=(2, 3, 7)),  # (L, H, 1 + 2 * 3, same)
        "grid_size": (2, 3),
    },
    {
        "image": RNG.integers(0, 256, (32, 32), dtype="uint8"),
        "label": "dog",
        "attention": RNG.dirichlet(np.ones(4), size=(1, 2, 4)),  # no class token: 2 x 2
        "grid_size": (2, 2),
        "has_class_token": False,
    },
]


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    folder = tmp_path_factory.mktemp("explorer")
    return {
        "translation": write_translation_explorer(folder / "translation.html", TRANSLATION),
        "caption": write_caption_explorer(folder / "caption.html", CAPTION),
        "vit": write_vit_explorer(folder / "vit.html", VIT),
    }


@pytest.fixture
def open_page(browser, pages):
    """Opens a page from disk; the test then checks `problems` (errors, failed or remote loads)."""
    opened = []

    def open_(name):
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        problems = []
        page.on(
            "console",
            lambda message: (
                problems.append(f"console {message.type}: {message.text}")
                if message.type in ("error", "warning")
                else None
            ),
        )
        page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
        page.on("requestfailed", lambda request: problems.append(f"failed: {request.url}"))
        page.on(
            "request",
            lambda request: (
                problems.append(f"remote request: {request.url}")
                if not request.url.startswith(("file://", "data:"))
                else None
            ),
        )
        page.goto(pages[name].as_uri())
        opened.append(page)
        return page, problems

    yield open_
    for page in opened:
        page.close()


def _weights(page, selector):
    """{index: weight} of the elements matching `selector` that carry data-weight."""
    pairs = page.eval_on_selector_all(
        selector,
        "nodes => nodes.filter(n => n.dataset.weight !== undefined)"
        ".map(n => [Number(n.dataset.index), Number(n.dataset.weight)])",
    )
    return dict(pairs)


def _grid(page):
    """The overlay's cells as a (rows, cols) array of their data-weight."""
    cells = page.eval_on_selector_all(
        "#overlay .patch",
        "nodes => nodes.map(n => [Number(n.dataset.row), Number(n.dataset.col), "
        "Number(n.dataset.weight)])",
    )
    cells = np.array(cells)
    grid = np.zeros((int(cells[:, 0].max()) + 1, int(cells[:, 1].max()) + 1))
    grid[cells[:, 0].astype(int), cells[:, 1].astype(int)] = cells[:, 2]
    return grid


def _colorbar(page):
    return page.eval_on_selector(
        ".colorbar",
        "n => [Number(n.dataset.min), Number(n.dataset.max), "
        "n.querySelector('.colorbar-min').textContent, "
        "n.querySelector('.colorbar-max').textContent]",
    )


def _expected_colors(weights):
    """matplotlib's viridis over the weights' own min..max, as 0..255 RGB."""
    weights = np.asarray(weights, dtype="float64")
    low, high = weights.min(), weights.max()
    positions = (weights - low) / (high - low) if high > low else np.zeros_like(weights)
    return matplotlib.colormaps["viridis"](positions)[..., :3] * 255.0


def _colors_at_centres(page, selector):
    """RGB (0..255) of the screenshot at the centre of each element matching `selector`."""
    screenshot = matplotlib.image.imread(io.BytesIO(page.screenshot(full_page=True)), format="png")
    colors = []
    for handle in page.query_selector_all(selector):
        box = handle.bounding_box()
        x, y = int(box["x"] + box["width"] / 2), int(box["y"] + box["height"] / 2)
        colors.append(screenshot[y, x, :3] * 255.0)
    return np.array(colors)


# --- translation -----------------------------------------------------------------------


def test_translation_layer_and_head_controls_choose_the_slice(open_page):
    page, problems = open_page("translation")
    cross = TRANSLATION[0]["cross_attention"]
    page.select_option("#layer", "1")
    page.select_option("#head", "0")
    root = page.locator("#explorer")
    assert (root.get_attribute("data-layer"), root.get_attribute("data-head")) == ("1", "0")
    for target in range(3):
        page.hover(f".column[data-side=queries] .token[data-index='{target}']")
        shown = _weights(page, ".column[data-side=keys] .token")
        np.testing.assert_allclose([shown[s] for s in range(4)], cross[1, 0, target], atol=1e-3)
        lines = page.eval_on_selector_all(
            ".links line",
            "ls => ls.filter(l => l.style.display !== 'none')"
            ".map(l => [Number(l.dataset.query), Number(l.dataset.weight)])",
        )
        assert [query for query, _ in lines] == [target] * 4
        np.testing.assert_allclose([w for _, w in lines], cross[1, 0, target], atol=1e-3)
    assert problems == []


def test_translation_mean_of_heads_and_hovering_a_source_word(open_page):
    page, problems = open_page("translation")
    cross = TRANSLATION[0]["cross_attention"]
    page.select_option("#layer", "0")
    page.select_option("#head", "mean")
    page.hover(".column[data-side=keys] .token[data-index='1']")
    shown = _weights(page, ".column[data-side=queries] .token")
    # Who attended to source word 1: column 1 of the head-averaged matrix.
    np.testing.assert_allclose([shown[t] for t in range(3)], cross[0].mean(0)[:, 1], atol=1e-3)
    assert page.locator("#explorer").get_attribute("data-head") == "mean"
    assert problems == []


def test_translation_self_attention_kinds_and_a_pinned_word(open_page):
    page, problems = open_page("translation")
    encoder = TRANSLATION[0]["encoder_attention"]
    decoder = TRANSLATION[0]["decoder_attention"]
    page.select_option("#kind", "encoder_attention")
    page.select_option("#layer", "1")
    page.select_option("#head", "2")
    queries = page.locator(".column[data-side=queries] .token").all_text_contents()
    assert queries == TRANSLATION[0]["source_tokens"]
    page.click(".column[data-side=queries] .token[data-index='3']")
    page.hover("h1")  # a clicked word stays shown when the cursor leaves it
    shown = _weights(page, ".column[data-side=keys] .token")
    np.testing.assert_allclose([shown[s] for s in range(4)], encoder[1, 2, 3], atol=1e-3)
    page.select_option("#kind", "decoder_attention")
    page.hover(".column[data-side=queries] .token[data-index='2']")
    shown = _weights(page, ".column[data-side=keys] .token")
    np.testing.assert_allclose([shown[t] for t in range(3)], decoder[1, 2, 2], atol=1e-3)
    assert problems == []


def test_translation_example_picker(open_page):
    page, problems = open_page("translation")
    page.select_option("#example", "1")
    assert page.locator("#example option:checked").text_content() == "greeting"
    kinds = page.eval_on_selector_all("#kind option", "options => options.map(o => o.value)")
    assert kinds == ["cross_attention"]
    assert page.locator(".column[data-side=keys] .token").all_text_contents() == ["hola", "mundo"]
    page.hover(".column[data-side=queries] .token[data-index='2']")
    shown = _weights(page, ".column[data-side=keys] .token")
    expected = TRANSLATION[1]["cross_attention"][0].mean(0)[2]
    np.testing.assert_allclose([shown[0], shown[1]], expected, atol=1e-3)
    assert problems == []


def test_translation_matrix_view_values_colorbar_and_colors(open_page):
    page, problems = open_page("translation")
    cross = TRANSLATION[0]["cross_attention"][1, 1]  # (T, S)
    page.select_option("#view", "matrix")
    page.select_option("#layer", "1")
    page.select_option("#head", "1")
    assert page.locator("#lines").is_hidden() and page.locator("#matrix").is_visible()
    cells = page.eval_on_selector_all(
        "#matrix td.cell",
        "cells => cells.map(c => [Number(c.dataset.query), Number(c.dataset.key), "
        "Number(c.dataset.weight)])",
    )
    shown = np.zeros_like(cross)
    for query, key, weight in cells:
        shown[int(query), int(key)] = weight
    assert len(cells) == cross.size
    np.testing.assert_allclose(shown, cross, atol=1e-3)
    low, high, low_text, high_text = _colorbar(page)
    np.testing.assert_allclose([low, high], [cross.min(), cross.max()], atol=1e-3)
    assert float(low_text) == pytest.approx(cross.min(), rel=1e-2)
    assert float(high_text) == pytest.approx(cross.max(), rel=1e-2)
    # Cells come in row order: query 0's keys first.
    colors = _colors_at_centres(page, "#matrix td.cell")
    np.testing.assert_allclose(colors, _expected_colors(cross).reshape(-1, 3), atol=COLOR_TOLERANCE)
    page.hover("#matrix td.cell[data-query='2'][data-key='1']")
    readout = float(page.locator("#readout").get_attribute("data-weight"))
    assert readout == pytest.approx(cross[2, 1], abs=1e-3)
    # Hovering a row's word outlines its row and weighs the column words.
    page.hover("#matrix th .token[data-side=queries][data-index='2']")
    focused = page.eval_on_selector_all(
        "#matrix td.cell.focused", "cells => cells.map(c => Number(c.dataset.query))"
    )
    assert focused == [2] * cross.shape[1]
    shown = _weights(page, "#matrix th .token[data-side=keys]")
    np.testing.assert_allclose([shown[s] for s in range(4)], cross[2], atol=1e-3)
    assert problems == []


# --- captioning ------------------------------------------------------------------------


def test_caption_hover_click_and_arrow_keys_pick_the_word(open_page):
    page, problems = open_page("caption")
    attention = CAPTION[0]["attention"]
    root = page.locator("#explorer")
    np.testing.assert_allclose(_grid(page), attention[0], atol=1e-3)
    page.hover("#words .token[data-index='2']")
    assert root.get_attribute("data-word") == "2"
    np.testing.assert_allclose(_grid(page), attention[2], atol=1e-3)
    page.click("#words .token[data-index='1']")
    page.hover("h1")  # back to the clicked word
    np.testing.assert_allclose(_grid(page), attention[1], atol=1e-3)
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert root.get_attribute("data-word") == "3"
    np.testing.assert_allclose(_grid(page), attention[3], atol=1e-3)
    page.click("#previous")
    assert root.get_attribute("data-word") == "2"
    page.keyboard.press("ArrowLeft")
    page.click("#next")
    page.hover("h1")
    assert root.get_attribute("data-word") == "2"
    assert problems == []


def test_caption_colorbar_and_heat_map_colors(open_page):
    page, problems = open_page("caption")
    attention = CAPTION[0]["attention"][3]  # (h, w)
    page.click("#words .token[data-index='3']")
    page.hover("h1")
    page.fill("#opacity", "1")  # the cells alone, not blended with the image
    low, high, _, _ = _colorbar(page)
    np.testing.assert_allclose([low, high], [attention.min(), attention.max()], atol=1e-3)
    colors = _colors_at_centres(page, "#overlay .patch")
    expected = _expected_colors(attention).reshape(-1, 3)  # cells in row order
    np.testing.assert_allclose(colors, expected, atol=COLOR_TOLERANCE)
    # The overlay covers the image, which keeps its aspect ratio (48 x 64).
    image_box = page.locator("#image").bounding_box()
    overlay_box = page.locator("#overlay").bounding_box()
    assert overlay_box == pytest.approx(image_box, abs=1)
    assert image_box["height"] / image_box["width"] == pytest.approx(48 / 64, abs=0.01)
    assert problems == []


# --- Vision Transformer ----------------------------------------------------------------


def _numpy_rollout(attention):
    """Abnar and Zuidema's rollout: heads averaged, half residual, rows renormalised."""
    tokens = attention.shape[-1]
    rollout = np.eye(tokens)
    for layer in attention:
        mixed = 0.5 * layer.mean(axis=0) + 0.5 * np.eye(tokens)
        rollout = (mixed / mixed.sum(-1, keepdims=True)) @ rollout
    return rollout


def test_vit_rollout_is_the_default_map(open_page):
    page, problems = open_page("vit")
    attention = VIT[0]["attention"]
    root = page.locator("#explorer")
    assert (root.get_attribute("data-layer"), root.get_attribute("data-query")) == ("rollout", "0")
    expected = _numpy_rollout(attention)[0, 1:].reshape(2, 3)  # class token's row, patches only
    np.testing.assert_allclose(_grid(page), expected, atol=1e-3)
    assert "cat" in page.locator("#prediction").text_content()
    assert "0.750" in page.locator("#prediction").text_content()
    # Clicking a patch shows the rollout's row of that patch.
    page.click("#overlay .patch[data-row='0'][data-col='1']")
    expected = _numpy_rollout(attention)[1 + 1, 1:].reshape(2, 3)
    np.testing.assert_allclose(_grid(page), expected, atol=1e-3)
    assert problems == []


def test_vit_layer_head_and_clicked_patch(open_page):
    page, problems = open_page("vit")
    attention = VIT[0]["attention"]  # (L, H, 7, 7)
    root = page.locator("#explorer")
    page.select_option("#layer", "1")
    page.select_option("#head", "0")
    np.testing.assert_allclose(_grid(page), attention[1, 0, 0, 1:].reshape(2, 3), atol=1e-3)
    page.click("#overlay .patch[data-row='1'][data-col='2']")  # token 1 + 1 * 3 + 2 = 6
    assert root.get_attribute("data-query") == "6"
    np.testing.assert_allclose(_grid(page), attention[1, 0, 6, 1:].reshape(2, 3), atol=1e-3)
    page.select_option("#head", "mean")
    np.testing.assert_allclose(_grid(page), attention[1].mean(0)[6, 1:].reshape(2, 3), atol=1e-3)
    page.click("#overlay .patch[data-row='1'][data-col='2']")  # again: back to the class token
    assert root.get_attribute("data-query") == "0"
    np.testing.assert_allclose(_grid(page), attention[1].mean(0)[0, 1:].reshape(2, 3), atol=1e-3)
    assert problems == []


def test_vit_without_class_token_and_colors(open_page):
    page, problems = open_page("vit")
    attention = VIT[1]["attention"]  # (1, 2, 4, 4), no class token
    page.select_option("#example", "1")
    page.select_option("#layer", "0")
    page.select_option("#head", "1")
    assert page.locator("#explorer").get_attribute("data-query") == "mean"
    expected = attention[0, 1].mean(axis=0).reshape(2, 2)  # mean of every token's row
    np.testing.assert_allclose(_grid(page), expected, atol=1e-3)
    page.click("#overlay .patch[data-row='1'][data-col='0']")  # token 2
    expected = attention[0, 1, 2].reshape(2, 2)
    np.testing.assert_allclose(_grid(page), expected, atol=1e-3)
    page.fill("#opacity", "1")
    low, high, _, _ = _colorbar(page)
    np.testing.assert_allclose([low, high], [expected.min(), expected.max()], atol=1e-3)
    colors = _colors_at_centres(page, "#overlay .patch")
    np.testing.assert_allclose(
        colors, _expected_colors(expected).reshape(-1, 3), atol=COLOR_TOLERANCE
    )
    assert problems == []
