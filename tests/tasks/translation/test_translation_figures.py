"""A translator's word alignments, their plots and the whole-word explorer page."""

import numpy as np
import pytest

from keras_attention.tasks.translation.figures import draw_alignments
from keras_attention.tasks.translation.figures import word_alignments
from keras_attention.tasks.translation.figures import write_word_translation_explorer


def _outputs():
    """Two translations as a translation function gives them (S = 4 source, T = 3 target pieces)."""
    attention = np.zeros((2, 3, 4))
    attention[0, :2, :3] = [[0.5, 0.25, 0.25], [0.1, 0.6, 0.3]]
    return {
        "translation": np.array([b"casa roja", b""]),
        "source_tokens": np.array([[b"red", b" ho", b"use", b""], [b"", b"", b"", b""]]),
        "translation_tokens": np.array([[b"casa", b" roja", b""], [b"", b"", b""]]),
        "attention": attention,
    }


def test_word_alignments_pool_pieces_into_words(capsys):
    alignments = word_alignments(_outputs(), count=5)
    assert len(alignments) == 1  # the empty second sentence has nothing to align
    index, source, target, weights = alignments[0]
    assert (index, source, target) == (0, ["red", "house"], ["casa", "roja"])
    # Columns of a word's pieces are summed: "house" = " ho" + "use".
    np.testing.assert_allclose(weights, [[0.5, 0.5], [0.1, 0.9]])
    assert "no alignment for held-out sentence 1: nothing to align" in capsys.readouterr().out
    assert word_alignments(_outputs(), count=0) == []


def test_draw_alignments_writes_one_plot_per_sentence(tmp_path):
    pytest.importorskip("matplotlib")
    paths = draw_alignments(word_alignments(_outputs(), count=1), str(tmp_path))
    assert paths == [str(tmp_path / "alignment_0.png")]
    assert (tmp_path / "alignment_0.png").stat().st_size > 0


def test_explorer_page_names_the_sentences_with_words(tmp_path):
    cross = np.full((1, 1, 2, 3), 1 / 3)
    examples = [
        {
            "source_tokens": ["red", " ho", "use"],
            "target_tokens": ["casa", " roja"],
            "cross_attention": cross,
        },
        {"source_tokens": [], "target_tokens": [], "cross_attention": np.zeros((1, 1, 0, 0))},
        {"source_tokens": ["a"], "target_tokens": ["b"], "cross_attention": np.ones((1, 1, 1, 1))},
    ]
    page = tmp_path / "explorer.html"
    assert write_word_translation_explorer(page, examples) == page
    text = page.read_text()
    assert "held-out sentence 0" in text and "held-out sentence 2" in text
    assert "held-out sentence 1" not in text  # nothing to show
    assert '"house"' in text and "Translation attention" in text
    assert write_word_translation_explorer(tmp_path / "none.html", examples[1:2]) is None
    assert not (tmp_path / "none.html").exists()
