"""Image classifier SavedModel export: pixels of any size in, probabilities and labels out."""

import doctest
import json
import os
import shutil
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_attention.models.vision_transformer import vision_transformer
from keras_attention.serving import image_classifier_export
from keras_attention.serving.image_classifier_export import export_image_classifier
from keras_attention.serving.image_classifier_export import load_image_classifier

CLASS_NAMES = ["cat", "dog", "bird"]
TINY = dict(
    image_size=8, patch_size=4, num_classes=3, hidden_dim=8, num_layers=1, num_heads=2, mlp_dim=8
)

# Loads and calls the SavedModel where importing keras_attention is impossible.
_SERVE_WITHOUT_PACKAGE = """
import json, sys
sys.modules["keras_attention"] = None  # any import of the package now fails
import numpy as np
import tensorflow as tf
serve = tf.saved_model.load(sys.argv[1]).signatures["serving_default"]
images = np.load(sys.argv[2])
result = serve(images=tf.constant(images))
print(json.dumps({
    "probabilities": result["probabilities"].numpy().tolist(),
    "labels": [label.decode() for label in result["labels"].numpy()],
    "package_importable": "keras_attention" in sys.modules and sys.modules["keras_attention"] is not None,
}))
"""


def _softmax(logits):
    e = np.exp(logits - logits.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    keras.utils.set_random_seed(1)
    model = vision_transformer(**TINY)
    rng = np.random.default_rng(0)
    model.set_weights([rng.normal(0, 0.5, w.shape).astype("float32") for w in model.get_weights()])
    path = export_image_classifier(model, tmp_path_factory.mktemp("export") / "vit", CLASS_NAMES)
    return model, path


def test_saved_model_runs_without_the_package(exported, tmp_path):
    model, path = exported
    images = np.random.default_rng(2).uniform(0, 255, (2, 13, 21, 3)).astype("float32")
    images_path = tmp_path / "images.npy"
    np.save(images_path, images)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    completed = subprocess.run(
        [sys.executable, "-c", _SERVE_WITHOUT_PACKAGE, str(path), str(images_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    result = json.loads(completed.stdout.strip().splitlines()[-1])
    assert not result["package_importable"]
    probabilities = np.array(result["probabilities"])
    expected = _softmax(np.asarray(model(images), dtype="float64"))
    assert probabilities.shape == (2, 3)
    np.testing.assert_allclose(probabilities, expected, atol=1e-5)
    np.testing.assert_allclose(probabilities.sum(-1), 1.0, atol=1e-6)
    assert result["labels"] == [CLASS_NAMES[i] for i in expected.argmax(-1)]


def test_saved_model_cli_shows_the_signature(exported):
    _, path = exported
    cli = shutil.which("saved_model_cli") or os.path.join(
        os.path.dirname(sys.executable), "saved_model_cli"
    )
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    completed = subprocess.run(
        [cli, "show", "--all", "--dir", str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    out = completed.stdout
    assert "signature_def['serving_default']" in out
    assert "inputs['images']" in out and "shape: (-1, -1, -1, 3)" in out
    assert "outputs['probabilities']" in out and "shape: (-1, 3)" in out
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
    model = vision_transformer(**TINY)
    path = export_image_classifier(model, tmp_path / "vit", CLASS_NAMES)
    result = load_image_classifier(path)(np.zeros((1, 8, 8, 3), "float32"))
    assert result["probabilities"].dtype == tf.float32
    np.testing.assert_allclose(result["probabilities"].numpy().sum(), 1.0, atol=1e-3)


def test_class_names_default_to_the_model_attribute(tmp_path):
    model = vision_transformer(**TINY, class_names=CLASS_NAMES)
    path = export_image_classifier(model, tmp_path / "vit")
    labels = load_image_classifier(path)(np.zeros((2, 8, 8, 3), "float32"))["labels"].numpy()
    assert all(label.decode() in CLASS_NAMES for label in labels)


def test_bad_arguments(tmp_path):
    model = vision_transformer(**TINY)
    with pytest.raises(
        ValueError, match=r"`class_names` is required .* Received: class_names=None"
    ):
        export_image_classifier(model, tmp_path / "a")
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
    results = doctest.testmod(image_classifier_export, optionflags=doctest.ELLIPSIS)
    assert results.attempted > 0 and results.failed == 0
