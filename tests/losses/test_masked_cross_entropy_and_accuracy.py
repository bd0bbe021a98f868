import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_attention.losses.masked_cross_entropy import masked_sparse_categorical_crossentropy
from keras_attention.metrics.masked_accuracy import MaskedSparseCategoricalAccuracy

rng = np.random.default_rng(0)
LOGITS = rng.normal(size=(3, 4, 6)).astype("float32")
LABELS = np.array([[3, 1, 5, 0], [2, 0, 0, 0], [4, 4, 1, 2]])


def _numpy_masked_crossentropy(labels, logits, ignore_label=0):
    shifted = logits - logits.max(-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    picked = np.take_along_axis(log_probs, labels[..., None], axis=-1)[..., 0]
    real = labels != ignore_label
    return -(picked * real).sum() / real.sum()


def test_loss_is_the_mean_over_real_tokens():
    got = float(masked_sparse_categorical_crossentropy(LABELS, LOGITS))
    np.testing.assert_allclose(got, _numpy_masked_crossentropy(LABELS, LOGITS), rtol=1e-5)
    # Padded positions do not count, whatever their logits.
    noisy = LOGITS + 10 * (LABELS == 0)[..., None] * rng.normal(size=LOGITS.shape)
    noisy_loss = float(masked_sparse_categorical_crossentropy(LABELS, noisy))
    np.testing.assert_allclose(noisy_loss, got, rtol=1e-5)


def test_loss_from_probabilities_and_other_ignore_label():
    probabilities = np.asarray(keras.ops.softmax(LOGITS))
    got = masked_sparse_categorical_crossentropy(
        LABELS, probabilities, ignore_label=4, from_logits=False
    )
    np.testing.assert_allclose(float(got), _numpy_masked_crossentropy(LABELS, LOGITS, 4), rtol=1e-4)


def test_loss_of_a_batch_of_padding_is_zero():
    padding = np.zeros((2, 3), "int32")
    assert float(masked_sparse_categorical_crossentropy(padding, LOGITS[:2, :3])) == 0.0


def test_accuracy_counts_real_tokens_over_batches():
    metric = MaskedSparseCategoricalAccuracy()
    predicted = LOGITS.argmax(-1)
    hits, total = 0, 0
    for rows in (slice(0, 1), slice(1, 3)):  # two batches of different sizes
        metric.update_state(LABELS[rows], LOGITS[rows])
        real = LABELS[rows] != 0
        hits += ((predicted[rows] == LABELS[rows]) & real).sum()
        total += real.sum()
    np.testing.assert_allclose(float(metric.result()), hits / total, rtol=1e-6)
    metric.reset_state()
    perfect = np.eye(6)[LABELS] * 5.0
    metric.update_state(LABELS, perfect)
    assert float(metric.result()) == 1.0


def test_accuracy_with_sentence_weights_and_config():
    metric = MaskedSparseCategoricalAccuracy(ignore_label=0, name="token_accuracy")
    weights = np.array([1.0, 0.0, 2.0])
    metric.update_state(LABELS, LOGITS, sample_weight=weights)
    real = (LABELS != 0) * weights[:, None]
    expected = ((LOGITS.argmax(-1) == LABELS) * real).sum() / real.sum()
    np.testing.assert_allclose(float(metric.result()), expected, rtol=1e-6)
    clone = MaskedSparseCategoricalAccuracy.from_config(metric.get_config())
    assert clone.name == "token_accuracy" and clone.ignore_label == 0


def test_bad_arguments():
    with pytest.raises(ValueError, match="ignore_label.*Received: ignore_label='pad'"):
        masked_sparse_categorical_crossentropy(LABELS, LOGITS, ignore_label="pad")
    shapes = "Received: y_true.shape=\\(3, 4\\), y_pred.shape=\\(3, 4\\)"
    with pytest.raises(ValueError, match=f"one more axis.*{shapes}"):
        masked_sparse_categorical_crossentropy(LABELS, LOGITS[..., 0])
    with pytest.raises(ValueError, match="ignore_label.*Received: ignore_label=None"):
        MaskedSparseCategoricalAccuracy(ignore_label=None)


def _token_model(seed):
    """Embedding then Dense: logits (B, T, 5) for ids (B, T)."""
    keras.utils.set_random_seed(seed)
    ids = keras.Input((4,), dtype="int32")
    logits = keras.layers.Dense(5)(keras.layers.Embedding(7, 3)(ids))
    model = keras.Model(ids, logits)
    model.compile(optimizer=keras.optimizers.SGD(0.5), loss=masked_sparse_categorical_crossentropy)
    return model


def test_mirrored_loss_and_step_equal_one_device():
    """Under two replicas the logged loss and one SGD step match one device."""
    ids = np.array([[1, 2, 3, 0], [4, 5, 0, 0], [6, 1, 2, 3], [2, 2, 0, 0]], "int32")
    labels = np.array([[1, 2, 3, 0], [4, 1, 0, 0], [2, 3, 4, 0], [3, 3, 0, 0]], "int32")
    single = _token_model(seed=3)
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with strategy.scope():
        mirrored = _token_model(seed=3)
    # Each replica gets two sentences with the same number of real tokens (5),
    # so the mean of the replicas' means is the mean over all tokens.
    expected = _numpy_masked_crossentropy(labels, np.asarray(single.predict(ids, verbose=0)))
    for model in (single, mirrored):
        loss = model.evaluate(ids, labels, batch_size=4, verbose=0)
        np.testing.assert_allclose(loss, expected, rtol=1e-5)
    single.fit(ids, labels, batch_size=4, epochs=1, shuffle=False, verbose=0)
    mirrored.fit(ids, labels, batch_size=4, epochs=1, shuffle=False, verbose=0)
    for a, b in zip(single.get_weights(), mirrored.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
