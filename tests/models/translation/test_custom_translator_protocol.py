"""A user's own translator gets search, export and plots through the decoding protocol alone.

`CopyTranslator` below is not built from the package's models: it has no
encoder stack, a single lookup table and layer names of its own. Its
weights are set by hand so that its translation is known: step t attends
to source position t only and emits the token there, then the end token.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf
from keras import ops

import keras_attention as ka
from keras_attention.generation.beam_search import beam_search
from keras_attention.generation.decoding_protocol import decoder_for_model
from keras_attention.generation.greedy_search import greedy_search
from keras_attention.serving.text_translation import translate_texts
from keras_attention.serving.translation_export import export_translator
from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
from keras_attention.visualization.alignment import plot_alignment

SENTENCES = ["the cat sleeps", "a dog runs home", "the dog sleeps at home"]
SOURCE_LENGTH = 8
SHARPNESS = 30.0  # logit of the copied token: its probability is 1 to float32 precision


class CopyTranslator(keras.Model):
    """Copies its source, attending to one source position per step."""

    def __init__(self, vocabulary_size, end_id, max_source_length, **kwargs):
        super().__init__(**kwargs)
        # The protocol's attributes, and the optional ones export checks.
        self.vocabulary_size = vocabulary_size
        self.source_vocabulary_size = vocabulary_size
        self.max_source_length = max_source_length
        self.max_length = max_source_length + 1  # every source token, then the end
        self.copy_table = keras.layers.Embedding(vocabulary_size, vocabulary_size, name="copy")
        self.copy_table.build((None,))
        self.copy_table.set_weights([SHARPNESS * np.eye(vocabulary_size, dtype="float32")])
        self.end_row = keras.layers.Embedding(1, vocabulary_size, name="stop")
        self.end_row.build((None,))
        self.end_row.set_weights([SHARPNESS * np.eye(vocabulary_size, dtype="float32")[[end_id]]])

    def encode(self, inputs):
        source = ops.cast(inputs, "int32")
        return {
            "memory_mask": ops.not_equal(source, 0),  # (B, S)
            "token_logits": self.copy_table(source),  # (B, S, V)
        }

    def initial_cache(self, encoder_state, batch_size, max_length):
        # The position to copy next: kept in the cache so beam search must reorder it.
        return {"position": ops.zeros((batch_size,), "int32")}

    def step(self, token_ids, index, cache, encoder_state):
        mask = ops.cast(encoder_state["memory_mask"], "float32")  # (B, S)
        positions = ops.shape(mask)[1]
        attention = ops.one_hot(cache["position"], positions) * mask  # (B, S)
        copied = ops.einsum("bs,bsv->bv", attention, encoder_state["token_logits"])  # (B, V)
        past_the_end = 1.0 - ops.sum(attention, axis=-1, keepdims=True)  # (B, 1)
        logits = copied + past_the_end * self.end_row(ops.zeros((1,), "int32"))  # (B, V)
        return logits, {"position": cache["position"] + 1}, attention


@pytest.fixture(scope="module")
def tokenizer():
    return ReversibleTokenizer.train(SENTENCES * 3, vocabulary_size=300)


@pytest.fixture(scope="module")
def model(tokenizer):
    return CopyTranslator(tokenizer.vocabulary_size, tokenizer.end_id, SOURCE_LENGTH)


def _source_ids(tokenizer, texts):
    return np.asarray(tokenizer.encode(texts, SOURCE_LENGTH))  # (B, S)


def _expected_tokens(source_ids, end_id, length):
    """Independent reference: the source ids, then the end id, then padding."""
    rows = []
    for row in source_ids:
        tokens = [int(token) for token in row if token != 0] + [end_id]
        rows.append(tokens + [0] * (length - len(tokens)))
    return np.array(rows)


def _argmax_loop(model, source_ids, start_id, end_id, length):
    """Greedy decoding by hand, from the model's own step outputs (no search code)."""
    state = model.encode(source_ids)
    cache = model.initial_cache(state, len(source_ids), length)
    previous = np.full((len(source_ids),), start_id)
    finished = np.zeros(len(source_ids), bool)
    tokens = np.zeros((len(source_ids), length), int)
    for index in range(length):
        logits, cache, _ = model.step(previous, index, cache, state)
        logits = np.array(logits)
        logits[:, 0] = -np.inf  # padding is never produced
        previous = np.where(finished, 0, logits.argmax(-1))
        tokens[:, index] = previous
        finished |= previous == end_id
    return tokens


def test_the_model_is_its_own_decoder(model):
    assert decoder_for_model(model) is model


def test_greedy_search_copies_the_source_and_attends_position_by_position(model, tokenizer):
    source_ids = _source_ids(tokenizer, SENTENCES)
    length = SOURCE_LENGTH + 1
    tokens, attention = greedy_search(
        model, source_ids, tokenizer.start_id, tokenizer.end_id, length
    )
    tokens, attention = np.asarray(tokens), np.asarray(attention)
    expected = _expected_tokens(source_ids, tokenizer.end_id, length)
    np.testing.assert_array_equal(tokens, expected)
    np.testing.assert_array_equal(
        tokens, _argmax_loop(model, source_ids, tokenizer.start_id, tokenizer.end_id, length)
    )
    for row, source in zip(attention, source_ids):
        count = int((source != 0).sum())
        np.testing.assert_array_equal(row[:count, :count], np.eye(count))
        assert np.all(row[count:] == 0) and np.all(row[:, count:] == 0)


def test_beam_search_finds_the_copy_with_a_log_probability_near_zero(model, tokenizer):
    source_ids = _source_ids(tokenizer, SENTENCES)
    length = SOURCE_LENGTH + 1
    tokens, attention, scores = beam_search(
        model, source_ids, tokenizer.start_id, tokenizer.end_id, length, beam_width=3
    )
    np.testing.assert_array_equal(
        np.asarray(tokens), _expected_tokens(source_ids, tokenizer.end_id, length)
    )
    # Every copied token has probability 1 - (V - 1) * e^-30, so log p is ~ 0.
    np.testing.assert_allclose(np.asarray(scores), 0.0, atol=1e-5)
    greedy_attention = greedy_search(
        model, source_ids, tokenizer.start_id, tokenizer.end_id, length
    )[1]
    np.testing.assert_array_equal(np.asarray(attention), np.asarray(greedy_attention))


@pytest.mark.parametrize("beam_width", [1, 2])
def test_translate_texts_gives_back_the_source(model, tokenizer, beam_width):
    translations = translate_texts(
        model,
        SENTENCES + [""],
        tokenizer,
        tokenizer,
        max_target_length=SOURCE_LENGTH + 1,
        beam_width=beam_width,
    )
    assert translations == SENTENCES + [""]


def test_export_and_load_translate_a_string(model, tokenizer, tmp_path):
    path = export_translator(
        model,
        tmp_path / "copy",
        tokenizer,
        tokenizer,
        max_source_length=SOURCE_LENGTH,
        max_target_length=SOURCE_LENGTH + 1,
    )
    serve = tf.saved_model.load(path).signatures["serving_default"]
    outputs = serve(text=tf.constant("the dog sleeps at home"))
    assert outputs["translation"].numpy().decode("utf-8") == "the dog sleeps at home"
    count = len(tokenizer.encode(["the dog sleeps at home"], SOURCE_LENGTH).numpy()[0].nonzero()[0])
    np.testing.assert_array_equal(outputs["attention"].numpy()[:count, :count], np.eye(count))


def test_plot_alignment_of_its_attention(model, tokenizer):
    translation, alignment = translate_texts(
        model,
        "a dog runs home",
        tokenizer,
        tokenizer,
        max_target_length=SOURCE_LENGTH + 1,
        return_attention=True,
    )
    assert translation == "a dog runs home"
    pieces = alignment["source_tokens"]
    assert "".join(pieces).strip() == "a dog runs home"
    assert alignment["translation_tokens"] == pieces + ["[END]"]
    figure = ka.visualization.plot_alignment(
        alignment["attention"], pieces, alignment["translation_tokens"]
    )
    drawn = np.asarray(figure.axes[0].images[0].get_array())
    expected = np.vstack([np.eye(len(pieces)), np.zeros((1, len(pieces)))])  # END sees nothing
    np.testing.assert_array_equal(drawn, expected)
    assert [label.get_text() for label in figure.axes[0].get_xticklabels()] == pieces
    assert plot_alignment is ka.visualization.plot_alignment


def test_export_refuses_a_model_without_the_protocol(tokenizer, tmp_path):
    class NoStep(keras.Model):
        vocabulary_size, max_length = tokenizer.vocabulary_size, None

        def encode(self, inputs):
            return {"memory_mask": ops.not_equal(inputs, 0)}

        def initial_cache(self, encoder_state, batch_size, max_length):
            return {}

    with pytest.raises(
        ValueError, match=r"decoding protocol .* Received: model=.*which lacks step$"
    ):
        export_translator(NoStep(), tmp_path, tokenizer, tokenizer, 4, 4)
