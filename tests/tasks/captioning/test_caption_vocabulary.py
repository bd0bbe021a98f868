"""Vocabulary, caption length and predicted tokens of a captioner's training captions."""

import numpy as np
import pytest
import tensorflow as tf

from keras_attention.tasks.captioning.vocabulary import MAX_DEFAULT_LENGTH
from keras_attention.tasks.captioning.vocabulary import caption_length
from keras_attention.tasks.captioning.vocabulary import caption_lengths
from keras_attention.tasks.captioning.vocabulary import caption_token_ids
from keras_attention.tasks.captioning.vocabulary import train_caption_vocabulary
from keras_attention.text.reversible_tokenizer import ReversibleTokenizer

CAPTIONS = ["a red circle", "a blue square left of a red circle", "a red square", "a blue circle"]


@pytest.fixture(scope="module")
def vocabulary(tmp_path_factory):
    folder = tmp_path_factory.mktemp("run")
    return folder, train_caption_vocabulary(CAPTIONS * 2, 300, str(folder))


def test_vocabulary_is_saved_and_reloads_the_same(vocabulary):
    folder, tokenizer = vocabulary
    assert (folder / "vocabulary").is_dir()
    reloaded = ReversibleTokenizer.load(str(folder / "vocabulary"))
    assert reloaded.vocabulary_size == tokenizer.vocabulary_size
    ids = tokenizer.encode(CAPTIONS, 12)
    np.testing.assert_array_equal(reloaded.encode(CAPTIONS, 12), ids)
    assert [t.decode() for t in tokenizer.decode(ids).numpy()] == CAPTIONS


def test_caption_length_fits_the_longest_caption(vocabulary):
    _, tokenizer = vocabulary
    # Independent count: the pieces of each caption from the tokenizer, plus one.
    pieces = [int(tf.size(tokenizer.tokenize(tf.constant([text]))[0])) for text in CAPTIONS]
    assert caption_lengths(CAPTIONS, tokenizer).tolist() == pieces
    assert caption_length(CAPTIONS, tokenizer) == max(pieces) + 1
    assert caption_length(CAPTIONS, tokenizer, max_length=5) == 5
    long_caption = " ".join(["a red circle"] * 30)
    assert caption_length([long_caption], tokenizer) == MAX_DEFAULT_LENGTH
    with pytest.raises(ValueError, match="max_length=0"):
        caption_length(CAPTIONS, tokenizer, max_length=0)


def test_caption_length_leaves_out_the_rarest_longest_captions(vocabulary):
    _, tokenizer = vocabulary
    # One caption in 2,000 much longer than the others: the 99.9th percentile ignores it.
    many = ["a red circle"] * 1999 + [" ".join(["a blue square left of"] * 5)]
    common = int(tf.size(tokenizer.tokenize(tf.constant(["a red circle"]))[0]))
    assert caption_length(many, tokenizer) == common + 1
    assert caption_length(many[-2:], tokenizer) > common + 1  # two captions: the longest


def test_token_ids_are_each_captions_tokens_and_an_end_token(vocabulary):
    _, tokenizer = vocabulary
    ids = np.concatenate(caption_token_ids(CAPTIONS, tokenizer))
    expected = []
    for text in CAPTIONS:
        expected += tokenizer.tokenize(tf.constant([text]))[0].numpy().tolist()
    assert sorted(ids.tolist()) == sorted(expected + [tokenizer.end_id] * len(CAPTIONS))
