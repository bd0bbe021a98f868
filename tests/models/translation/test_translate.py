"""`translate` on the translator classes: strings in, strings (and alignments) out."""

import warnings

import numpy as np
import pytest
from full_pass_greedy import greedy_by_full_passes
from tiny_models import tiny_rnn_attention_translator
from tiny_models import tiny_transformer_translator
from translation_encoders import translation_encoders

from keras_attention.generation.beam_search import beam_search
from keras_attention.tasks.translation.builtin_corpus import builtin_translation_pairs

SOURCE_LENGTH, TARGET_LENGTH = 10, 8


@pytest.fixture(scope="module")
def corpus():
    pairs = builtin_translation_pairs(num_pairs=60, seed=5)
    encoders = translation_encoders(pairs, vocabulary_size=350)
    texts = [source for source, _ in pairs if len(source.split()) <= 5][:3]
    return texts, encoders


def _build(kind, source_encoder, target_encoder):
    sizes = dict(
        source_vocabulary_size=source_encoder.vocabulary_size,
        target_vocabulary_size=target_encoder.vocabulary_size,
        dropout=0.0,
    )
    if kind == "transformer":
        lengths = dict(max_source_length=SOURCE_LENGTH, max_target_length=TARGET_LENGTH)
        return tiny_transformer_translator(**sizes, **lengths, num_layers=2)
    return tiny_rnn_attention_translator(**sizes, embedding_dim=8, units=8, cell="lstm")


def _texts(encoder, ids):
    return [text.decode("utf-8", errors="replace") for text in encoder.decode(ids).numpy()]


@pytest.mark.parametrize("kind", ["transformer", "rnn"])
def test_greedy_translate_is_the_decoded_full_pass_greedy(corpus, kind):
    texts, (source_encoder, target_encoder) = corpus
    model = _build(kind, source_encoder, target_encoder)
    lengths = dict(max_source_length=SOURCE_LENGTH, max_target_length=TARGET_LENGTH)
    translations, alignments = model.translate(
        texts, source_encoder, target_encoder, return_attention=True, **lengths
    )
    sources = source_encoder.encode(texts, SOURCE_LENGTH).numpy()
    ids = (target_encoder.start_id, target_encoder.end_id)
    tokens = greedy_by_full_passes(model, {"source": sources}, "target", *ids, TARGET_LENGTH)
    assert translations == _texts(target_encoder, tokens)
    assert any(translations)  # not only empty translations
    for alignment, source, row in zip(alignments, sources, tokens):
        produced, read = int((row != 0).sum()), int((source != 0).sum())
        assert alignment["attention"].shape == (produced, read)
        assert len(alignment["translation_tokens"]) == produced
        assert len(alignment["source_tokens"]) == read
        # Each row: where the decoder looked while choosing that piece, a distribution.
        np.testing.assert_allclose(alignment["attention"].sum(-1), 1.0, atol=1e-5)
    # One string in, one string (and one alignment) out.
    single, alignment = model.translate(
        texts[0], source_encoder, target_encoder, return_attention=True, **lengths
    )
    assert single == translations[0]
    np.testing.assert_allclose(alignment["attention"], alignments[0]["attention"], atol=1e-6)


def test_beam_translate_is_the_decoded_beam_search(corpus):
    texts, (source_encoder, target_encoder) = corpus
    model = _build("transformer", source_encoder, target_encoder)
    translations = model.translate(texts, source_encoder, target_encoder, beam_width=3)
    sources = source_encoder.encode(texts, SOURCE_LENGTH).numpy()
    tokens, _, _ = beam_search(
        model,
        sources,
        target_encoder.start_id,
        target_encoder.end_id,
        TARGET_LENGTH,
        beam_width=3,
    )
    assert translations == _texts(target_encoder, np.asarray(tokens))


@pytest.mark.parametrize(
    "kind, text, lengths, message",
    [
        (
            "rnn",
            "a",
            {"max_target_length": 4},
            r"`max_source_length` must be given .* Received: max_source_length=None",
        ),
        (
            "rnn",
            3,
            {"max_source_length": 4, "max_target_length": 4},
            r"`texts` must be a string or a list of strings. Received: texts=3",
        ),
        (
            "transformer",
            "a",
            {"max_target_length": 9},
            r"`max_target_length` must be at most 8, .* Received: max_target_length=9",
        ),
    ],
)
def test_bad_arguments(corpus, kind, text, lengths, message):
    _, (source_encoder, target_encoder) = corpus
    model = _build(kind, source_encoder, target_encoder)
    with pytest.raises(ValueError, match=message):
        model.translate(text, source_encoder, target_encoder, **lengths)


@pytest.mark.parametrize("kind", ["transformer", "rnn"])
def test_attention_examples_hold_every_map_the_model_gives(corpus, kind):
    texts, (source_encoder, target_encoder) = corpus
    model = _build(kind, source_encoder, target_encoder)
    lengths = {"max_source_length": SOURCE_LENGTH, "max_target_length": TARGET_LENGTH}
    examples = model.attention_examples(texts, source_encoder, target_encoder, **lengths)
    _, alignments = model.translate(
        texts, source_encoder, target_encoder, return_attention=True, **lengths
    )
    assert len(examples) == len(texts)
    for example, alignment in zip(examples, alignments):
        source, target = len(example["source_tokens"]), len(example["target_tokens"])
        assert example["source_tokens"] == list(alignment["source_tokens"])
        assert example["target_tokens"] == list(alignment["translation_tokens"])
        if kind == "rnn":  # one attention: the decoding alignment itself
            np.testing.assert_array_equal(example["cross_attention"][0, 0], alignment["attention"])
            assert "encoder_attention" not in example
            continue
        assert example["cross_attention"].shape == (2, 2, target, source)
        assert example["encoder_attention"].shape == (2, 2, source, source)
        assert example["decoder_attention"].shape == (2, 2, target, target)
        # Teacher-forced on its own translation, the last block's cross-attention
        # averaged over heads is what greedy decoding reported step by step.
        np.testing.assert_allclose(
            example["cross_attention"][-1].mean(0), alignment["attention"], atol=1e-5
        )


def test_a_text_longer_than_max_source_length_is_cut_with_a_warning(corpus):
    texts, (source_encoder, target_encoder) = corpus
    model = _build("rnn", source_encoder, target_encoder)
    pieces = [len(source_encoder.tokenize([text]).values) for text in texts]
    short, long_text = texts[pieces.index(min(pieces))], " ".join(texts)
    # The premises, counted by the tokenizer itself: one text fits, the other does not.
    assert min(pieces) <= SOURCE_LENGTH < len(source_encoder.tokenize([long_text]).values)
    lengths = dict(max_source_length=SOURCE_LENGTH, max_target_length=TARGET_LENGTH)
    with pytest.warns(UserWarning, match=r"^1 of 2 texts had more than max_source_length=10 "):
        model.translate([short, long_text], source_encoder, target_encoder, **lengths)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a text that fits: no warning
        model.translate([short], source_encoder, target_encoder, **lengths)
