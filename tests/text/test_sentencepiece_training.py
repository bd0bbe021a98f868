"""Learning a ReversibleTokenizer's SentencePiece model: inputs, options, progress and errors."""

import numpy as np
import pytest
import sentencepiece
import tensorflow as tf

from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
from keras_attention.text.sentencepiece_training import train_sentencepiece_model

SENTENCES = [
    f"{subject} {verb} the {thing} on {day:02d}.{month:02d}., isn't it?"
    for subject, verb, thing, day, month in zip(
        ["She", "he", "We", "they", "You"] * 40,
        ["sees", "finds", "paints", "sells", "keeps", "buys", "wants", "holds"] * 25,
        ["house", "boat", "garden", "bridge"] * 50,
        range(1, 201),
        [month % 12 + 1 for month in range(200)],
    )
]


class Counter:
    def __init__(self):
        self.counts = []

    def add(self, count):
        self.counts.append(count)


def _pieces(model_proto, text):
    return sentencepiece.SentencePieceProcessor(model_proto=model_proto).encode(text, out_type=str)


def test_every_kind_of_input_gives_the_same_model():
    expected = train_sentencepiece_model(SENTENCES, 400)
    as_dataset = tf.data.Dataset.from_tensor_slices(SENTENCES)
    for texts in (
        tuple(SENTENCES),
        np.asarray(SENTENCES),
        (text for text in SENTENCES),  # a generator
        as_dataset,
        as_dataset.batch(33),
        SENTENCES + ["", " \t "],  # blank texts are skipped
        [text.replace(" ", "  \n") for text in SENTENCES],  # as the tokenizer reads them
    ):
        assert train_sentencepiece_model(texts, 400) == expected


def test_the_model_learns_words_and_keeps_digits_apart():
    model = train_sentencepiece_model(SENTENCES, 400)
    assert _pieces(model, "She sees the garden on 15.04.") == [
        "▁She",
        "▁sees",
        "▁the",
        "▁garden",
        "▁on",
        "▁",
        "1",
        "5",
        ".",
        "0",
        "4",
        ".",
    ]
    processor = sentencepiece.SentencePieceProcessor(model_proto=model)
    assert processor.vocab_size() <= 400
    pieces = [processor.id_to_piece(i) for i in range(260, processor.vocab_size())]
    assert all(len(piece) == 1 for piece in pieces if any(c.isdigit() for c in piece))


def test_unigram_models_also_round_trip():
    tokenizer = ReversibleTokenizer.train(SENTENCES, 400, model_type="unigram")
    ids = tokenizer.encode(SENTENCES[:20] + ["Ünïcödé ☺ 123"], 40, add_end=True)
    decoded = [text.decode("utf-8") for text in tokenizer.decode(ids).numpy().tolist()]
    assert decoded == SENTENCES[:20] + ["Ünïcödé ☺ 123"]
    assert tokenizer.model_proto != ReversibleTokenizer.train(SENTENCES, 400).model_proto


def test_max_sentences_learns_from_a_sample():
    sample = train_sentencepiece_model(SENTENCES, 400, max_sentences=101)
    assert sample != train_sentencepiece_model(SENTENCES, 400)
    assert sample == train_sentencepiece_model(SENTENCES, 400, max_sentences=101)  # the same one
    counter = Counter()
    train_sentencepiece_model(SENTENCES, 400, max_sentences=101, progress=counter)
    assert sum(counter.counts) == len(SENTENCES)  # every text is read


def test_progress_counts_every_text_batch_by_batch():
    counter = Counter()
    ReversibleTokenizer.train((f"line {index}" for index in range(2100)), 300, progress=counter)
    assert counter.counts == [1024, 1024, 52]


def test_rare_characters_can_be_left_to_bytes():
    rare = "".join(chr(0x4E00 + index) for index in range(50))  # 1% of the characters
    texts = [rare] + ["ab ab"] * 1000
    with pytest.raises(
        ValueError,
        match=r"`vocabulary_size` must leave room .*: 31\d here .* Received: vocabulary_size=300",
    ):
        train_sentencepiece_model(texts, 300)
    tokenizer = ReversibleTokenizer.train(texts, 300, character_coverage=0.98)
    assert tokenizer.tokenize([rare[:2]]).to_list()[0][1:] == [
        4 + byte for byte in rare[:2].encode("utf-8")
    ]
    assert tokenizer.decode(tokenizer.encode(rare, 400)).numpy().decode() == rare


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"texts": "abc"}, r"`texts` must be a list .* Received: texts='abc'"),
        ({"texts": 5}, r"`texts` must be a list .* Received: texts=5"),
        (
            {"texts": ["a", 3]},
            r"`texts` must hold strings. Received: texts with an item of type int: 3",
        ),
        ({"texts": iter([b"a", None])}, r"an item of type NoneType"),
        # Found while SentencePiece reads: the same error, not SentencePiece's.
        ({"texts": iter(["a b"] * 3000 + [5])}, r"`texts` must hold strings. .* type int: 5"),
        ({"texts": tf.data.Dataset.range(3)}, r"`texts` must be a tf.data.Dataset of strings"),
        ({"texts": []}, r"`texts` must be a non-empty list .* Received: texts=\[\]"),
        ({"texts": ["", " \n "]}, r"`texts` must hold some text .* no string that is not blank"),
        ({"texts": iter([])}, r"`texts` must hold some text"),
        (
            {"vocabulary_size": 260},
            r"`vocabulary_size` must be an integer larger than 260 .* Received: vocabulary_size=260",
        ),
        ({"vocabulary_size": "300"}, r"Received: vocabulary_size='300'"),
        ({"vocabulary_size": True}, r"Received: vocabulary_size=True"),
        (
            {"model_type": "word"},
            r"`model_type` must be one of \('bpe', 'unigram'\). Received: model_type='word'",
        ),
        (
            {"max_sentences": 100},
            r"`max_sentences` must be an integer above 100 .* Received: max_sentences=100",
        ),
        ({"character_coverage": 0.5}, r"from 0.98 to 1 .* Received: character_coverage=0.5"),
    ],
)
def test_train_rejects_bad_arguments(arguments, message):
    arguments = {"texts": ["a b"], "vocabulary_size": 300, **arguments}
    with pytest.raises(ValueError, match=message):
        ReversibleTokenizer.train(**arguments)
