"""Exported models check their inputs in the graph and answer fast from the first request.

Each test is named for the case it covers; the models are tiny.
"""

import time

import numpy as np
import pytest
import tensorflow as tf
from tiny_models import TRANSLATOR_VOCABULARIES
from tiny_models import tiny_rnn_attention_translator
from tiny_models import tiny_show_attend_tell_captioner
from tiny_models import tiny_vision_transformer

from keras_attention.serving.captioning_export import make_caption_function
from keras_attention.serving.image_classification_export import export_image_classifier
from keras_attention.serving.image_classification_export import load_image_classifier
from keras_attention.serving.translation_export import export_translator
from keras_attention.serving.translation_export import load_translator
from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
from keras_attention.text.subword_encoder import SubwordEncoder

NON_FINITE = "must hold finite pixel values"


@pytest.fixture(scope="module")
def classifier_path(tmp_path_factory):
    model = tiny_vision_transformer()
    folder = tmp_path_factory.mktemp("vit")
    return export_image_classifier(model, str(folder / "served"), ["a", "b", "c"])


@pytest.fixture(scope="module")
def translator_path(tmp_path_factory):
    encoder = ReversibleTokenizer.train(["a b", "b a", "a a b"], 300)
    vocabularies = dict.fromkeys(TRANSLATOR_VOCABULARIES, encoder.vocabulary_size)
    model = tiny_rnn_attention_translator(**vocabularies, embedding_dim=4, units=4)
    folder = tmp_path_factory.mktemp("nmt")
    return export_translator(model, str(folder / "served"), encoder, encoder, 6, 5)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_pixels_raise_an_error_that_says_so(classifier_path, bad):
    serve = tf.saved_model.load(classifier_path).signatures["serving_default"]
    images = np.full((2, 8, 8, 3), 128.0, np.float32)
    images[1, 3, 4, 0] = bad
    with pytest.raises(tf.errors.InvalidArgumentError, match=NON_FINITE):
        serve(images=tf.constant(images))


def test_non_finite_pixels_raise_in_the_caption_function_too():
    vocabulary = ["[PAD]", "[UNK]", "[START]", "[END]", "a", "red"]
    sizes = dict(vocabulary_size=len(vocabulary), max_caption_length=4, dropout=0.1)
    model = tiny_show_attend_tell_captioner(**sizes, embedding_dim=4, units=8, attention_units=4)
    caption = make_caption_function(model, SubwordEncoder(vocabulary), 3, decode_batch_size=2)
    images = np.zeros((1, 16, 16, 3), np.float32)
    images[0, 0, 0, 2] = np.nan
    with pytest.raises(tf.errors.InvalidArgumentError, match=NON_FINITE):
        caption(images)


def test_uint8_and_float_pixels_give_the_same_answer(classifier_path):
    classify = load_image_classifier(classifier_path)
    pixels = np.random.default_rng(0).integers(0, 256, (2, 8, 8, 3)).astype(np.uint8)
    from_uint8 = classify(pixels)
    from_float = classify(pixels.astype(np.float32))
    np.testing.assert_allclose(from_uint8["probabilities"], from_float["probabilities"], rtol=1e-6)
    assert from_uint8["labels"].numpy().tolist() == from_float["labels"].numpy().tolist()


def test_string_inputs_of_rank_0_and_1_accepted_other_ranks_rejected(translator_path):
    serve = tf.saved_model.load(translator_path).signatures["serving_default"]
    assert serve(text=tf.constant("a b"))["translation"].shape == ()
    assert serve(text=tf.constant(["a b", "b"]))["translation"].shape == (2,)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"1D batch of strings.*\[1 2\]"):
        serve(text=tf.constant([["a", "b"]]))


def test_blank_text_is_answered_with_an_empty_string(translator_path):
    serve = tf.saved_model.load(translator_path).signatures["serving_default"]
    translations = serve(text=tf.constant(["", "  \t ", "a b"]))["translation"].numpy()
    assert translations[:2].tolist() == [b"", b""]


def test_loaded_translator_answers_its_first_request_as_fast_as_later_ones(translator_path):
    translate = load_translator(translator_path)  # warms up before returning
    latencies = []
    for _ in range(6):
        start = time.perf_counter()
        translate(["b a b"])["translation"].numpy()
        latencies.append(time.perf_counter() - start)
    # Cold, the first call compiles the XLA decoding loop: ~100x a warm call.
    assert latencies[0] < 5 * np.median(latencies[1:]) + 0.05, latencies
