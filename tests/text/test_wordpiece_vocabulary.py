"""train_wordpiece_vocabulary: reserved tokens first, covers the text it learned from."""

import pytest
import tensorflow as tf

from keras_attention.tasks.translation.builtin_corpus import builtin_translation_pairs
from keras_attention.text.wordpiece_vocabulary import train_wordpiece_vocabulary


@pytest.fixture(scope="module")
def spanish_sentences():
    return [target for _, target in builtin_translation_pairs(num_pairs=1500, seed=0)]


def spell(word, vocabulary):
    """Greedy longest-match WordPiece spelling of one word, None if impossible."""
    pieces, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocabulary:
                pieces.append(piece)
                start = end
                break
        else:
            return None
    return pieces


def test_reserved_tokens_come_first_and_every_word_can_be_spelled(spanish_sentences):
    vocabulary = train_wordpiece_vocabulary(spanish_sentences, vocabulary_size=300)
    assert vocabulary[:4] == ["[PAD]", "[UNK]", "[START]", "[END]"]
    assert len(vocabulary) <= 300 and len(set(vocabulary)) == len(vocabulary)
    words = {word for sentence in spanish_sentences for word in sentence.split()}
    assert all(spell(word, vocabulary) for word in words)
    # Frequent words are whole entries, not pieces.
    assert {"el", "la", "que", "niño", "mujeres"} <= set(vocabulary)


def test_small_vocabulary_falls_back_to_pieces(spanish_sentences):
    vocabulary = train_wordpiece_vocabulary(spanish_sentences, vocabulary_size=70)
    assert len(vocabulary) <= 70
    words = {word for sentence in spanish_sentences for word in sentence.split()}
    spellings = [spell(word, vocabulary) for word in words]
    assert all(spellings)
    assert any(len(pieces) > 1 for pieces in spellings)


def test_dataset_and_list_give_the_same_vocabulary(spanish_sentences):
    texts = spanish_sentences[:300]
    from_list = train_wordpiece_vocabulary(texts, 120, reserved_tokens=["<pad>", "<unk>"])
    dataset = tf.data.Dataset.from_tensor_slices(texts)
    assert train_wordpiece_vocabulary(dataset, 120, reserved_tokens=["<pad>", "<unk>"]) == from_list
    assert train_wordpiece_vocabulary(dataset.batch(7), 120, ["<pad>", "<unk>"]) == from_list
    assert from_list[:2] == ["<pad>", "<unk>"]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (
            {"vocabulary_size": 4},
            "larger than the number of reserved tokens .* Received: vocabulary_size=4",
        ),
        ({"reserved_tokens": ["[PAD]", "[PAD]"]}, r"distinct .* Received: reserved_tokens="),
        ({"reserved_tokens": "[PAD]"}, r"Received: reserved_tokens='\[PAD\]'"),
        ({"texts": "one string"}, "Received: texts='one string'"),
        ({"texts": []}, r"Received: texts=\[\]"),
    ],
)
def test_bad_arguments_raise(kwargs, message):
    arguments = {"texts": ["a b"], "vocabulary_size": 10, **kwargs}
    with pytest.raises(ValueError, match=message):
        train_wordpiece_vocabulary(**arguments)


def test_dataset_of_pairs_raises():
    pairs = tf.data.Dataset.from_tensor_slices((["a"], ["b"]))
    with pytest.raises(ValueError, match="Received: texts with element_spec="):
        train_wordpiece_vocabulary(pairs, 10)
