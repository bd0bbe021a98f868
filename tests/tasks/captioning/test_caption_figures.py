"""The captioner's printed, drawn and explorable samples."""

import numpy as np
import pytest

from keras_attention.tasks.captioning.figures import caption_word_maps
from keras_attention.tasks.captioning.figures import draw_caption_samples

pytest.importorskip("matplotlib")


def samples(count=3):
    rng = np.random.default_rng(0)
    images = [rng.uniform(0, 255, (16, 24, 3)).astype("float32") for _ in range(count)]
    attention = rng.dirichlet(np.ones(6), size=(count, 4)).reshape(count, 4, 2, 3)
    words = [["a", "red"], [], ["a", "circle"]][:count]  # whole words, as model.caption gives
    hypotheses = ["a red", "", "a circle"][:count]
    references = [[f"reference {i}", "another"] for i in range(count)]
    return images, references, hypotheses, {"words": words, "attention": attention}


def test_each_word_keeps_its_map():
    _, _, _, outputs = samples()
    joined = caption_word_maps(outputs["words"], outputs["attention"], 5)
    assert [words for words, _ in joined] == [["a", "red"], [], ["a", "circle"]]
    attention = outputs["attention"]
    np.testing.assert_array_equal(joined[0][1], attention[0, :2])
    np.testing.assert_array_equal(joined[2][1], attention[2, :2])
    assert joined[1][1].shape == (0, 2, 3)  # an empty caption keeps the grid's shape
    assert len(caption_word_maps(outputs["words"], attention, 1)) == 1


def test_samples_are_printed_drawn_and_explored(tmp_path, capsys):
    images, references, hypotheses, outputs = samples()
    figures, explorer = draw_caption_samples(
        tmp_path, images, references, hypotheses, outputs, samples=2
    )
    printed = capsys.readouterr().out
    assert "  reference: reference 0\n  caption  : a red\n" in printed
    assert "  reference: reference 1\n  caption  : \n" in printed
    assert "reference 2" not in printed
    assert [p.rsplit("/", 1)[-1] for p in figures] == ["attention_0.png", "attention_1.png"]
    assert all((tmp_path / f"attention_{i}.png").stat().st_size > 0 for i in range(2))
    assert "attention plots: " + ", ".join(figures) in printed
    # The page shows the captions with words, up to the explorer's 8, drawn or not.
    page = (tmp_path / "attention_explorer.html").read_text()
    assert str(explorer).endswith("attention_explorer.html") and f"written to {explorer}" in printed
    assert "test image 0: a red" in page and "test image 2: a circle" in page
    assert "test image 1" not in page


def test_no_samples_and_no_page(tmp_path, capsys):
    images, references, hypotheses, outputs = samples()
    assert draw_caption_samples(
        tmp_path, images, references, hypotheses, outputs, samples=0, html=False
    ) == ([], None)
    assert capsys.readouterr().out == "" and not list(tmp_path.iterdir())
    # Only empty captions: nothing to explore.
    outputs["words"] = [[], [], []]
    _, explorer = draw_caption_samples(tmp_path, images, references, hypotheses, outputs, 1)
    assert explorer is None and (tmp_path / "attention_0.png").exists()
