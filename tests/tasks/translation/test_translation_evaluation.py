"""Translating held-out pairs batch by batch, and scoring them."""

import numpy as np
import pytest
import tensorflow as tf

from keras_attention.tasks.translation.evaluation import score_translations
from keras_attention.tasks.translation.evaluation import translate_pairs
from keras_attention.text.scores import corpus_bleu
from keras_attention.text.scores import corpus_chrf

SOURCES = ["uno", "dos", "tres", "cuatro", "cinco"]
REFERENCES = ["one", "two", "three", "four", "five"]


def _reverse(text):
    """A stand-in translator: reversed text, and one (B, 2) output per sentence."""
    lengths = tf.strings.length(text)
    return {
        "translation": tf.strings.reduce_join(tf.strings.unicode_split(text, "UTF-8")[:, ::-1], 1),
        "lengths": tf.stack([lengths, 2 * lengths], axis=1),
    }


def test_translate_pairs_keeps_the_order_over_batches():
    pairs = tf.data.Dataset.from_tensor_slices((SOURCES, REFERENCES))
    sources, references, hypotheses, outputs = translate_pairs(_reverse, pairs, batch_size=2)
    assert sources == SOURCES and references == REFERENCES
    assert hypotheses == [text[::-1] for text in SOURCES]
    expected = np.array([[len(text), 2 * len(text)] for text in SOURCES])
    np.testing.assert_array_equal(outputs["lengths"], expected)
    assert outputs["translation"].shape == (5,)


def test_translate_pairs_stops_at_the_limit_and_reads_utf8():
    pairs = tf.data.Dataset.from_tensor_slices((["año", "über", "x"], ["year", "over", "y"]))
    sources, _, hypotheses, _ = translate_pairs(_reverse, pairs, limit=2, batch_size=64)
    assert sources == ["año", "über"] and hypotheses == ["oña", "rebü"]
    with pytest.raises(ValueError, match="limit"):
        translate_pairs(_reverse, pairs, limit=0)
    with pytest.raises(ValueError, match="at least one sentence pair"):
        translate_pairs(_reverse, pairs.take(0))


def test_scores_are_sacrebleus_and_the_exact_fraction():
    hypotheses = ["the cat sat on the mat", "a dog barks", "hello there"]
    references = ["the cat sat on the mat", "the dog barks", "hello there"]
    scores = score_translations(hypotheses, references)
    assert list(scores) == ["bleu", "chrf", "exact_match"]
    assert scores["bleu"] == corpus_bleu(hypotheses, references)
    assert scores["chrf"] == corpus_chrf(hypotheses, references)
    assert scores["exact_match"] == pytest.approx(2 / 3)


def test_only_the_first_sentences_keep_their_other_outputs():
    import numpy as np
    import tensorflow as tf

    def with_attention(text):
        batch = tf.shape(text)[0]
        return {"translation": text, "attention": tf.ones((batch, 3, 2))}

    sources = [f"s{i}" for i in range(7)]
    pairs = tf.data.Dataset.from_tensor_slices((sources, sources))
    _, _, hypotheses, outputs = translate_pairs(with_attention, pairs, batch_size=3, keep_outputs=4)
    assert hypotheses == sources
    assert outputs["translation"].shape == (7,)
    assert outputs["attention"].shape == (4, 3, 2)
    np.testing.assert_array_equal(outputs["attention"], np.ones((4, 3, 2)))
    with pytest.raises(ValueError, match="keep_outputs=-1"):
        translate_pairs(with_attention, pairs, keep_outputs=-1)


def test_held_out_sources_longer_than_max_length_are_counted_as_cut(capsys):
    import argparse

    import keras

    from keras_attention.models.translation.rnn_attention_translator import rnn_attention_translator
    from keras_attention.tasks.translation.evaluation import translate_held_out
    from keras_attention.text.reversible_tokenizer import ReversibleTokenizer

    keras.utils.set_random_seed(0)
    tokenizer = ReversibleTokenizer.train(["a b c", "c b a"], 300)
    size = tokenizer.vocabulary_size
    model = rnn_attention_translator(
        source_vocabulary_size=size, target_vocabulary_size=size, embedding_dim=4, units=4
    )
    sources = ["a b", "a b c a b c a b c", "c", "c c c c c c"]  # pieces: 2, 9, 1, 6
    pairs = tf.data.Dataset.from_tensor_slices((sources, sources))
    args = argparse.Namespace(max_length=5, beam_width=1, eval_sentences=None, plots=1, samples=0)
    *_, outputs, _ = translate_held_out(model, (tokenizer, tokenizer), pairs, args, batch_size=2)
    lengths = [len(tokenizer.tokenize([text]).values) for text in sources]
    assert lengths == [2, 9, 1, 6]
    assert outputs["source_truncated"].tolist() == [False, True, False, True]
    assert outputs["attention"].shape[0] == 1  # only the plotted sentence keeps its maps
    said = (
        "2 of 4 held-out sources had more than --max-length 5 pieces: each was cut to its first 5"
    )
    assert said in capsys.readouterr().out
