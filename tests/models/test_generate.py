"""`generate(...)` with the tokenizers a model holds, kept in its `.keras` file as assets."""

import zipfile

import keras
import numpy as np
import pytest
import tensorflow as tf
import tiny_models

from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
from keras_attention.text.subword_encoder import SubwordEncoder

SOURCES = ["the dog sleeps", "a cat runs", "the cat sleeps"]
TARGETS = ["el perro duerme", "un gato corre", "el gato duerme"]
# Other special tokens than the defaults: they must come back from the file too.
CAPTION_VOCABULARY = ["<pad>", "<unk>", "<s>", "</s>", "a", "red", "blue", "circle", "square", "on"]


@pytest.fixture(scope="module")
def tokenizers():
    return ReversibleTokenizer.train(SOURCES, 300), ReversibleTokenizer.train(TARGETS, 300)


def _translator(tokenizers, **overrides):
    keras.utils.set_random_seed(0)
    source, target = tokenizers
    return tiny_models.tiny_transformer_translator(
        source_vocabulary_size=source.vocabulary_size,
        target_vocabulary_size=target.vocabulary_size,
        dropout=0.0,
        **overrides,
    )


def _caption_tokenizer():
    return SubwordEncoder(
        CAPTION_VOCABULARY, pad_token="<pad>", unknown_token="<unk>", start_token="<s>",
        end_token="</s>",
    )  # fmt: skip


def test_translator_generates_with_its_tokenizers_as_translate_does(tokenizers):
    model = _translator(tokenizers).attach_tokenizers(*tokenizers)
    for beam_width in (1, 3):
        assert model.generate(SOURCES, beam_width=beam_width) == model.translate(
            SOURCES, *tokenizers, beam_width=beam_width
        )
    assert model.generate(SOURCES[0]) == model.translate(SOURCES[0])  # held ones by default
    short = model.generate(SOURCES, max_length=2, return_attention=True)[1]
    assert all(len(alignment["translation_tokens"]) <= 2 for alignment in short)


def test_translator_keeps_its_tokenizers_in_its_keras_file(tokenizers, tmp_path):
    model = _translator(tokenizers).attach_tokenizers(*tokenizers)
    path = tmp_path / "translator.keras"
    model.save(path)
    names = zipfile.ZipFile(path).namelist()
    assert "assets/source_tokenizer/tokenizer.json" in names
    restored = keras.saving.load_model(path)
    assert [tokenizer.vocabulary for tokenizer in restored.tokenizers.values()] == [
        tokenizer.vocabulary for tokenizer in tokenizers
    ]
    assert restored.generate(SOURCES, beam_width=2) == model.generate(SOURCES, beam_width=2)
    # ... and `export(path)` needs no tokenizer argument then.
    served = tf.saved_model.load(restored.export(tmp_path / "served")).signatures["serving_default"]
    answers = served(text=tf.constant(SOURCES))["translation"].numpy()
    assert [answer.decode() for answer in answers] == model.generate(SOURCES)


def test_rnn_translator_generates_with_a_length(tokenizers):
    keras.utils.set_random_seed(0)
    source, target = tokenizers
    model = tiny_models.tiny_rnn_attention_translator(
        source_vocabulary_size=source.vocabulary_size,
        target_vocabulary_size=target.vocabulary_size,
    ).attach_tokenizers(source, target)
    with pytest.raises(ValueError, match=r"`max_length` must be given to RNNAttentionTransl"):
        model.generate(SOURCES)  # no lengths of its own
    with pytest.raises(ValueError, match=r"`max_source_length` must be given.*Received"):
        model.generate(SOURCES, max_length=5)
    generated = model.generate(SOURCES, max_length=5, max_source_length=8, return_attention=True)
    expected = model.translate(
        SOURCES, max_source_length=8, max_target_length=5, return_attention=True
    )
    assert generated[0] == expected[0] and len(generated[0]) == 3
    for ours, theirs in zip(generated[1], expected[1], strict=True):
        np.testing.assert_array_equal(ours["attention"], theirs["attention"])
        assert len(ours["translation_tokens"]) <= 5


def test_captioner_generates_and_keeps_its_tokenizer(tmp_path):
    keras.utils.set_random_seed(0)
    tokenizer = _caption_tokenizer()
    model = tiny_models.tiny_show_attend_tell_captioner().attach_tokenizers(tokenizer)
    images = np.random.default_rng(0).integers(0, 256, (3, 20, 16, 3)).astype("uint8")
    assert model.generate(images, beam_width=2) == model.caption(images, tokenizer, beam_width=2)
    path = tmp_path / "captioner.keras"
    model.save(path)
    restored = keras.saving.load_model(path)
    (held,) = restored.tokenizers.values()
    assert (type(held), held.vocabulary, held.end_id) == (SubwordEncoder, CAPTION_VOCABULARY, 3)
    assert restored.generate(images) == model.caption(images, tokenizer)
    captions, attention, words = restored.generate(images, max_length=3, return_attention=True)
    assert attention.shape == (3, 3, 4, 4) and len(words) == 3


def test_a_model_without_tokenizers_says_how_to_attach_them(tokenizers, tmp_path):
    model = _translator(tokenizers)
    with pytest.raises(ValueError, match=r"attach_tokenizers\(source_tokenizer, target_tokenizer"):
        model.generate(SOURCES)
    model.save(tmp_path / "bare.keras")  # saved without tokenizers: loads holding none
    assert keras.saving.load_model(tmp_path / "bare.keras").tokenizers == {}
    captioner = tiny_models.tiny_transformer_captioner()
    with pytest.raises(ValueError, match=r"attach_tokenizers\(caption_tokenizer\)"):
        captioner.generate(np.zeros((1, 16, 16, 3), "uint8"))


def test_attached_tokenizers_are_checked(tokenizers):
    source, target = tokenizers
    model = _translator(tokenizers)
    with pytest.raises(ValueError, match=r"takes 2 tokenizer\(s\).*Received: 1"):
        model.attach_tokenizers(source)
    with pytest.raises(ValueError, match=r"`target_tokenizer` must have the model's target voc"):
        model.attach_tokenizers(source, _caption_tokenizer())
    with pytest.raises(ValueError, match=r"`source_tokenizer` must be a keras_attention.text tok"):
        model.attach_tokenizers(CAPTION_VOCABULARY, target)
    assert model.tokenizers == {}  # nothing half attached
