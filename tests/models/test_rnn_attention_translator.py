import inspect

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_attention.losses.masked_cross_entropy import masked_sparse_categorical_crossentropy
from keras_attention.metrics.masked_accuracy import MaskedSparseCategoricalAccuracy
from keras_attention.models.rnn_attention_translator import RNNAttentionTranslator
from keras_attention.models.rnn_attention_translator import rnn_attention_translator

START, END = 1, 2
SIZES = dict(source_vocabulary_size=12, target_vocabulary_size=12, embedding_dim=8, units=16)
VARIANTS = {
    "gru_bahdanau_additive": dict(cell="gru", attention="additive"),
    "lstm_bahdanau_scaled_dot": dict(cell="lstm", attention="scaled_dot"),
    "gru_luong_dot": dict(cell="gru", attention="dot", attention_style="luong"),
    "lstm_luong_general_input_feeding": dict(
        cell="lstm", attention="general", attention_style="luong", input_feeding=True
    ),
}


def _reverse_task(examples, seed=0):
    """Reverse a sequence of 2..5 tokens in 3..11: ({"source", "target"}, labels)."""
    rng = np.random.default_rng(seed)
    source = np.zeros((examples, 6), "int32")
    target = np.zeros((examples, 7), "int32")
    labels = np.zeros((examples, 7), "int32")
    for row in range(examples):
        tokens = rng.integers(3, 12, size=rng.integers(2, 6))
        source[row, : len(tokens)] = tokens
        target[row, : len(tokens) + 1] = [START, *tokens[::-1]]
        labels[row, : len(tokens) + 1] = [*tokens[::-1], END]
    return {"source": source, "target": target}, labels


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


def test_mixed_bfloat16_gives_float32_logits():
    keras.config.set_dtype_policy("mixed_bfloat16")
    model = rnn_attention_translator(**SIZES, **VARIANTS["lstm_luong_general_input_feeding"])
    inputs, _ = _reverse_task(2)
    logits = model(inputs)
    assert keras.backend.standardize_dtype(logits.dtype) == "float32"
    assert np.all(np.isfinite(np.asarray(logits)))


def test_fit_with_xla_lowers_the_masked_loss_on_a_reverse_task():
    inputs, labels = _reverse_task(64)
    model = rnn_attention_translator(**SIZES, **VARIANTS["gru_bahdanau_additive"], dropout=0.0)
    model.compile(
        keras.optimizers.Adam(1e-2),
        loss=masked_sparse_categorical_crossentropy,
        metrics=[MaskedSparseCategoricalAccuracy()],
        jit_compile=True,
    )
    history = model.fit(inputs, labels, batch_size=16, epochs=8, verbose=0).history
    assert history["loss"][-1] < 0.75 * history["loss"][0]
    assert history["masked_accuracy"][-1] > history["masked_accuracy"][0]


def test_keras_file_round_trip(tmp_path):
    model = rnn_attention_translator(**SIZES, **VARIANTS["lstm_luong_general_input_feeding"])
    inputs, _ = _reverse_task(4)
    model.save(tmp_path / "translator.keras")
    reloaded = keras.saving.load_model(tmp_path / "translator.keras")
    np.testing.assert_allclose(np.asarray(reloaded(inputs)), np.asarray(model(inputs)), atol=1e-6)
    assert [layer.name for layer in reloaded.layers] == [layer.name for layer in model.layers]
    # The class comes back, with its decoding methods and its configuration.
    assert type(reloaded) is RNNAttentionTranslator
    assert reloaded.get_config() == model.get_config()
    state = reloaded.encode(inputs["source"])
    cache = reloaded.initial_cache(state, 4, 7)
    logits, _, _ = reloaded.step(inputs["target"][:, 0], 0, cache, state)
    np.testing.assert_allclose(np.asarray(logits), np.asarray(reloaded(inputs))[:, 0], atol=1e-5)


def test_fits_one_step_under_mirrored_strategy():
    # Reduction on one device rather than collective ops, whose instance keys clash
    # between strategies made in one process.
    strategy = tf.distribute.MirroredStrategy(
        ["/cpu:0", "/cpu:1"], cross_device_ops=tf.distribute.ReductionToOneDevice()
    )
    inputs, labels = _reverse_task(8)
    with strategy.scope():
        model = rnn_attention_translator(**SIZES, **VARIANTS["gru_bahdanau_additive"])
        # XLA cannot place one program across the two replicas' devices.
        model.compile("sgd", loss=masked_sparse_categorical_crossentropy, jit_compile=False)
    before = [np.array(weight) for weight in model.trainable_weights]
    history = model.fit(inputs, labels, batch_size=8, epochs=1, verbose=0).history
    assert np.isfinite(history["loss"][0])
    assert any(not np.allclose(b, np.array(a)) for b, a in zip(before, model.trainable_weights))


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"units": 0}, "units.*Received: units=0"),
        ({"embedding_dim": 2.5}, "embedding_dim.*Received: embedding_dim=2.5"),
        ({"cell": "rnn"}, "cell.*Received: cell='rnn'"),
        ({"attention": "cosine"}, "attention.*Received: attention='cosine'"),
        ({"attention_style": "vaswani"}, "attention_style.*Received: attention_style='vaswani'"),
        ({"dropout": -0.1}, "dropout.*Received: dropout=-0.1"),
        ({"input_feeding": True}, "input_feeding.*luong.*Received"),
    ],
)
def test_bad_arguments(arguments, message):
    with pytest.raises(ValueError, match=message):
        rnn_attention_translator(**{**SIZES, **arguments})


def test_a_registered_class_whose_config_holds_the_constructor_arguments():
    assert (
        keras.saving.get_registered_name(RNNAttentionTranslator)
        == "keras_attention>RNNAttentionTranslator"
    )
    model = rnn_attention_translator(**SIZES)
    config = model.get_config()
    assert {key: config[key] for key in SIZES} == SIZES
    assert set(config) <= set(inspect.signature(RNNAttentionTranslator).parameters) | {
        "name",
        "trainable",
    }
    rebuilt = RNNAttentionTranslator.from_config(config)
    assert rebuilt.get_config() == config
    assert rebuilt.count_params() == model.count_params()
