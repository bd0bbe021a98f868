"""`model.export(path, tokenizer...)` on translators and captioners writes their serving model."""

import keras
import numpy as np
import pytest
import tensorflow as tf
import tiny_models

from keras_attention.text.reversible_tokenizer import ReversibleTokenizer

TEXTS = ["the dog sleeps", "a cat runs", "the cat sleeps"]
VOCABULARY = ["[PAD]", "[UNK]", "[START]", "[END]", "a", "red", "blue", "circle", "square", "on"]


@pytest.fixture(scope="module")
def tokenizer():
    return ReversibleTokenizer.train(TEXTS, 300)


def _translator(tokenizer):
    keras.utils.set_random_seed(0)
    size = tokenizer.vocabulary_size
    return tiny_models.tiny_transformer_translator(
        source_vocabulary_size=size, target_vocabulary_size=size, dropout=0.0
    )


def test_translation_export_writes_the_string_translator(tokenizer, tmp_path):
    model = _translator(tokenizer)
    path = model.export(tmp_path / "translator", tokenizer, tokenizer, beam_width=2)
    serve = tf.saved_model.load(path).signatures["serving_default"]
    served = [text.decode() for text in serve(text=tf.constant(TEXTS))["translation"].numpy()]
    assert served == model.translate(TEXTS, tokenizer, tokenizer, beam_width=2)


def test_translation_export_without_tokenizers_says_what_to_call(tokenizer, tmp_path):
    model = _translator(tokenizer)
    with pytest.raises(ValueError, match="export_translator.*teacher_forced=True.*Received"):
        model.export(tmp_path / "translator")
    with pytest.raises(ValueError, match="Received.*other arguments \\['format'\\]"):
        model.export(tmp_path / "translator", tokenizer, tokenizer, format="tf_saved_model")


def test_rnn_translator_export_needs_lengths(tokenizer, tmp_path):
    keras.utils.set_random_seed(0)
    size = tokenizer.vocabulary_size
    model = tiny_models.tiny_rnn_attention_translator(
        source_vocabulary_size=size, target_vocabulary_size=size
    )
    with pytest.raises(ValueError, match="max_source_length.*must be given"):
        model.export(tmp_path / "rnn", tokenizer, tokenizer)


def test_teacher_forced_export_is_keras_own(tokenizer, tmp_path):
    model = _translator(tokenizer)
    model.export(tmp_path / "logits", teacher_forced=True, verbose=False)
    serve = tf.saved_model.load(str(tmp_path / "logits")).signatures["serve"]
    ids = np.ones((1, 8), "int32")
    logits = list(serve(source=ids, target=ids).values())[0]
    np.testing.assert_allclose(
        logits.numpy(), model({"source": ids, "target": ids}).numpy(), atol=1e-5
    )


def test_captioner_export_writes_the_image_captioner(tmp_path):
    keras.utils.set_random_seed(0)
    model = tiny_models.tiny_transformer_captioner()
    path = model.export(tmp_path / "captioner", VOCABULARY)
    signatures = tf.saved_model.load(path).signatures
    assert {"serving_default", "serving_uint8", "serving_bytes"} <= set(signatures)
    images = np.random.default_rng(0).uniform(0, 255, (2, 20, 16, 3)).astype("float32")
    served = signatures["serving_default"](images=tf.constant(images))["caption"].numpy()
    assert [caption.decode() for caption in served] == model.caption(images, VOCABULARY)
    with pytest.raises(ValueError, match="export_captioner.*teacher_forced=True.*Received"):
        model.export(tmp_path / "again")
