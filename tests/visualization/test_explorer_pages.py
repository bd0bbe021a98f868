"""The explorer pages without a browser: word pooling, input checks, and what the file holds."""

import base64
import io
import json
import re

import numpy as np
import pytest

from keras_attention.visualization import whole_word_example
from keras_attention.visualization import word_maps
from keras_attention.visualization import words_and_attention
from keras_attention.visualization import write_caption_explorer
from keras_attention.visualization import write_translation_explorer
from keras_attention.visualization import write_vit_explorer
from keras_attention.visualization.explorer.page import VIRIDIS

RNG = np.random.default_rng(7)


def _translation_example():
    return {
        "source_tokens": ["la", "maison", "bleue"],
        "target_tokens": ["the", "blue", "house", "</script>"],
        "cross_attention": RNG.dirichlet(np.ones(3), size=(2, 3, 4)),
        "encoder_attention": RNG.dirichlet(np.ones(3), size=(2, 3, 3)),
    }


def _caption_example():
    return {
        "image": RNG.integers(0, 256, (12, 16, 3), dtype="uint8"),
        "words": ["a", "red", "circle"],
        "attention": RNG.dirichlet(np.ones(12), size=3).reshape(3, 3, 4),
    }


def _vit_example():
    return {
        "image": RNG.integers(0, 256, (16, 24, 3), dtype="uint8"),
        "label": "cat",
        "attention": RNG.dirichlet(np.ones(7), size=(2, 2, 7)),
        "grid_size": (2, 3),
    }


def _page_data(path):
    text = path.read_text(encoding="utf-8")
    match = re.search(r'<script type="application/json" id="explorer-data">(.*?)</script>', text)
    return json.loads(match.group(1))


def _decode(encoded):
    values = np.frombuffer(base64.b64decode(encoded["data"]), dtype="<f4")
    return values.reshape(encoded["shape"])


# --- words_and_attention ---------------------------------------------------------------


def test_leading_space_pieces_become_words_with_pooled_attention():
    source = ["It", "'s", " 01", ".", "01"]  # words: "It's" (0, 1), "01.01" (2, 3, 4)
    target = ["C'", "est", " le", " 1er"]  # words: "C'est" (0, 1), "le" (2), "1er" (3)
    attention = RNG.random((2, 3, 4, 5))
    source_words, target_words, pooled = words_and_attention(source, target, attention)
    assert source_words == ["It's", "01.01"]
    assert target_words == ["C'est", "le", "1er"]
    # Hand-pooled: columns of a word summed, rows of a word averaged.
    columns = np.stack(
        [attention[..., [0, 1]].sum(-1), attention[..., [2, 3, 4]].sum(-1)], axis=-1
    )  # (2, 3, 4, 2)
    expected = np.stack(
        [columns[..., [0, 1], :].mean(-2), columns[..., 2, :], columns[..., 3, :]], -2
    )
    np.testing.assert_allclose(pooled, expected, atol=1e-12)


def test_wordpiece_pieces_and_special_tokens():
    source = ["[START]", "un", "##believ", "##able", "news", "[END]"]
    target = ["in", "##cred", "##ible", "[END]"]
    attention = RNG.random((4, 6))
    source_words, target_words, pooled = words_and_attention(
        source, target, attention, continuation="wordpiece"
    )
    assert source_words == ["[START]", "unbelievable", "news", "[END]"]
    assert target_words == ["incredible", "[END]"]
    expected = np.array(
        [
            [
                attention[rows, 0].mean(),
                attention[rows][:, 1:4].sum(-1).mean(),
                attention[rows, 4].mean(),
                attention[rows, 5].mean(),
            ]
            for rows in ([0, 1, 2], [3])
        ]
    )
    np.testing.assert_allclose(pooled, expected, atol=1e-12)


def test_special_token_after_a_word_stays_its_own_word():
    words, _, _ = words_and_attention(["la", " casa", "[END]"], ["x"], np.ones((1, 3)))
    assert words == ["la", "casa", "[END]"]


def test_rows_still_sum_to_one_after_pooling():
    attention = RNG.dirichlet(np.ones(5), size=4)  # (4, 5), rows sum to 1
    _, _, pooled = words_and_attention(
        ["a", "b", " c", "d", " e"], ["x", "y", " z", "w"], attention
    )
    np.testing.assert_allclose(pooled.sum(-1), 1.0, atol=1e-12)


def test_words_and_attention_errors_name_the_argument():
    with pytest.raises(
        ValueError, match=r"attention.*\(\.\.\., 2, 3\).*Received: attention.shape=\(3, 2\)"
    ):
        words_and_attention(["a", "b", "c"], ["x", "y"], np.ones((3, 2)))
    with pytest.raises(ValueError, match="continuation.*Received: continuation='bpe'"):
        words_and_attention(["a"], ["x"], np.ones((1, 1)), continuation="bpe")
    with pytest.raises(ValueError, match="source_pieces.*Received: source_pieces=\\[\\]"):
        words_and_attention([], ["x"], np.ones((1, 0)))


# --- the written files -----------------------------------------------------------------


@pytest.mark.parametrize(
    "writer, example",
    [
        (write_translation_explorer, _translation_example),
        (write_caption_explorer, _caption_example),
        (write_vit_explorer, _vit_example),
    ],
)
def test_pages_are_one_self_contained_file(tmp_path, writer, example):
    path = writer(tmp_path / "page.html", [example()], title="A <title>")
    text = path.read_text(encoding="utf-8")
    assert list(tmp_path.iterdir()) == [path]
    # Nothing is fetched: no external script, style, image or link.
    assert not re.search(r"(src|href)\s*=\s*[\"'](?!data:)", text)
    assert "http://" not in text.replace('"http://www.w3.org/2000/svg"', "")
    assert "https://" not in text
    assert "<title>A &lt;title&gt;</title>" in text
    # The data block holds no "</" that would end it early.
    assert text.count("</script>") == 2


def test_translation_page_holds_the_weights_and_tokens(tmp_path):
    example = _translation_example()
    data = _page_data(write_translation_explorer(tmp_path / "t.html", example))
    [page_example] = data["examples"]
    assert page_example["source"] == example["source_tokens"]
    assert page_example["target"] == example["target_tokens"]
    assert sorted(page_example["attention"]) == ["cross_attention", "encoder_attention"]
    np.testing.assert_allclose(
        _decode(page_example["attention"]["cross_attention"]), example["cross_attention"], atol=1e-7
    )


def test_caption_page_image_is_a_png_of_the_pixels(tmp_path):
    matplotlib_image = pytest.importorskip("matplotlib.image")
    example = _caption_example()
    data = _page_data(write_caption_explorer(tmp_path / "c.html", example))
    uri = data["examples"][0]["image"]
    assert uri.startswith("data:image/png;base64,")
    png = base64.b64decode(uri.split(",", 1)[1])
    decoded = matplotlib_image.imread(io.BytesIO(png), format="png")  # float in [0, 1]
    np.testing.assert_array_equal(np.round(decoded * 255).astype("uint8"), example["image"])


def test_vit_page_holds_a_numpy_rollout(tmp_path):
    example = _vit_example()
    data = _page_data(write_vit_explorer(tmp_path / "v.html", example))
    # Rollout from the paper's recipe: heads averaged, half residual, rows renormalised.
    rollout = np.eye(7)
    for layer in example["attention"]:
        mixed = 0.5 * layer.mean(axis=0) + 0.5 * np.eye(7)
        rollout = (mixed / mixed.sum(-1, keepdims=True)) @ rollout
    np.testing.assert_allclose(_decode(data["examples"][0]["rollout"]), rollout, atol=1e-6)


def test_page_colors_are_matplotlib_viridis():
    colormaps = pytest.importorskip("matplotlib").colormaps
    anchors = np.array(VIRIDIS)
    expected = colormaps["viridis"](np.linspace(0.0, 1.0, len(anchors)))[:, :3] * 255.0
    np.testing.assert_allclose(anchors, expected, atol=0.5)


# --- input checks ----------------------------------------------------------------------


def test_translation_checks_name_the_argument(tmp_path):
    path = tmp_path / "t.html"
    example = _translation_example()
    bad = dict(example, cross_attention=np.ones((2, 3, 4, 5)))
    with pytest.raises(
        ValueError,
        match=r"examples\[0\]\['cross_attention'\].*len\(target_tokens\), len\(source_tokens\)\)"
        r" = \(\?, \?, 4, 3\).*Received: .*shape=\(2, 3, 4, 5\)",
    ):
        write_translation_explorer(path, [bad])
    bad = dict(example, encoder_attention=np.ones((2, 3, 4, 4)))
    with pytest.raises(
        ValueError, match=r"examples\[1\]\['encoder_attention'\].*shape=\(2, 3, 4, 4\)"
    ):
        write_translation_explorer(path, [example, bad])
    bad = dict(example, cross_attention=np.full((1, 1, 4, 3), np.nan))
    with pytest.raises(ValueError, match=r"finite, non-negative"):
        write_translation_explorer(path, [bad])
    bad = {key: value for key, value in example.items() if key != "source_tokens"}
    with pytest.raises(ValueError, match=r"examples\[0\]` to have the key 'source_tokens'"):
        write_translation_explorer(path, [bad])
    with pytest.raises(ValueError, match=r"Expected `examples` to be a non-empty list"):
        write_translation_explorer(path, [])
    with pytest.raises(ValueError, match=r"examples\[0\]` to be a dict.*Received: type.*=str"):
        write_translation_explorer(path, ["la maison"])


def test_caption_checks_name_the_argument(tmp_path):
    path = tmp_path / "c.html"
    example = _caption_example()
    with pytest.raises(
        ValueError, match=r"examples\[0\]\['attention'\].*\(len\(words\), h, w\).*shape=\(2, 3, 4\)"
    ):
        write_caption_explorer(path, dict(example, attention=example["attention"][:2]))
    with pytest.raises(ValueError, match=r"examples\[0\]\['image'\].*shape=\(12, 16, 4\)"):
        write_caption_explorer(path, dict(example, image=np.zeros((12, 16, 4))))
    with pytest.raises(ValueError, match=r"examples\[0\]\['words'\].*at least one"):
        write_caption_explorer(path, dict(example, words=[]))


def test_vit_checks_name_the_argument(tmp_path):
    path = tmp_path / "v.html"
    example = _vit_example()
    with pytest.raises(
        ValueError,
        match=r"examples\[0\]\['attention'\].*grid_size\[0\] \* grid_size\[1\] \+ 1 \(class token\)"
        r".*shape=\(2, 2, 7, 7\)",
    ):
        write_vit_explorer(path, dict(example, grid_size=(3, 3)))
    with pytest.raises(ValueError, match=r"grid_size'\].*Received: grid_size=\(2, 0\)"):
        write_vit_explorer(path, dict(example, grid_size=(2, 0)))
    with pytest.raises(ValueError, match=r"examples\[0\]\['attention'\].*shape=\(2, 7, 7\)"):
        write_vit_explorer(path, dict(example, attention=example["attention"][0]))
    with pytest.raises(
        ValueError, match=r"examples\[0\]\['probability'\].*Received: probability=1.5"
    ):
        write_vit_explorer(path, dict(example, probability=1.5))
    # Without a class token the same weights cover 7 patches.
    write_vit_explorer(path, dict(example, grid_size=(1, 7), has_class_token=False))


def test_word_maps_average_the_maps_of_a_words_pieces():
    maps = np.arange(4 * 2 * 2, dtype="float64").reshape(4, 2, 2)  # (pieces, h, w)
    words, pooled = word_maps(["a", " re", "d", " circle"], maps)
    assert words == ["a", "red", "circle"]
    np.testing.assert_array_equal(pooled, [maps[0], (maps[1] + maps[2]) / 2, maps[3]])
    with pytest.raises(
        ValueError, match=r"one map per piece.*len\(pieces\)=2, maps.shape=\(4, 2, 2\)"
    ):
        word_maps(["a", "b"], maps)


def test_whole_word_example_pools_every_attention_kind():
    rng = np.random.default_rng(3)
    source, target = ["la", " ca", "sa"], ["the", " house", "s"]  # words: la|casa, the|houses
    cross = rng.dirichlet(np.ones(3), size=(2, 1, 3))  # (layers, heads, T, S)
    encoder = rng.dirichlet(np.ones(3), size=(2, 1, 3))  # (layers, heads, S, S)
    decoder = rng.dirichlet(np.ones(3), size=(2, 1, 3))  # (layers, heads, T, T)
    example = whole_word_example(
        {
            "source_tokens": source,
            "target_tokens": target,
            "cross_attention": cross,
            "encoder_attention": encoder,
            "decoder_attention": decoder,
        }
    )
    assert example["source_tokens"] == ["la", "casa"]
    assert example["target_tokens"] == ["the", "houses"]

    def pooled(weights):  # rows: mean over a word's pieces; columns: sum over them
        rows = np.stack([weights[..., 0, :], weights[..., 1:, :].mean(-2)], axis=-2)
        return np.stack([rows[..., 0], rows[..., 1:].sum(-1)], axis=-1)

    for key, weights in (("cross", cross), ("encoder", encoder), ("decoder", decoder)):
        np.testing.assert_allclose(example[f"{key}_attention"], pooled(weights), atol=1e-12)
