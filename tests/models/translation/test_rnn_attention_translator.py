import keras
import numpy as np
import pytest
from model_checks import assert_first_cached_step_matches_the_full_pass
from model_checks import assert_fits_one_step_under_mirrored_strategy
from model_checks import assert_keras_file_round_trip
from model_checks import assert_mixed_precision_forward_is_finite
from model_checks import assert_registered_with_its_constructor_arguments
from model_checks import fit_with_xla
from toy_translation_tasks import START
from toy_translation_tasks import toy_translation_task

from keras_attention.models.translation.rnn_attention_translator import RNNAttentionTranslator
from keras_attention.models.translation.rnn_attention_translator import rnn_attention_translator

SIZES = dict(source_vocabulary_size=12, target_vocabulary_size=12, embedding_dim=8, units=16)
VARIANTS = {
    "gru_bahdanau_additive": dict(cell="gru", attention="additive"),
    "lstm_bahdanau_scaled_dot": dict(cell="lstm", attention="scaled_dot"),
    "gru_luong_dot": dict(cell="gru", attention="dot", attention_style="luong"),
    "lstm_luong_general_input_feeding": dict(
        cell="lstm", attention="general", attention_style="luong", input_feeding=True
    ),
    "gru_bahdanau_additive_coverage": dict(
        cell="gru", attention="additive", location_features="coverage"
    ),
    "lstm_luong_general_location": dict(
        cell="lstm",
        attention="general",
        attention_style="luong",
        input_feeding=True,
        location_features="location",
    ),
}


@pytest.mark.parametrize("name", list(VARIANTS))
def test_forward_shapes_and_padding(name):
    model = rnn_attention_translator(**SIZES, **VARIANTS[name], dropout=0.0)
    target = np.array([[START, 4, 5], [START, 6, 0]])
    short = np.array([[7, 8, 9, 0], [10, 0, 0, 0]])
    long = np.concatenate([short, np.zeros((2, 3), "int32")], axis=1)  # more padding
    logits = np.asarray(model({"source": short, "target": target}))
    assert logits.shape == (2, 3, 12) and logits.dtype == np.float32
    # Padding is skipped by both encoder directions and hidden from the attention.
    np.testing.assert_allclose(
        np.asarray(model({"source": long, "target": target})), logits, atol=1e-5
    )
    alone = np.asarray(model({"source": short[1:, :1], "target": target[1:]}))
    np.testing.assert_allclose(alone[0], logits[1], atol=1e-5)
    changed = np.asarray(model({"source": short + [[0, 0, 1, 0], [0, 0, 0, 0]], "target": target}))
    assert not np.allclose(changed[0], logits[0], atol=1e-4)


@pytest.mark.parametrize(
    "name", ["lstm_luong_general_input_feeding", "lstm_luong_general_location"]
)
def test_mixed_bfloat16_gives_float32_logits(name):
    keras.config.set_dtype_policy("mixed_bfloat16")
    model = rnn_attention_translator(**SIZES, **VARIANTS[name])
    assert_mixed_precision_forward_is_finite(model, toy_translation_task(2, reverse=True)[0])


def test_fit_with_xla_lowers_the_masked_loss_on_a_reverse_task():
    inputs, labels = toy_translation_task(64, reverse=True)
    model = rnn_attention_translator(**SIZES, **VARIANTS["gru_bahdanau_additive"], dropout=0.0)
    history = fit_with_xla(model, inputs, labels, 1e-2, epochs=8, batch_size=16)
    assert history["loss"][-1] < 0.75 * history["loss"][0]
    assert history["masked_accuracy"][-1] > history["masked_accuracy"][0]


def test_keras_file_round_trip(tmp_path):
    model = rnn_attention_translator(**SIZES, **VARIANTS["lstm_luong_general_input_feeding"])
    inputs, _ = toy_translation_task(4, reverse=True)
    reloaded = assert_keras_file_round_trip(model, inputs, tmp_path, RNNAttentionTranslator)
    assert_first_cached_step_matches_the_full_pass(reloaded, inputs)


def test_fits_one_step_under_mirrored_strategy():
    inputs, labels = toy_translation_task(8, reverse=True)
    assert_fits_one_step_under_mirrored_strategy(
        lambda: rnn_attention_translator(**SIZES, **VARIANTS["gru_bahdanau_additive"]),
        inputs,
        labels,
    )


def test_a_registered_class_whose_config_holds_the_constructor_arguments():
    model = rnn_attention_translator(**SIZES)
    assert_registered_with_its_constructor_arguments(RNNAttentionTranslator, model, SIZES)


def test_keras_concat_score_builds_trains_a_step_and_round_trips_its_config():
    arguments = {**SIZES, "attention": "concat", "attention_style": "luong"}
    model = rnn_attention_translator(**arguments, dropout=0.0)
    assert "concat_score_weight" in [weight.name for weight in model.weights]
    inputs, labels = toy_translation_task(8, reverse=True)
    before = [np.array(weight) for weight in model.trainable_weights]
    history = fit_with_xla(model, inputs, labels, 1e-2, epochs=1, batch_size=8)
    assert np.isfinite(history["loss"][0])
    assert any(not np.allclose(old, new) for old, new in zip(before, model.trainable_weights))
    assert_registered_with_its_constructor_arguments(RNNAttentionTranslator, model, arguments)


def test_an_unknown_attention_lists_every_score():
    with pytest.raises(ValueError, match="'additive', 'scaled_dot', 'dot', 'general', 'concat'"):
        rnn_attention_translator(**SIZES, attention="luong")


@pytest.mark.parametrize("location_features", ["coverage", "location"])
def test_location_features_fit_with_xla_and_decode_from_a_reloaded_file(
    tmp_path, location_features
):
    arguments = {**SIZES, "location_features": location_features}
    model = rnn_attention_translator(**arguments, dropout=0.0)
    inputs, labels = toy_translation_task(32, reverse=True)
    history = fit_with_xla(model, inputs, labels, 1e-2, epochs=3, batch_size=16)
    assert history["loss"][-1] < history["loss"][0]
    reloaded = assert_keras_file_round_trip(model, inputs, tmp_path, RNNAttentionTranslator)
    assert_first_cached_step_matches_the_full_pass(reloaded, inputs)
    # The decoding cache carries the alignment state, one entry per source position.
    state = reloaded.encode(inputs["source"])
    cache = reloaded.initial_cache(state, batch_size=len(inputs["source"]), max_length=4)
    assert tuple(cache["state_1"].shape) == inputs["source"].shape
    assert_registered_with_its_constructor_arguments(RNNAttentionTranslator, model, arguments)


def test_an_unknown_location_feature_is_refused():
    with pytest.raises(ValueError, match="Received: location_features='alignment'"):
        rnn_attention_translator(**SIZES, location_features="alignment")
