"""BPE models cut back to their frequent merges (`keep_frequent_merges`, `min_piece_count`)."""

import itertools
import random

import pytest
import sentencepiece

from keras_attention.tasks.translation.training_data import train_translation_vocabularies
from keras_attention.text import sentencepiece_training
from keras_attention.text.frequent_merges import keep_frequent_merges
from keras_attention.text.sentencepiece_training import train_sentencepiece_model

NUM_HEAD = 260  # 4 special and 256 byte pieces
PARTS = [
    *("sonnen", "blumen", "feld", "haus", "wasser", "turm", "berg", "bahn", "licht", "tor"),
    *("stein", "wald", "garten", "kirch", "schule", "brot", "apfel", "vogel", "schiff", "hand"),
    *("mauer", "dorf", "tisch", "fenster", "see", "insel", "zug", "mond", "stern", "kuchen"),
]


def _compounds(count, seed):
    """`count` compounds of 2 to 4 different parts: each part common, each pair of parts rare."""
    generator = random.Random(seed)
    return [
        "".join(generator.sample(PARTS, generator.randint(2, 4))).capitalize()
        + " "
        + "".join(generator.sample(PARTS, generator.randint(2, 4)))
        for _ in range(count)
    ]


def _joins_two_parts(piece):
    return any(first + second in piece.lower() for first in PARTS for second in PARTS)


def _processor(model):
    return sentencepiece.SentencePieceProcessor(model_proto=model)


def _learned_pieces(model):
    processor = _processor(model)
    return [processor.id_to_piece(i) for i in range(NUM_HEAD, processor.vocab_size())]


def _merges(model):
    """The merged pieces, in the order they were learned (the single characters close the model)."""
    return [piece for piece in _learned_pieces(model) if len(piece) > 1]


def _times_made(model, count_merges, texts):
    """How often merge number `count_merges` is made: its piece in `texts` encoded by a model
    SentencePiece learns with that many merges (learned anew, not cut from another)."""
    characters = len(_learned_pieces(model)) - len(_merges(model))
    fresh = train_sentencepiece_model(texts, NUM_HEAD + count_merges + characters)
    assert _merges(fresh) == _merges(model)[:count_merges]  # BPE's merges come in the same order
    last = NUM_HEAD + count_merges - 1
    assert len(_processor(fresh).id_to_piece(last)) > 1
    return sum(ids.count(last) for ids in _processor(fresh).encode(texts))


def test_the_cut_keeps_exactly_the_merges_made_often_enough():
    texts = _compounds(1500, seed=0)
    model = train_sentencepiece_model(texts, 600)
    cut = keep_frequent_merges(model, texts, 50, NUM_HEAD)
    kept = len(_merges(cut))
    assert 0 < kept < len(_merges(model))
    assert _merges(cut) == _merges(model)[:kept]
    # Every single character stays: any text is still spelled.
    assert set(_learned_pieces(cut)) - set(_merges(cut)) == (
        set(_learned_pieces(model)) - set(_merges(model))
    )
    assert _times_made(model, kept, texts) >= 50
    assert _times_made(model, kept + 1, texts) < 50


def test_compounds_are_spelled_with_their_parts_not_with_rare_pairs():
    texts = _compounds(3000, seed=0)
    full = train_sentencepiece_model(texts, 1000)
    frequent = train_sentencepiece_model(texts, 1000, min_piece_count=50)
    unseen = "Turmlichtwasser bergtorfeld"
    assert _processor(frequent).encode(unseen, out_type=str) == [
        "▁Turm",
        "licht",
        "wasser",
        "▁berg",
        "tor",
        "feld",
    ]
    assert not [piece for piece in _merges(frequent) if _joins_two_parts(piece)]
    # Without the cut, pieces joining two parts (each pair seen about 14 times) fill the
    # vocabulary, and replace the parts wherever they match.
    assert len([piece for piece in _merges(full) if _joins_two_parts(piece)]) > 100


def test_merges_never_made_are_left_out():
    texts = ["sun flower"] * 60
    # Out of merges, SentencePiece fills the vocabulary with pieces never made ("lo", "▁s").
    model = train_sentencepiece_model(texts, 300)
    cut = keep_frequent_merges(model, texts, 50, NUM_HEAD)
    assert _merges(cut) == _merges(model)[: len(_merges(cut))]
    assert "▁flower" in _merges(cut) and "▁s" in _merges(model) and "▁s" not in _merges(cut)
    assert _processor(cut).encode(texts, out_type=str) == [["▁sun", "▁flower"]] * 60
    assert train_sentencepiece_model(texts, 300, min_piece_count=50) == cut


def test_every_merge_frequent_returns_the_model_itself():
    texts = ["sun flower"] * 60
    filled = train_sentencepiece_model(texts, 300)
    num_characters = len(_learned_pieces(filled)) - len(_merges(filled))
    made = len(keep_frequent_merges(filled, texts, 50, NUM_HEAD)) and 9  # sun, flower: 9 merges
    model = train_sentencepiece_model(texts, NUM_HEAD + made + num_characters)
    assert keep_frequent_merges(model, texts, 50, NUM_HEAD) == model
    assert (
        train_sentencepiece_model(texts, NUM_HEAD + made + num_characters, min_piece_count=50)
        == model
    )
    assert train_sentencepiece_model(texts, 300, min_piece_count=None) == filled


def test_a_counted_sample_scales_the_count_to_the_sentences_learned_from(monkeypatch):
    texts = _compounds(3000, seed=1)
    everything = train_sentencepiece_model(texts, 600, min_piece_count=50)
    monkeypatch.setattr(sentencepiece_training, "MAX_COUNTED_SENTENCES", 1000)
    sampled = train_sentencepiece_model(texts, 600, min_piece_count=50)
    # A third of the sentences counted, 17 sightings asked of it: nearly the same cut.
    assert abs(len(_merges(sampled)) - len(_merges(everything))) <= 0.05 * len(_merges(everything))
    assert _merges(sampled)[:20] == _merges(everything)[:20]


def test_the_translation_vocabularies_leave_out_rare_merges(tmp_path):
    target = _compounds(1500, seed=2)
    pairs = [(" ".join(itertools.repeat("of", 3)), text) for text in target]
    _, target_encoder = train_translation_vocabularies(pairs, 1000, str(tmp_path))
    pieces = target_encoder.vocabulary[NUM_HEAD:]
    merged = [piece.strip(" ").lower() for piece in pieces if len(piece) > 1]
    assert set(PARTS) <= set(merged)
    # 1,500 pairs ask for 15 sightings (`frequent_piece_count`); two parts side by side
    # are seen about 1500 * 2 * 2 / (30 * 29) = 7 times: never kept.
    assert not [piece for piece in merged if _joins_two_parts(piece)]


@pytest.mark.parametrize(
    "arguments, message",
    [
        (
            {"min_piece_count": 0},
            r"`min_piece_count` must be None or a positive integer\. "
            r"Received: min_piece_count=0",
        ),
        ({"min_piece_count": True}, r"Received: min_piece_count=True"),
        ({"min_piece_count": "50"}, r"Received: min_piece_count='50'"),
        (
            {"min_piece_count": 50, "model_type": "unigram"},
            r"BPE models only .* "
            r"model_type='unigram'",
        ),
    ],
)
def test_bad_min_piece_count_is_named(arguments, message):
    with pytest.raises(ValueError, match=message):
        train_sentencepiece_model(["a b"], 300, **arguments)
