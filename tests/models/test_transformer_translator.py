import inspect

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_attention.losses.masked_cross_entropy import masked_sparse_categorical_crossentropy
from keras_attention.metrics.masked_accuracy import MaskedSparseCategoricalAccuracy
from keras_attention.models.transformer_translator import TransformerTranslator
from keras_attention.models.transformer_translator import transformer_translator

START, END = 1, 2
SIZES = dict(
    source_vocabulary_size=12,
    target_vocabulary_size=12,
    max_source_length=8,
    max_target_length=8,
    hidden_dim=16,
    num_layers=1,
    num_heads=2,
    intermediate_dim=16,
)


def _copy_task(examples, seed=0):
    """Copy a sequence of 2..5 tokens in 3..11: ({"source", "target"}, labels)."""
    rng = np.random.default_rng(seed)
    source = np.zeros((examples, 6), "int32")
    target = np.zeros((examples, 7), "int32")
    labels = np.zeros((examples, 7), "int32")
    for row in range(examples):
        tokens = rng.integers(3, 12, size=rng.integers(2, 6))
        source[row, : len(tokens)] = tokens
        target[row, : len(tokens) + 1] = [START, *tokens]
        labels[row, : len(tokens) + 1] = [*tokens, END]
    return {"source": source, "target": target}, labels


@pytest.mark.parametrize("policy", ["float32", "mixed_bfloat16"])
def test_forward_shapes_and_float32_logits(policy):
    keras.config.set_dtype_policy(policy)
    model = transformer_translator(**SIZES, norm_first=True)
    inputs, _ = _copy_task(3)
    logits = model(inputs)
    assert tuple(logits.shape) == (3, 7, 12)
    assert keras.backend.standardize_dtype(logits.dtype) == "float32"
    assert np.all(np.isfinite(np.asarray(logits)))
    names = {layer.name for layer in model.layers}
    assert {
        "source_embedding",
        "encoder_block_0",
        "encoder_final_norm",
        "target_embedding",
        "decoder_block_0",
        "decoder_final_norm",
        "logits",
    } <= names


@pytest.mark.parametrize("norm_first", [False, True])
def test_padding_does_not_change_the_logits(norm_first):
    model = transformer_translator(**SIZES, norm_first=norm_first, dropout=0.0)
    target = np.array([[START, 4, 5], [START, 6, 0]])
    short = np.array([[7, 8, 9, 0], [10, 0, 0, 0]])
    long = np.concatenate([short, np.zeros((2, 4), "int32")], axis=1)  # more padding
    expected = np.asarray(model({"source": short, "target": target}))
    got = np.asarray(model({"source": long, "target": target}))
    np.testing.assert_allclose(got, expected, atol=1e-5)
    # Each example is independent of the others' lengths...
    alone = np.asarray(model({"source": short[1:, :1], "target": target[1:]}))
    np.testing.assert_allclose(alone[0, :2], expected[1, :2], atol=1e-5)
    # ...while a real source token does count.
    changed = np.asarray(model({"source": short + [[0, 0, 1, 0], [0, 0, 0, 0]], "target": target}))
    assert not np.allclose(changed[0], expected[0], atol=1e-4)


def test_fit_with_xla_lowers_the_masked_loss_on_a_copy_task():
    inputs, labels = _copy_task(64)
    model = transformer_translator(**SIZES, dropout=0.0)
    model.compile(
        keras.optimizers.Adam(5e-3),
        loss=masked_sparse_categorical_crossentropy,
        metrics=[MaskedSparseCategoricalAccuracy()],
        jit_compile=True,
    )
    history = model.fit(inputs, labels, batch_size=16, epochs=8, verbose=0).history
    assert history["loss"][-1] < 0.75 * history["loss"][0]
    assert history["masked_accuracy"][-1] > history["masked_accuracy"][0]


def test_keras_file_round_trip(tmp_path):
    model = transformer_translator(**SIZES, norm_first=True)
    model.compile(
        "sgd",
        loss=masked_sparse_categorical_crossentropy,
        metrics=[MaskedSparseCategoricalAccuracy()],
    )
    inputs, labels = _copy_task(4)
    model.save(tmp_path / "translator.keras")
    reloaded = keras.saving.load_model(tmp_path / "translator.keras")
    np.testing.assert_allclose(np.asarray(reloaded(inputs)), np.asarray(model(inputs)), atol=1e-6)
    assert [layer.name for layer in reloaded.layers] == [layer.name for layer in model.layers]
    # The class comes back, with its decoding methods and its configuration.
    assert type(reloaded) is TransformerTranslator
    assert reloaded.get_config() == model.get_config()
    state = reloaded.encode(inputs["source"])
    cache = reloaded.initial_cache(state, 4, 7)
    logits, _, _ = reloaded.step(inputs["target"][:, 0], 0, cache, state)
    np.testing.assert_allclose(np.asarray(logits), np.asarray(reloaded(inputs))[:, 0], atol=1e-5)
    np.testing.assert_allclose(
        reloaded.evaluate(inputs, labels, verbose=0),
        model.evaluate(inputs, labels, verbose=0),
        rtol=1e-5,
    )


def test_fits_one_step_under_mirrored_strategy():
    # Reduction on one device rather than collective ops, whose instance keys clash
    # between strategies made in one process.
    strategy = tf.distribute.MirroredStrategy(
        ["/cpu:0", "/cpu:1"], cross_device_ops=tf.distribute.ReductionToOneDevice()
    )
    inputs, labels = _copy_task(8)
    with strategy.scope():
        model = transformer_translator(**SIZES)
        # XLA cannot place one program across the two replicas' devices.
        model.compile("sgd", loss=masked_sparse_categorical_crossentropy, jit_compile=False)
    before = [np.array(weight) for weight in model.trainable_weights]
    history = model.fit(inputs, labels, batch_size=8, epochs=1, verbose=0).history
    assert np.isfinite(history["loss"][0])
    assert any(not np.allclose(b, np.array(a)) for b, a in zip(before, model.trainable_weights))


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"hidden_dim": 0}, "hidden_dim.*Received: hidden_dim=0"),
        ({"num_layers": 1.5}, "num_layers.*Received: num_layers=1.5"),
        (
            {"hidden_dim": 10, "num_heads": 4},
            "multiple of `num_heads`.*Received: hidden_dim=10, num_heads=4",
        ),
        ({"dropout": 1.0}, "dropout.*Received: dropout=1.0"),
        ({"norm_first": "yes"}, "norm_first.*Received: norm_first='yes'"),
        ({"source_vocabulary_size": -3}, "Received: source_vocabulary_size=-3"),
    ],
)
def test_bad_arguments(arguments, message):
    with pytest.raises(ValueError, match=message):
        transformer_translator(**{**SIZES, **arguments})


def test_a_registered_class_whose_config_holds_the_constructor_arguments():
    assert (
        keras.saving.get_registered_name(TransformerTranslator)
        == "keras_attention>TransformerTranslator"
    )
    model = transformer_translator(**SIZES)
    config = model.get_config()
    assert {key: config[key] for key in SIZES} == SIZES
    assert set(config) <= set(inspect.signature(TransformerTranslator).parameters) | {
        "name",
        "trainable",
    }
    rebuilt = TransformerTranslator.from_config(config)
    assert rebuilt.get_config() == config
    assert rebuilt.count_params() == model.count_params()


def test_attention_maps_match_numpy_and_the_cached_decoding_steps():
    model = transformer_translator(**{**SIZES, "num_layers": 2})
    source = np.array([[4, 5, 6, 0], [7, 8, 0, 0]], "int32")
    target = np.array([[START, 9, 10], [START, 11, 0]], "int32")
    maps = model.attention_maps(source, target)
    assert maps["encoder"].shape == (2, 2, 2, 4, 4)
    assert maps["decoder"].shape == (2, 2, 2, 3, 3)
    assert maps["cross"].shape == (2, 2, 2, 3, 4)
    # Layer 0's encoder attention, from its weights in NumPy: softmax(q k^T / sqrt(d)).
    x = np.asarray(model.source_embedding(source), np.float64)  # (B, S, D)
    wq, bq, wk, bk = (np.asarray(w, np.float64) for w in model.encoder_blocks[0].get_weights()[:4])
    q = np.einsum("bsd,dhk->bshk", x, wq) + bq
    k = np.einsum("bsd,dhk->bshk", x, wk) + bk
    logits = np.einsum("bqhk,bshk->bhqs", q, k) / np.sqrt(q.shape[-1])
    logits = np.where((source != 0)[:, None, None, :], logits, -np.inf)
    expected = np.exp(logits - logits.max(-1, keepdims=True))
    expected /= expected.sum(-1, keepdims=True)
    np.testing.assert_allclose(maps["encoder"][:, 0], expected, atol=1e-5)
    # Causal decoder attention and padded source keys get no weight.
    assert np.all(np.triu(maps["decoder"], k=1) == 0.0)
    assert np.all(maps["cross"][1, ..., 2:] == 0.0)
    # The teacher-forced cross-attention is what the cached decoding steps report
    # (last block, mean over heads) when fed the same tokens.
    state = model.encode(source)
    cache = model.initial_cache(state, 2, 3)
    for index in range(3):
        _, cache, step_attention = model.step(target[:, index], index, cache, state)
        np.testing.assert_allclose(
            np.asarray(step_attention)[0], maps["cross"][0, -1, :, index].mean(0), atol=1e-5
        )
