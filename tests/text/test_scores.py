"""corpus_bleu / corpus_chrf against hand-computed BLEU and sacrebleu itself."""

import math
import sys

import pytest
import sacrebleu

from keras_attention.text.scores import corpus_bleu
from keras_attention.text.scores import corpus_chrf


def test_identical_corpora_score_100():
    sentences = ["el perro grande come la manzana roja", "yo sé que el gato ve al perro"]
    assert corpus_bleu(sentences, sentences) == pytest.approx(100.0)
    assert corpus_chrf(sentences, sentences) == pytest.approx(100.0)


def test_bleu_of_one_sentence_by_hand():
    # Clipped n-gram matches of "the cat sat on the mat" against "the cat sat on a mat":
    # 5/6 unigrams, 3/5 bigrams, 2/4 trigrams, 1/3 four-grams; equal lengths, no penalty.
    expected = 100 * math.exp(
        (math.log(5 / 6) + math.log(3 / 5) + math.log(2 / 4) + math.log(1 / 3)) / 4
    )
    assert corpus_bleu(["the cat sat on the mat"], ["the cat sat on a mat"]) == pytest.approx(
        expected
    )


def test_bleu_brevity_penalty_by_hand():
    # Every n-gram of the 5-word hypothesis matches; the 6-word reference gives
    # the brevity penalty exp(1 - 6 / 5).
    score = corpus_bleu(["the cat sat on the"], ["the cat sat on the mat"])
    assert score == pytest.approx(100 * math.exp(1 - 6 / 5))


def test_short_hypotheses_are_scored_on_the_orders_they_have_by_hand():
    # Three-word captions have no 4-grams: standard BLEU-4 is 0 even for exact ones.
    captions = ["a red circle", "two blue squares"]
    assert sacrebleu.corpus_bleu(captions, [captions]).score == 0.0
    assert corpus_bleu(captions, captions) == pytest.approx(100.0)
    # "a red circle" against "a blue circle": 2/3 unigrams, 0/2 bigrams, 0/1 trigrams;
    # sacrebleu's exponential smoothing makes the k-th zero precision 1 / (2^k * total).
    expected = 100 * math.exp((math.log(2 / 3) + math.log(1 / (2 * 2)) + math.log(1 / 4)) / 3)
    assert corpus_bleu(["a red circle"], ["a blue circle"]) == pytest.approx(expected)
    # Two-word hypotheses: unigrams and bigrams only, with the brevity penalty.
    expected = 100 * math.exp(1 - 3 / 2) * math.exp((math.log(1) + math.log(1)) / 2)
    assert corpus_bleu(["red circle"], ["a red circle"]) == pytest.approx(expected)


def test_scores_match_sacrebleu_on_a_corpus():
    hypotheses = ["el perro come la manzana", "la niña ve al gato", "yo no sé"]
    references = ["el perro grande come la manzana roja", "la niña ve al gato", "yo no lo sé"]
    assert corpus_bleu(hypotheses, references) == pytest.approx(
        sacrebleu.corpus_bleu(hypotheses, [references]).score
    )
    assert corpus_chrf(hypotheses, references) == pytest.approx(
        sacrebleu.corpus_chrf(hypotheses, [references]).score
    )


def test_several_references_per_hypothesis_and_bytes():
    hypotheses = [b"the cat is on the mat", "there is a cat here"]
    references = [
        ["the cat is on the mat", "a cat is on the mat"],
        [b"here is a cat", "there is a cat here"],
    ]
    streams = [
        ["the cat is on the mat", "here is a cat"],
        ["a cat is on the mat", "there is a cat here"],
    ]
    plain = ["the cat is on the mat", "there is a cat here"]
    assert corpus_bleu(hypotheses, references) == pytest.approx(
        sacrebleu.corpus_bleu(plain, streams).score
    )
    assert corpus_bleu(hypotheses, references) == pytest.approx(100.0)


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match=r"Received: len\(references\)=1 for len\(hypotheses\)=2"):
        corpus_bleu(["a", "b"], ["a"])
    with pytest.raises(ValueError, match=r"Received: hypotheses=\[\]"):
        corpus_chrf([], [])
    with pytest.raises(ValueError, match="same length. Received: references="):
        corpus_bleu(["a", "b"], [["a"], ["b", "c"]])


def test_missing_sacrebleu_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "sacrebleu", None)  # makes `import sacrebleu` fail
    with pytest.raises(ImportError, match="pip install sacrebleu"):
        corpus_bleu(["a"], ["a"])
