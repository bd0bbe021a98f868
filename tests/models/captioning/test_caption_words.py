"""`caption(..., return_attention=True)`: the words and maps agree with the caption's text."""

import numpy as np

from keras_attention.models.captioning.image_captioner import _whole_words
from keras_attention.text.subword_encoder import SubwordEncoder

VOCABULARY = ["[PAD]", "[UNK]", "[START]", "[END]", "a", "##b", "red"]


def test_start_and_padding_tokens_a_model_chose_are_neither_words_nor_maps():
    # An undertrained model may choose [START] (id 2) again: decoding leaves it out.
    encoder = SubwordEncoder(VOCABULARY)
    ids = [2, 4, 5, 0, 6, 2, 3]
    tokens = np.array([[VOCABULARY[i].encode() for i in ids]])  # (1, 7)
    # Piece i attended to (i, 10 i): each word's map tells which pieces it averaged.
    attention = np.array([[[[i, 10.0 * i]] for i in range(7)]], "float32")  # (1, 7, 1, 2)

    word_maps, words = _whole_words(encoder, tokens, attention)

    caption = encoder.decode([ids]).numpy()[0].decode()
    assert caption == "ab red"
    assert words == [caption.split()]
    np.testing.assert_allclose(word_maps[0, 0], [[1.5, 15.0]])  # pieces 1 and 2
    np.testing.assert_allclose(word_maps[0, 1], [[4.0, 40.0]])  # piece 4
    assert not word_maps[0, 2:].any()


def test_a_caption_of_start_tokens_only_has_no_words():
    encoder = SubwordEncoder(VOCABULARY)
    tokens = np.array([[b"[START]", b"[START]", b"[END]", b""]])  # (1, 4)
    word_maps, words = _whole_words(encoder, tokens, np.ones((1, 4, 2, 2), "float32"))
    assert encoder.decode([[2, 2, 3, 0]]).numpy()[0] == b""
    assert words == [[]]
    assert not word_maps.any()
