"""`compile()` with no arguments makes every library model learn; explicit arguments win."""

import keras
import numpy as np
import pytest
import tensorflow as tf
import tiny_models

from keras_attention.losses.masked_cross_entropy import masked_sparse_categorical_crossentropy
from keras_attention.models.default_compile import DEFAULT_WARMUP_STEPS
from keras_attention.models.default_compile import default_learning_rate_schedule

rng = np.random.default_rng(0)


def _sequences(rows, length, vocabulary):
    ids = rng.integers(3, vocabulary, (rows, length))
    ids[:, -2:] = 0  # padding
    return ids


def _data(name):
    """`(model, inputs, labels)` for a tiny model of each family."""
    if name in ("transformer_translator", "rnn_attention_translator"):
        model = getattr(tiny_models, f"tiny_{name}")(dropout=0.0)
        inputs = {"source": _sequences(4, 8, 12), "target": _sequences(4, 8, 12)}
        return model, inputs, _sequences(4, 8, 12)
    if name.endswith("captioner"):
        model = getattr(tiny_models, f"tiny_{name}")()
        inputs = {"image": rng.uniform(0, 255, (4, 16, 16, 3)), "caption": _sequences(4, 6, 10)}
        return model, inputs, _sequences(4, 6, 10)
    model = getattr(tiny_models, f"tiny_{name}")()
    size = tiny_models.VISION_TRANSFORMER_SIZES["image_size"]
    shape = (size, size) if name == "vision_transformer" else tiny_models.SWIN_SIZES["image_size"]
    return model, rng.uniform(0, 255, (4, *shape, 3)), rng.integers(0, 3, (4,))


MODELS = [
    "transformer_translator",
    "rnn_attention_translator",
    "show_attend_tell_captioner",
    "transformer_captioner",
    "vit_captioner",
    "vision_transformer",
    "swin_transformer",
]


@pytest.mark.parametrize("name", MODELS)
def test_compile_alone_makes_the_model_learn(name):
    keras.utils.set_random_seed(0)
    model, inputs, labels = _data(name)
    model.compile()
    assert isinstance(model.optimizer, keras.optimizers.AdamW)
    # Past the warm-up (one step an epoch): four examples learnt by heart. The same batch
    # repeated, read by one iterator over all epochs, saves starting a new one each epoch.
    epochs = DEFAULT_WARMUP_STEPS + 60
    batches = tf.data.Dataset.from_tensors((inputs, labels)).repeat()
    history = model.fit(batches, steps_per_epoch=1, epochs=epochs, shuffle=False, verbose=0).history
    losses = history["loss"]
    assert np.all(np.isfinite(losses))
    assert losses[-1] < 0.5 * losses[0], (losses[0], losses[-1])
    accuracy = [key for key in history if "accuracy" in key]
    assert accuracy and history[accuracy[0]][-1] > history[accuracy[0]][0]


def test_explicit_arguments_win():
    model, inputs, labels = _data("transformer_translator")
    model.compile(optimizer="sgd", loss="mse", metrics=None)
    assert isinstance(model.optimizer, keras.optimizers.SGD)
    assert model.loss == "mse"
    model.compile(loss=masked_sparse_categorical_crossentropy)  # the optimizer still "auto"
    assert isinstance(model.optimizer, keras.optimizers.AdamW)
    # Positional arguments keep keras' order: optimizer, loss, loss_weights, metrics.
    model.compile("adam", "mse", None, ["mae"])
    assert isinstance(model.optimizer, keras.optimizers.Adam) and model.loss == "mse"


def test_learning_rate_and_total_steps_shape_only_the_auto_optimizer():
    model, _, _ = _data("vision_transformer")
    model.compile(learning_rate=1e-3, total_steps=100)
    schedule = model.optimizer.learning_rate
    rates = []
    for step in (0, 10, 100):
        model.optimizer.iterations.assign(step)
        rates.append(round(float(model.optimizer.learning_rate), 6))
    assert isinstance(schedule, keras.optimizers.schedules.CosineDecay) or rates
    assert rates == [0.0, 0.001, 0.0]
    with pytest.raises(ValueError, match="learning_rate.*'auto' optimizer.*Received: optimizer="):
        model.compile(optimizer="adam", learning_rate=1e-3)


def test_classifiers_keep_weight_decay_off_norms_biases_and_positions():
    model, _, _ = _data("vision_transformer")
    model.compile()
    assert model.optimizer.weight_decay == pytest.approx(0.05)
    excluded = {id(variable) for variable in model.no_decay_variables()}
    assert excluded and all(
        model.optimizer._use_weight_decay(variable) == (id(variable) not in excluded)
        for variable in model.trainable_variables
    )


@pytest.mark.parametrize(
    "arguments, match",
    [
        (dict(learning_rate=0.0), "learning_rate.*positive.*Received: learning_rate=0.0"),
        (dict(learning_rate=1e-3, total_steps=0), "total_steps.*Received: total_steps=0"),
        (dict(learning_rate=1e-3, warmup_steps=-1), "warmup_steps.*Received: warmup_steps=-1"),
    ],
)
def test_schedule_arguments_are_checked(arguments, match):
    with pytest.raises(ValueError, match=match):
        default_learning_rate_schedule(**arguments)


def test_a_model_compiled_by_default_saves_and_loads_compiled(tmp_path):
    model, inputs, labels = _data("transformer_translator")
    model.compile()
    model.fit(inputs, labels, epochs=1, verbose=0)
    path = tmp_path / "translator.keras"
    model.save(path)
    loaded = keras.models.load_model(path)
    assert isinstance(loaded.optimizer, keras.optimizers.AdamW)
    np.testing.assert_allclose(
        loaded.evaluate(inputs, labels, verbose=0, return_dict=True)["loss"],
        model.evaluate(inputs, labels, verbose=0, return_dict=True)["loss"],
        rtol=1e-5,
    )
