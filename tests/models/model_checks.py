"""Checks every captioner and translator passes, each on the model a test builds.

    restored = assert_keras_file_round_trip(model, inputs, tmp_path, TransformerTranslator)

Each function asserts; those that load or train a model return it, for the
checks that only one kind of model needs.
"""

import inspect

import keras
import numpy as np
import tensorflow as tf

from keras_attention.losses.masked_cross_entropy import masked_sparse_categorical_crossentropy
from keras_attention.metrics.masked_accuracy import MaskedSparseCategoricalAccuracy


def assert_keras_file_round_trip(model, inputs, tmp_path, cls):
    """Saved to `.keras` and loaded back: the same outputs, class and configuration."""
    expected = np.asarray(model(inputs))
    # A plain call is in inference mode: dropout is off.
    np.testing.assert_array_equal(np.asarray(model(inputs)), expected)
    model.save(tmp_path / "model.keras")
    restored = keras.saving.load_model(tmp_path / "model.keras")
    np.testing.assert_allclose(np.asarray(restored(inputs)), expected, atol=1e-6)
    assert [layer.name for layer in restored.layers] == [layer.name for layer in model.layers]
    # Loads back as the class, with its configuration and decoding methods.
    assert type(restored) is cls
    assert restored.get_config() == model.get_config()
    return restored


def assert_first_cached_step_matches_the_full_pass(model, inputs):
    """`step` on the first target token gives the teacher-forced pass's first logits."""
    state = model.encode(inputs["source"])
    cache = model.initial_cache(state, *inputs["target"].shape)
    logits, _, _ = model.step(inputs["target"][:, 0], 0, cache, state)
    np.testing.assert_allclose(np.asarray(logits), np.asarray(model(inputs))[:, 0], atol=1e-5)


def assert_mixed_precision_forward_is_finite(model, inputs):
    """float32 variables and finite float32 logits under the policy set by the test."""
    logits = model(inputs)
    assert keras.backend.standardize_dtype(logits.dtype) == "float32"
    assert np.all(np.isfinite(np.asarray(logits)))
    assert all(variable.dtype == "float32" for variable in model.weights)


def fit_with_xla(model, inputs, labels, learning_rate, epochs, batch_size):
    """XLA-compiled epochs of Adam on the masked loss; returns the history."""
    model.compile(
        keras.optimizers.Adam(learning_rate),
        loss=masked_sparse_categorical_crossentropy,
        metrics=[MaskedSparseCategoricalAccuracy()],
        jit_compile=True,
    )
    return model.fit(inputs, labels, batch_size, epochs, verbose=0).history


def assert_fits_one_step_under_mirrored_strategy(build, inputs, labels):
    """`build()` inside a two-CPU MirroredStrategy scope trains one finite step."""
    # Reduction on one device rather than collective ops, whose instance keys clash
    # between strategies made in one process.
    strategy = tf.distribute.MirroredStrategy(
        ["/cpu:0", "/cpu:1"], cross_device_ops=tf.distribute.ReductionToOneDevice()
    )
    with strategy.scope():
        model = build()
        # XLA cannot place one program across the two replicas' devices.
        model.compile("sgd", loss=masked_sparse_categorical_crossentropy, jit_compile=False)
    before = [np.array(weight) for weight in model.trainable_weights]
    history = model.fit(inputs, labels, batch_size=8, epochs=1, verbose=0).history
    assert np.isfinite(history["loss"][0])
    assert any(not np.allclose(b, np.array(a)) for b, a in zip(before, model.trainable_weights))


def assert_registered_with_its_constructor_arguments(cls, model, arguments):
    """`cls` is registered under keras_attention; `model`'s config rebuilds it."""
    assert keras.saving.get_registered_name(cls) == f"keras_attention>{cls.__name__}"
    config = model.get_config()
    assert {key: config[key] for key in arguments} == arguments
    assert set(config) <= set(inspect.signature(cls).parameters) | {"name", "trainable"}
    rebuilt = cls.from_config(config)
    assert rebuilt.get_config() == config
    assert rebuilt.count_params() == model.count_params()


def assert_summary_lists(model, parts):
    """`model.summary()` names every one of `parts`."""
    lines = []
    model.summary(print_fn=lines.append)
    text = "\n".join(lines)
    for part in parts:
        assert part in text
