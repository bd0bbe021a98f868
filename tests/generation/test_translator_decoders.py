import keras
import numpy as np
import pytest
import tensorflow as tf
from full_pass_greedy import greedy_by_full_passes
from tiny_models import tiny_rnn_attention_translator
from tiny_models import tiny_transformer_translator

from keras_attention.generation.beam_search import beam_search
from keras_attention.generation.decoding_protocol import decoder_for_model
from keras_attention.generation.greedy_search import greedy_search
from keras_attention.models.translation.rnn_attention_translator import RNNAttentionTranslator
from keras_attention.models.translation.transformer_translator import TransformerTranslator

START, END = 1, 2
SOURCES = np.array([[3, 4, 5, 6, 7, 8], [9, 10, 0, 0, 0, 0], [11, 3, 4, 5, 0, 0]])
MAX_LENGTH = 6
SMALL = dict(target_vocabulary_size=9, dropout=0.0)


def _transformer(norm_first=False, num_layers=1, **heads):
    sizes = dict(
        max_source_length=6, max_target_length=MAX_LENGTH, hidden_dim=8, intermediate_dim=8
    )
    return tiny_transformer_translator(
        **SMALL, **sizes, num_layers=num_layers, norm_first=norm_first, **heads
    )


def _rnn(**kwargs):
    return tiny_rnn_attention_translator(**SMALL, embedding_dim=4, units=8, **kwargs)


MODELS = {
    "transformer_post_norm": lambda: _transformer(),
    "transformer_pre_norm_2_layers": lambda: _transformer(norm_first=True, num_layers=2),
    "transformer_grouped_query": lambda: _transformer(
        num_layers=2, num_heads=4, num_key_value_heads=2
    ),
    "transformer_multi_query": lambda: _transformer(norm_first=True, num_key_value_heads=1),
    "gru_bahdanau_additive": lambda: _rnn(cell="gru", attention="additive"),
    "lstm_luong_general_input_feeding": lambda: _rnn(
        cell="lstm", attention="general", attention_style="luong", input_feeding=True
    ),
}


@pytest.mark.parametrize("name", list(MODELS))
def test_cached_greedy_equals_full_passes_on_the_prefix(name):
    model = MODELS[name]()
    tokens, attention = greedy_search(
        decoder_for_model(model), SOURCES, START, END, MAX_LENGTH, jit_compile=False
    )
    tokens, attention = np.asarray(tokens), np.asarray(attention)
    expected = greedy_by_full_passes(model, {"source": SOURCES}, "target", START, END, MAX_LENGTH)
    np.testing.assert_array_equal(tokens, expected)
    # Attention: a distribution over the real source tokens while decoding, 0 after END.
    live = tokens != 0
    np.testing.assert_allclose(attention.sum(-1)[live], 1.0, atol=1e-5)
    assert np.all(attention[~live] == 0)
    assert np.all(attention.transpose(1, 0, 2)[:, SOURCES == 0] == 0)


def test_xla_greedy_equals_full_passes_on_the_prefix():
    model = _transformer(norm_first=True)
    tokens, _ = greedy_search(decoder_for_model(model), SOURCES, START, END, MAX_LENGTH)
    expected = greedy_by_full_passes(model, {"source": SOURCES}, "target", START, END, MAX_LENGTH)
    np.testing.assert_array_equal(np.asarray(tokens), expected)


def _cross_attention_of_last_block(model, source, prefix):
    """Run the layers by hand to read the last decoder block's cross-attention."""
    source_mask = source != 0
    x = model.source_embedding(source)
    x = model.encoder_blocks[0](x, padding_mask=source_mask)
    y = model.target_embedding(prefix)
    _, _, cross = model.decoder_blocks[0](
        y, x, context_padding_mask=source_mask, return_attention_scores=True
    )
    return np.asarray(cross).mean(axis=1)  # (B, T, S), averaged over heads


def test_transformer_attention_is_the_last_cross_attention_averaged_over_heads():
    model = _transformer()
    tokens, attention = greedy_search(
        decoder_for_model(model), SOURCES, START, END, MAX_LENGTH, jit_compile=False
    )
    tokens = np.asarray(tokens)
    prefix = np.concatenate([np.full((3, 1), START), tokens[:, :-1]], axis=1)
    expected = _cross_attention_of_last_block(model, SOURCES, prefix)
    live = tokens != 0
    np.testing.assert_allclose(np.asarray(attention)[live], expected[live], atol=1e-5)


@pytest.mark.parametrize(
    "build",
    [lambda: _transformer(norm_first=True), MODELS["lstm_luong_general_input_feeding"]],
    ids=["transformer", "rnn"],
)
def test_decodes_a_model_reloaded_from_a_keras_file(build, tmp_path):
    model = build()
    model.save(tmp_path / "translator.keras")
    reloaded = keras.saving.load_model(tmp_path / "translator.keras")
    arguments = dict(start_id=START, end_id=END, max_length=MAX_LENGTH, jit_compile=False)
    expected, _ = greedy_search(decoder_for_model(model), SOURCES, **arguments)
    got, _ = greedy_search(decoder_for_model(reloaded), SOURCES, **arguments)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))
    assert type(reloaded) is type(model)
    assert decoder_for_model(reloaded) is reloaded


@pytest.mark.parametrize(
    "build", [_transformer, MODELS["gru_bahdanau_additive"]], ids=["transformer", "rnn"]
)
def test_decodes_inside_a_graph_with_unknown_batch_and_source_length(build):
    # As in a serving signature: the shapes are known only when it runs.
    decoder = decoder_for_model(build())
    arguments = dict(start_id=START, end_id=END, max_length=MAX_LENGTH, jit_compile=False)

    @tf.function(input_signature=[tf.TensorSpec((None, None), tf.int32)])
    def translate(source):
        tokens, attention = greedy_search(decoder, source, **arguments)
        beam_tokens, _, scores = beam_search(decoder, source, beam_width=2, **arguments)
        return tokens, attention, beam_tokens, scores

    tokens, attention, beam_tokens, scores = translate(tf.constant(SOURCES, tf.int32))
    expected_tokens, expected_attention = greedy_search(decoder, SOURCES, **arguments)
    expected_beam, _, expected_scores = beam_search(decoder, SOURCES, beam_width=2, **arguments)
    np.testing.assert_array_equal(np.asarray(tokens), np.asarray(expected_tokens))
    np.testing.assert_allclose(np.asarray(attention), np.asarray(expected_attention), atol=1e-6)
    np.testing.assert_array_equal(np.asarray(beam_tokens), np.asarray(expected_beam))
    np.testing.assert_allclose(np.asarray(scores), np.asarray(expected_scores), rtol=1e-5)


@pytest.mark.parametrize("name", list(MODELS))
def test_a_translator_is_its_own_decoder(name):
    model = MODELS[name]()
    assert isinstance(model, (TransformerTranslator, RNNAttentionTranslator))
    assert decoder_for_model(model) is model


def test_models_without_the_protocol_are_refused():
    inputs = keras.Input((3,))
    other = keras.Model(inputs, keras.layers.Dense(2, name="head")(inputs))
    with pytest.raises(
        ValueError,
        match=r"must implement the decoding protocol.*Received: model='functional.*', which "
        r"lacks encode, initial_cache, step",
    ):
        decoder_for_model(other)
    with pytest.raises(ValueError, match="at most 6.*Received: max_length=7"):
        greedy_search(decoder_for_model(_transformer()), SOURCES, START, END, 7)
