"""Translator SavedModel export: strings in, translations and attention out."""

import json
import os
import re

import keras
import numpy as np
import pytest
import tensorflow as tf
from outside_process import run_without_the_package
from outside_process import saved_model_cli_show
from tiny_models import tiny_transformer_captioner
from tiny_models import tiny_transformer_translator
from translation_encoders import translation_encoders

from keras_attention.generation.beam_search import beam_search
from keras_attention.generation.decoding_protocol import decoder_for_model
from keras_attention.generation.greedy_search import greedy_search
from keras_attention.losses.masked_cross_entropy import masked_sparse_categorical_crossentropy
from keras_attention.serving.translation_export import export_translator
from keras_attention.serving.translation_export import load_translator
from keras_attention.serving.translation_export import make_translation_function
from keras_attention.tasks.translation.batches import make_translation_batches
from keras_attention.tasks.translation.builtin_corpus import builtin_translation_pairs
from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
from keras_attention.text.whitespace import normalize_whitespace

SOURCE_LENGTH, TARGET_LENGTH = 12, 10
GROUP_SIZE = 4  # smaller than the request below: decoding runs in two groups

# Loads and calls the SavedModel where importing keras_attention or keras-hub is
# impossible: TensorFlow and tensorflow-text (the tokenizers' SentencePiece op) serve it.
_TRANSLATE_WITHOUT_PACKAGE = """
import json, sys
sys.modules["keras_hub"] = None
import tensorflow as tf
import tensorflow_text  # registers the SentencePiece op
loaded = tf.saved_model.load(sys.argv[1])
serve = loaded.signatures["serving_default"]
result = serve(text=tf.constant(json.loads(sys.argv[2])))
empty = serve(text=tf.constant([], tf.string))
scalar = serve(text=tf.constant(json.loads(sys.argv[2])[0]))
try:
    serve(text=tf.constant([["a", "b"]]))
    rank_two_error = ""
except tf.errors.InvalidArgumentError as error:
    rank_two_error = error.message
print(json.dumps({
    "scalar_translation": scalar["translation"].numpy().decode("utf-8"),
    "scalar_shapes": {name: value.shape.as_list() for name, value in scalar.items()},
    "rank_two_error": rank_two_error,
    "translation": [text.decode("utf-8") for text in result["translation"].numpy()],
    "translation_dtype": result["translation"].dtype.name,
    "attention": result["attention"].numpy().tolist(),
    "attention_dtype": result["attention"].dtype.name,
    "source_tokens": [[t.decode("utf-8") for t in row] for row in result["source_tokens"].numpy()],
    "translation_tokens": [
        [t.decode("utf-8") for t in row] for row in result["translation_tokens"].numpy()
    ],
    "source_truncated": result["source_truncated"].numpy().tolist(),
    "truncated_dtype": result["source_truncated"].dtype.name,
    "empty_shapes": {name: value.shape.as_list() for name, value in empty.items()},
    "source_vocabulary": loaded.source_vocabulary.asset_path.numpy().decode("utf-8"),
    "package_imported": sys.modules.get("keras_attention") is not None,
}))
"""


def _sentences(pairs):
    """Corpus sentences, a sentence with unseen words, an empty one, a too-long one, a blank one."""
    short = [source for source, _ in pairs if len(source.split()) <= 8]
    return short[:3] + [
        "the zebra quux sleeps",
        "",
        " ".join(short[3:6]),  # more pieces than SOURCE_LENGTH
        " \t ",
    ]


def _train_few_steps(model, encoders, pairs):
    """Some steps of teacher forcing, so the weights are not the initial ones."""
    dataset = tf.data.Dataset.from_tensor_slices(tuple(map(list, zip(*pairs))))
    batches = make_translation_batches(
        dataset,
        *encoders,
        batch_size=16,
        source_length=SOURCE_LENGTH,
        target_length=TARGET_LENGTH,
    )
    model.compile(
        optimizer=keras.optimizers.Adam(1e-2),
        loss=masked_sparse_categorical_crossentropy,
        jit_compile=False,  # a few steps: compiling them with XLA would take longer
    )
    model.fit(batches.take(6), epochs=1, verbose=0)
    return model


@pytest.fixture(scope="module")
def corpus():
    pairs = builtin_translation_pairs(num_pairs=120, seed=3)
    encoders = translation_encoders(pairs, vocabulary_size=400)
    return pairs, encoders


@pytest.fixture(scope="module")
def transformer_export(corpus, tmp_path_factory):
    pairs, (source_encoder, target_encoder) = corpus
    keras.utils.set_random_seed(1)
    model = tiny_transformer_translator(
        source_vocabulary_size=source_encoder.vocabulary_size,
        target_vocabulary_size=target_encoder.vocabulary_size,
        max_source_length=SOURCE_LENGTH,
        max_target_length=TARGET_LENGTH,
    )
    _train_few_steps(model, (source_encoder, target_encoder), pairs)
    path = export_translator(
        model,
        tmp_path_factory.mktemp("export") / "translator",
        source_encoder,
        target_encoder,
        max_source_length=SOURCE_LENGTH,
        max_target_length=TARGET_LENGTH,
        decode_batch_size=GROUP_SIZE,
    )
    return model, path


def _joined(pieces):
    """Pieces back into text: each carries its own leading space; "<0xNN>" is a byte."""
    parts = [
        bytes([int(piece[3:5], 16)]) if re.fullmatch(r"<0x[0-9A-F]{2}>", piece) else piece.encode()
        for piece in pieces
    ]
    return b"".join(parts).decode("utf-8")


def test_export_translates_without_the_package_as_greedy_search_does(corpus, transformer_export):
    pairs, (source_encoder, target_encoder) = corpus
    model, path = transformer_export
    sentences = _sentences(pairs)
    served = run_without_the_package(_TRANSLATE_WITHOUT_PACKAGE, path, json.dumps(sentences))
    assert not served["package_imported"]

    count = len(sentences)
    assert served["translation_dtype"] == "string" and len(served["translation"]) == count
    assert all(isinstance(text, str) for text in served["translation"])
    assert served["attention_dtype"] == "float32"
    attention = np.array(served["attention"], dtype="float32")
    assert attention.shape == (count, TARGET_LENGTH, SOURCE_LENGTH)
    assert served["empty_shapes"] == {
        "translation": [0],
        "attention": [0, TARGET_LENGTH, SOURCE_LENGTH],
        "source_tokens": [0, SOURCE_LENGTH],
        "translation_tokens": [0, TARGET_LENGTH],
        "source_truncated": [0],
    }
    assert served["source_vocabulary"].endswith(os.path.join("assets", "source_vocabulary.txt"))

    # The same translation as greedy search on the same ids in this process.
    source_ids = source_encoder.encode(sentences, SOURCE_LENGTH)
    tokens, expected_attention = greedy_search(
        decoder_for_model(model),
        source_ids,
        target_encoder.start_id,
        target_encoder.end_id,
        TARGET_LENGTH,
    )
    expected = [text.decode("utf-8") for text in target_encoder.decode(tokens).numpy()]
    blank = [not sentence.strip() for sentence in sentences]
    assert served["translation"] == ["" if b else text for b, text in zip(blank, expected)]
    assert blank[4] and blank[-1] and expected[-1] != ""  # blank text is not decoded
    np.testing.assert_allclose(
        attention[~np.array(blank)], np.asarray(expected_attention)[~np.array(blank)], atol=1e-5
    )
    assert np.all(attention[np.array(blank)] == 0)

    # A scalar is answered with scalars; a rank-2 batch is refused, naming its shape.
    assert served["scalar_translation"] == served["translation"][0]
    assert served["scalar_shapes"]["translation"] == []
    assert served["scalar_shapes"]["attention"] == [TARGET_LENGTH, SOURCE_LENGTH]
    assert "`text` must be a string or a 1D batch of strings" in served["rank_two_error"]
    assert "[1 2]" in served["rank_two_error"]

    # The token outputs spell the source and the translation, spaces included (the
    # first piece of a text carries the space before its first word, as every word's does).
    for sentence, pieces in zip(sentences, served["source_tokens"]):
        text = _joined(pieces)
        assert text == "" or text.startswith(" ")
        if all(pieces):  # cut after SOURCE_LENGTH pieces
            assert sentence.startswith(text[1:])
        else:
            assert text[1:] == normalize_whitespace(sentence)
    assert all(served["source_tokens"][5]) and not any(served["source_tokens"][4])
    # A source is flagged as cut exactly when its pieces do not spell all of it.
    spelled = [_joined(pieces)[1:] for pieces in served["source_tokens"]]
    cut = [text != normalize_whitespace(sentence) for text, sentence in zip(spelled, sentences)]
    assert served["truncated_dtype"] == "bool" and served["source_truncated"] == cut
    assert cut[5] and not cut[0] and not cut[4]  # the long one is, a corpus one and "" are not
    for text, pieces in zip(served["translation"], served["translation_tokens"]):
        assert _joined(p for p in pieces if p not in ("[START]", "[END]")).strip() == text

    # Each produced piece's attention is a distribution over the real source pieces.
    outputs = zip(attention, served["translation_tokens"], served["source_tokens"])
    for row, pieces, source in outputs:
        produced, real = sum(map(bool, pieces)), sum(map(bool, source))
        if real:
            np.testing.assert_allclose(row[:produced].sum(axis=-1), 1.0, atol=1e-5)
        assert np.all(row[:, real:] == 0) and np.all(row[produced:] == 0)


def test_export_passes_saved_model_cli(corpus, transformer_export):
    _, path = transformer_export
    output = saved_model_cli_show(path)
    assert "signature_def['serving_default']" in output
    assert "inputs['text']" in output and "DT_STRING" in output
    # The SentencePiece op is tensorflow-text's: the tool lists the signature (its
    # concrete functions it cannot list, as for any custom op).
    assert "outputs['translation']" in output and "outputs['attention']" in output


def test_export_writes_the_vocabularies_as_assets(corpus, transformer_export):
    _, (source_encoder, target_encoder) = corpus
    _, path = transformer_export
    for name, encoder in (("source", source_encoder), ("target", target_encoder)):
        with open(os.path.join(path, "assets", f"{name}_vocabulary.txt"), encoding="utf-8") as file:
            assert file.read().splitlines() == encoder.vocabulary


def test_beam_search_export_matches_beam_search(corpus, transformer_export, tmp_path):
    pairs, (source_encoder, target_encoder) = corpus
    model, _ = transformer_export
    sentences = [source for source, _ in pairs[10:13]]
    translate = load_translator(
        export_translator(
            model,
            tmp_path,
            source_encoder,
            target_encoder,
            SOURCE_LENGTH,
            TARGET_LENGTH,
            beam_width=3,
            length_penalty=0.5,
            decode_batch_size=2,
        )
    )
    served = translate(sentences)

    tokens, attention, _ = beam_search(
        decoder_for_model(model),
        source_encoder.encode(sentences, SOURCE_LENGTH),
        target_encoder.start_id,
        target_encoder.end_id,
        TARGET_LENGTH,
        beam_width=3,
        length_penalty=0.5,
    )
    assert served["translation"].numpy().tolist() == target_encoder.decode(tokens).numpy().tolist()
    np.testing.assert_allclose(served["attention"].numpy(), np.asarray(attention), atol=1e-5)


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"beam_width": 0}, r"`beam_width` must be a positive integer. Received: beam_width=0"),
        (
            {"max_source_length": 0},
            r"`max_source_length` must be a positive integer. "
            r"Received: max_source_length=0",
        ),
        (
            {"decode_batch_size": 2.5},
            r"`decode_batch_size` must be a positive integer. "
            r"Received: decode_batch_size=2.5",
        ),
        (
            {"max_target_length": TARGET_LENGTH + 1},
            r"`max_target_length` must be at most "
            rf"{TARGET_LENGTH}, .* Received: max_target_length={TARGET_LENGTH + 1}",
        ),
        (
            {"max_source_length": SOURCE_LENGTH + 1},
            r"`max_source_length` must be at most "
            rf"{SOURCE_LENGTH}, .* Received: max_source_length={SOURCE_LENGTH + 1}",
        ),
        (
            {"length_penalty": -1.0},
            r"`length_penalty` must be a number >= 0. "
            r"Received: length_penalty=-1.0",
        ),
        (
            {"source_encoder": ["[PAD]"]},
            r"`source_encoder` must be a tokenizer such as "
            r"keras_attention's ReversibleTokenizer .* Received: source_encoder=\['\[PAD\]'\], "
            r"which lacks encode, decode",
        ),
        (
            {"target_encoder": ReversibleTokenizer.train(["a"], 300)},
            r"`target_encoder` must have as many tokens as the model has target ids \(\d+\). "
            r"Received: target_encoder.vocabulary_size=26\d",
        ),
        (
            {"source_encoder": ReversibleTokenizer.train(["ab"], 300)},
            r"`source_encoder` must have as many tokens as the model has source ids \(\d+\). "
            r"Received: source_encoder.vocabulary_size=26\d",
        ),
    ],
)
def test_bad_arguments(corpus, transformer_export, overrides, message):
    _, (source_encoder, target_encoder) = corpus
    model, _ = transformer_export
    encoders = dict(source_encoder=source_encoder, target_encoder=target_encoder)
    lengths = dict(max_source_length=SOURCE_LENGTH, max_target_length=TARGET_LENGTH)
    with pytest.raises(ValueError, match=message):
        make_translation_function(**{"model": model, **encoders, **lengths, **overrides})


def test_a_model_that_is_not_a_translator_is_refused(corpus, tmp_path):
    _, (source_encoder, target_encoder) = corpus
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    with pytest.raises(
        ValueError,
        match=r"`model` must be a translator that implements the "
        r"decoding protocol .* Received: model=.*, which lacks encode, "
        r"initial_cache, step, vocabulary_size, max_length",
    ):
        export_translator(model, tmp_path, source_encoder, target_encoder, 4, 4)


def test_load_translator_needs_a_serving_signature(tmp_path):
    tf.saved_model.save(tf.Module(), str(tmp_path))
    with pytest.raises(
        ValueError,
        match=r"`path` must hold a SavedModel with a 'serving_default' "
        r"signature. Received: path=",
    ):
        load_translator(tmp_path)


def test_a_captioner_is_refused_with_a_pointer_to_its_export(corpus, tmp_path):
    _, (source_encoder, target_encoder) = corpus
    captioner = tiny_transformer_captioner(
        vocabulary_size=target_encoder.vocabulary_size, hidden_dim=8
    )
    with pytest.raises(
        ValueError,
        match=r"`model` must be a translator .*export_captioner.*"
        r"Received: model='transformer_captioner'",
    ):
        export_translator(captioner, tmp_path, source_encoder, target_encoder, 4, 4)
