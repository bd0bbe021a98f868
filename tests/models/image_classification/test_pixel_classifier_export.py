"""`model.export(path)` on ViT and Swin writes the serving classifier; `classify` probabilities."""

import contextlib
import io

import keras
import numpy as np
import pytest
import tensorflow as tf
import tiny_models
from outside_process import run_without_the_package

CLASS_NAMES = ["cat", "dog", "bird"]

# Calls `serving_uint8` and `serving_default` on the uint8 pixels of a .npy file,
# in a process where keras_attention cannot be imported, and prints both answers.
SERVE_UINT8 = """
import json, sys
import numpy as np
import tensorflow as tf
signatures = tf.saved_model.load(sys.argv[1]).signatures
pixels = np.load(sys.argv[2])
served = {}
for name in ("serving_uint8", "serving_default"):
    outputs = signatures[name](images=pixels)  # NumPy uint8, as images are stored
    served[name] = {
        "probabilities": outputs["probabilities"].numpy().tolist(),
        "labels": [label.decode() for label in outputs["labels"].numpy()],
    }
served["package_imported"] = sys.modules.get("keras_attention") is not None
print(json.dumps(served))
"""


def _softmax(logits):
    logits = np.asarray(logits, "float64")
    e = np.exp(logits - logits.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _randomized(model):
    """`model` with normal weights: a zero head would give every class the same score."""
    rng = np.random.default_rng(3)
    model.set_weights([rng.normal(0, 0.5, w.shape).astype("float32") for w in model.get_weights()])
    return model


def _vit(**overrides):
    return _randomized(
        tiny_models.tiny_vision_transformer(**{"class_names": CLASS_NAMES, **overrides})
    )


def _swin(**overrides):
    return _randomized(
        tiny_models.tiny_swin_transformer(**{"class_names": CLASS_NAMES, **overrides})
    )


def _pixels(count, height, width, seed=0):
    return np.random.default_rng(seed).integers(0, 256, (count, height, width, 3), dtype=np.uint8)


@pytest.fixture(scope="module", params=["vit", "swin"])
def exported(request, tmp_path_factory):
    """`(model, the path export returned, what the export printed)`, once per model."""
    keras.utils.set_random_seed(0)
    model = {"vit": _vit, "swin": _swin}[request.param]()
    folder = tmp_path_factory.mktemp("export") / "served"
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        path = model.export(folder)
    return model, folder, path, printed.getvalue()


def test_export_serves_raw_pixels_without_the_package(exported, tmp_path):
    model, folder, path, printed = exported
    assert path == str(folder) and printed == ""  # no keras "Captures" listing
    pixels = _pixels(4, 19, 29)
    np.save(tmp_path / "pixels.npy", pixels)
    served = run_without_the_package(SERVE_UINT8, path, tmp_path / "pixels.npy")
    assert not served["package_imported"]
    expected = _softmax(model(pixels.astype("float32")))
    assert np.ptp(expected, axis=-1).min() > 1e-3  # scores that tell the classes apart
    labels = [CLASS_NAMES[index] for index in expected.argmax(-1)]
    for name in ("serving_uint8", "serving_default"):
        probabilities = np.array(served[name]["probabilities"])
        assert probabilities.shape == (4, 3)
        np.testing.assert_allclose(probabilities, expected, atol=1e-5)
        assert served[name]["labels"] == labels


def test_export_answers_as_classify_and_takes_encoded_images(exported):
    model, _, path, _ = exported
    signatures = tf.saved_model.load(path).signatures
    assert {"serving_default", "serving_uint8", "serving_bytes"} <= set(signatures)
    pixels = _pixels(3, *model.image_size, seed=1)  # encoded at the model's size: kept as is
    labels, probabilities = model.classify(pixels, return_probabilities=True)
    encoded = tf.stack([tf.io.encode_png(image) for image in pixels])
    for served in (
        signatures["serving_uint8"](images=tf.constant(pixels)),
        signatures["serving_bytes"](image_bytes=encoded),
    ):
        np.testing.assert_allclose(served["probabilities"].numpy(), probabilities, atol=1e-5)
        assert [label.decode() for label in served["labels"].numpy()] == list(labels)


def test_export_without_class_names_serves_the_indices(tmp_path):
    model = _vit(class_names=None)
    served = tf.saved_model.load(model.export(tmp_path / "served")).signatures["serving_uint8"]
    pixels = _pixels(5, 8, 8, seed=2)
    labels = [label.decode() for label in served(images=tf.constant(pixels))["labels"].numpy()]
    assert labels == [str(index) for index in model.classify(pixels)]


def test_export_class_names_given_win(tmp_path):
    model = _vit()
    path = model.export(tmp_path / "served", ["x", "y", "z"])
    served = tf.saved_model.load(path).signatures["serving_uint8"]
    pixels = _pixels(3, 12, 12, seed=4)
    labels = [label.decode() for label in served(images=tf.constant(pixels))["labels"].numpy()]
    expected = _softmax(model(pixels.astype("float32"))).argmax(-1)
    assert labels == [["x", "y", "z"][index] for index in expected]


def test_a_saved_model_file_loads_and_exports(tmp_path):
    model = _vit()
    model.save(tmp_path / "vit.keras")
    loaded = keras.saving.load_model(tmp_path / "vit.keras")
    served = tf.saved_model.load(loaded.export(tmp_path / "served")).signatures["serving_uint8"]
    pixels = _pixels(2, 9, 7, seed=5)
    probabilities = served(images=tf.constant(pixels))["probabilities"].numpy()
    np.testing.assert_allclose(probabilities, _softmax(model(pixels.astype("float32"))), atol=1e-5)


def test_logits_export_is_keras_own(tmp_path):
    model = _vit()
    assert model.export(tmp_path / "logits", logits=True, verbose=False) is None
    serve = tf.saved_model.load(str(tmp_path / "logits")).signatures["serve"]
    images = _pixels(2, 8, 8, seed=6).astype("float32")
    (logits,) = serve(images=tf.constant(images)).values()
    np.testing.assert_allclose(logits.numpy(), np.asarray(model(images)), atol=1e-5)


def test_export_arguments_of_keras_say_what_to_call(tmp_path):
    model = _vit()
    with pytest.raises(
        ValueError,
        match=r"export_image_classifier; export\(path, logits=True\) writes keras' .*"
        r"Received: other arguments \['format', 'verbose'\]",
    ):
        model.export(tmp_path / "served", format="tf_saved_model", verbose=False)
    with pytest.raises(ValueError, match=r"one name per model output \(3 names\)"):
        model.export(tmp_path / "served", ["a"])


@pytest.mark.parametrize("build", [_vit, _swin], ids=["vit", "swin"])
def test_classify_returns_probabilities_on_request(build):
    model = build()
    images = _pixels(5, 21, 13, seed=7).astype("float32")
    expected = _softmax(model.predict(images, verbose=0))
    labels, probabilities = model.classify(images, batch_size=2, return_probabilities=True)
    assert probabilities.shape == (5, 3)
    np.testing.assert_allclose(probabilities.sum(-1), 1.0, atol=1e-6)
    np.testing.assert_allclose(probabilities, expected, atol=1e-5)
    np.testing.assert_array_equal(labels, np.array(CLASS_NAMES)[expected.argmax(-1)])
    np.testing.assert_array_equal(model.classify(images), labels)
    # With the attention maps too: (labels, probabilities, maps), with or without the flag.
    for flag in (True, False):
        with_maps = model.classify(
            images, batch_size=2, return_probabilities=flag, return_attention=True
        )
        assert len(with_maps) == 3
        np.testing.assert_array_equal(with_maps[0], labels)
        np.testing.assert_allclose(with_maps[1], probabilities, atol=1e-6)
        assert len(with_maps[2]) == len(model.encoder_blocks)
    assert len(model.classify(images, 2, True)) == 3  # `return_attention` keeps its place
