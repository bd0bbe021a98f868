"""Image classifier SavedModel export: pixels of any size in, probabilities and labels out."""

import doctest
import re

import keras
import numpy as np
import pytest
import tensorflow as tf
from outside_process import SERVE_IMAGES
from outside_process import run_without_the_package
from outside_process import saved_model_cli_show
from tiny_models import tiny_vision_transformer

from keras_attention.serving import image_classification_export
from keras_attention.serving.image_classification_export import export_image_classifier
from keras_attention.serving.image_classification_export import load_image_classifier

CLASS_NAMES = ["cat", "dog", "bird"]


def _softmax(logits):
    e = np.exp(logits - logits.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    keras.utils.set_random_seed(1)
    model = tiny_vision_transformer()
    rng = np.random.default_rng(0)
    model.set_weights([rng.normal(0, 0.5, w.shape).astype("float32") for w in model.get_weights()])
    path = export_image_classifier(model, tmp_path_factory.mktemp("export") / "vit", CLASS_NAMES)
    return model, path


def test_saved_model_runs_without_the_package(exported, tmp_path):
    model, path = exported
    images = np.random.default_rng(2).uniform(0, 255, (2, 13, 21, 3)).astype("float32")
    images_path = tmp_path / "images.npy"
    np.save(images_path, images)
    result = run_without_the_package(SERVE_IMAGES, path, images_path)
    assert not result["package_imported"]
    probabilities = np.array(result["probabilities"])
    expected = _softmax(np.asarray(model(images), dtype="float64"))
    assert probabilities.shape == (2, 3)
    np.testing.assert_allclose(probabilities, expected, atol=1e-5)
    np.testing.assert_allclose(probabilities.sum(-1), 1.0, atol=1e-6)
    assert result["labels"] == [CLASS_NAMES[i] for i in expected.argmax(-1)]


def test_saved_model_cli_shows_the_signature(exported):
    _, path = exported
    out = saved_model_cli_show(path)
    assert "signature_def['serving_default']" in out
    # Of unknown rank, so that the signature checks the rank itself; the outputs keep theirs.
    assert re.search(
        r"inputs\['images'\] tensor_info:\s+dtype: DT_FLOAT\s+shape: unknown_rank", out
    )
    assert re.search(
        r"outputs\['probabilities'\] tensor_info:\s+dtype: DT_FLOAT\s+shape: \(-1, 3\)", out
    )
    assert "outputs['labels']" in out and "DT_STRING" in out


def test_signature_in_process_any_size(exported):
    model, path = exported
    serve = load_image_classifier(path)
    for height, width in ((8, 8), (30, 17)):
        images = (
            np.random.default_rng(height).uniform(0, 255, (3, height, width, 3)).astype("float32")
        )
        result = serve(images)
        expected = _softmax(np.asarray(model(images), dtype="float64"))
        np.testing.assert_allclose(result["probabilities"].numpy(), expected, atol=1e-5)
        labels = [label.decode() for label in result["labels"].numpy()]
        assert labels == [CLASS_NAMES[i] for i in expected.argmax(-1)]


def test_signature_takes_uint8_pixels_as_stored(exported):
    model, path = exported
    serve = tf.saved_model.load(str(path)).signatures["serving_default"]
    pixels = np.random.default_rng(1).integers(0, 256, (2, 8, 12, 3)).astype(np.uint8)
    from_uint8 = serve(images=pixels)  # NumPy uint8 arrays are converted to float32
    from_float = serve(images=tf.constant(pixels.astype("float32")))
    np.testing.assert_allclose(
        from_uint8["probabilities"].numpy(), from_float["probabilities"].numpy()
    )
    expected = _softmax(np.asarray(model(pixels.astype("float32")), dtype="float64"))
    np.testing.assert_allclose(from_uint8["probabilities"].numpy(), expected, atol=1e-5)


@pytest.mark.parametrize("shape", [(2, 8, 8, 1), (1, 0, 8, 3)])
def test_bad_request_shape_is_named(exported, shape):
    _, path = exported
    serve = tf.saved_model.load(str(path)).signatures["serving_default"]
    with pytest.raises(
        tf.errors.InvalidArgumentError, match=r"`images` must be \(batch, height, width, 3\)"
    ):
        serve(images=tf.zeros(shape))


def test_mixed_precision_model_exports_float32(tmp_path):
    keras.config.set_dtype_policy("mixed_bfloat16")
    model = tiny_vision_transformer()
    path = export_image_classifier(model, tmp_path / "vit", CLASS_NAMES)
    result = load_image_classifier(path)(np.zeros((1, 8, 8, 3), "float32"))
    assert result["probabilities"].dtype == tf.float32
    np.testing.assert_allclose(result["probabilities"].numpy().sum(), 1.0, atol=1e-3)


def test_class_names_default_to_the_model_attribute(tmp_path):
    model = tiny_vision_transformer(class_names=CLASS_NAMES)
    path = export_image_classifier(model, tmp_path / "vit")
    labels = load_image_classifier(path)(np.zeros((2, 8, 8, 3), "float32"))["labels"].numpy()
    assert all(label.decode() in CLASS_NAMES for label in labels)


def test_a_model_without_class_names_serves_its_indices(tmp_path):
    model = tiny_vision_transformer()
    assert model.class_names is None
    path = export_image_classifier(model, tmp_path / "vit")
    images = np.random.default_rng(3).uniform(0, 255, (4, 8, 8, 3)).astype("float32")
    labels = load_image_classifier(path)(images)["labels"].numpy()
    assert [label.decode() for label in labels] == [str(i) for i in model.classify(images)]


def test_bad_arguments(tmp_path):
    model = tiny_vision_transformer()
    images = keras.Input((8, 8, 3))
    unnamed = keras.Model(images, model(images))  # a plain functional model: no class_names
    with pytest.raises(
        ValueError, match=r"`class_names` is required .* Received: class_names=None"
    ):
        export_image_classifier(unnamed, tmp_path / "a")
    with pytest.raises(
        ValueError, match=r"one name per model output \(3 names\). Received: class_names=\['a'\]"
    ):
        export_image_classifier(model, tmp_path / "b", ["a"])
    with pytest.raises(
        ValueError, match=r"`model` must be a functional keras.Model .* Received: model="
    ):
        export_image_classifier("model", tmp_path / "c", CLASS_NAMES)
    flat = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
    with pytest.raises(
        ValueError, match=r"must take images .* Received: model input shape=\(None, 4\)"
    ):
        export_image_classifier(flat, tmp_path / "d", CLASS_NAMES)
    with pytest.raises(ValueError, match=r"SavedModel with a 'serving_default' signature"):
        other = tf.Module()
        other.f = tf.function(lambda: tf.constant(1.0), input_signature=[])
        tf.saved_model.save(other, str(tmp_path / "e"), signatures={"other": other.f})
        load_image_classifier(tmp_path / "e")


def test_docstring_examples():
    results = doctest.testmod(image_classification_export, optionflags=doctest.ELLIPSIS)
    assert results.attempted > 0 and results.failed == 0
