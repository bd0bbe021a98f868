"""Image SavedModels: float pixels, uint8 pixels and encoded JPEG/PNG bytes answer alike."""

import os
import re
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf
from outside_process import run_without_the_package
from outside_process import saved_model_cli_show
from tiny_models import tiny_transformer_captioner
from tiny_models import tiny_vision_transformer

from keras_attention.serving.captioning_export import export_captioner
from keras_attention.serving.image_classification_export import export_image_classifier
from keras_attention.serving.image_signatures import decode_images

CLASS_NAMES = ["cat", "dog", "bird"]
VOCABULARY = ["[PAD]", "[UNK]", "[START]", "[END]", "a", "red", "blue", "circle", "square", "on"]
rng = np.random.default_rng(0)

# Serves PNG files read from disk through `serving_bytes`, in a Python without the package.
SERVE_FILES = """
import json, sys
import tensorflow as tf
serve = tf.saved_model.load(sys.argv[1]).signatures["serving_bytes"]
files = [open(path, "rb").read() for path in sys.argv[2:]]
outputs = serve(image_bytes=tf.constant(files))
print(json.dumps({"probabilities": outputs["probabilities"].numpy().tolist(),
                  "package_imported": sys.modules.get("keras_attention") is not None}))
"""


def _random_weights(model):
    model.set_weights([rng.normal(0, 0.5, w.shape).astype("float32") for w in model.get_weights()])
    return model


@pytest.fixture(scope="module")
def classifier(tmp_path_factory):
    keras.utils.set_random_seed(1)
    model = _random_weights(tiny_vision_transformer())
    path = export_image_classifier(model, tmp_path_factory.mktemp("export") / "vit", CLASS_NAMES)
    return model, path, tf.saved_model.load(path).signatures


@pytest.fixture(scope="module")
def captioner(tmp_path_factory):
    keras.utils.set_random_seed(2)
    model = _random_weights(tiny_transformer_captioner())
    path = export_captioner(
        model, tmp_path_factory.mktemp("export") / "captioner", VOCABULARY, 5, decode_batch_size=2
    )
    return model, path, tf.saved_model.load(path).signatures


def _pixels(*shape):
    return rng.integers(0, 256, shape).astype("uint8")


def _png(images):
    return tf.stack([tf.io.encode_png(image) for image in images])


def test_three_signatures_are_listed_with_their_inputs(classifier, captioner):
    for _, path, _ in (classifier, captioner):
        shown = saved_model_cli_show(path)
        assert re.search(
            r"signature_def\['serving_uint8'\].*?inputs\['images'\] tensor_info:"
            r"\s+dtype: DT_UINT8\s+shape: unknown_rank",
            shown,
            re.S,
        )
        assert re.search(
            r"signature_def\['serving_bytes'\].*?inputs\['image_bytes'\] "
            r"tensor_info:\s+dtype: DT_STRING\s+shape: \(-1\)",
            shown,
            re.S,
        )
        assert re.search(
            r"signature_def\['serving_default'\].*?inputs\['images'\] "
            r"tensor_info:\s+dtype: DT_FLOAT",
            shown,
            re.S,
        )


@pytest.mark.parametrize("size", [(8, 8), (19, 13)])
def test_classifier_uint8_and_png_bytes_answer_as_float_pixels(classifier, size):
    _, _, signatures = classifier
    pixels = _pixels(3, *size, 3)
    expected = signatures["serving_default"](images=tf.constant(pixels, tf.float32))
    from_uint8 = signatures["serving_uint8"](images=tf.constant(pixels))
    from_png = signatures["serving_bytes"](image_bytes=_png(pixels))
    for answer in (from_uint8, from_png):
        np.testing.assert_allclose(
            answer["probabilities"].numpy(), expected["probabilities"].numpy(), atol=1e-6
        )
        assert answer["labels"].numpy().tolist() == expected["labels"].numpy().tolist()
    assert len(set(expected["labels"].numpy().tolist())) >= 1
    assert not np.allclose(expected["probabilities"].numpy(), 1 / 3)  # weights do something


def test_classifier_jpeg_bytes_answer_as_their_decoded_pixels(classifier):
    _, _, signatures = classifier
    jpegs = tf.stack([tf.io.encode_jpeg(image, quality=90) for image in _pixels(2, 16, 12, 3)])
    decoded = tf.stack([tf.io.decode_jpeg(jpeg, channels=3) for jpeg in jpegs])
    expected = signatures["serving_uint8"](images=decoded)
    answer = signatures["serving_bytes"](image_bytes=jpegs)
    np.testing.assert_allclose(
        answer["probabilities"].numpy(), expected["probabilities"].numpy(), atol=1e-6
    )


def test_captioner_uint8_and_png_bytes_answer_as_float_pixels(captioner):
    _, _, signatures = captioner
    pixels = _pixels(3, 20, 24, 3)
    expected = signatures["serving_default"](images=tf.constant(pixels, tf.float32))
    for answer in (
        signatures["serving_uint8"](images=tf.constant(pixels)),
        signatures["serving_bytes"](image_bytes=_png(pixels)),
    ):
        assert answer["caption"].numpy().tolist() == expected["caption"].numpy().tolist()
        np.testing.assert_allclose(
            answer["attention"].numpy(), expected["attention"].numpy(), atol=1e-6
        )


def test_bytes_run_without_the_package(classifier, tmp_path):
    _, path, signatures = classifier
    pixels = _pixels(2, 10, 14, 3)
    files = []
    for index, png in enumerate(_png(pixels).numpy()):
        files.append(tmp_path / f"image_{index}.png")
        files[-1].write_bytes(png)
    served = run_without_the_package(SERVE_FILES, path, *files)
    assert not served["package_imported"]
    expected = signatures["serving_uint8"](images=tf.constant(pixels))["probabilities"].numpy()
    np.testing.assert_allclose(np.array(served["probabilities"]), expected, atol=1e-6)


def test_saved_model_cli_runs_uint8_and_bytes(classifier, tmp_path):
    _, path, signatures = classifier
    pixels = _pixels(2, 8, 8, 3)
    np.save(tmp_path / "pixels.npy", pixels)
    # Fixed-width bytes: saved_model_cli loads .npy files without pickles.
    np.save(tmp_path / "png.npy", np.array(_png(pixels).numpy().tolist(), dtype="S"))
    expected = signatures["serving_uint8"](images=tf.constant(pixels))["probabilities"].numpy()
    cli = os.path.join(os.path.dirname(sys.executable), "saved_model_cli")
    for signature, argument in (
        ("serving_uint8", f"images={tmp_path / 'pixels.npy'}"),
        ("serving_bytes", f"image_bytes={tmp_path / 'png.npy'}"),
    ):
        outdir = tmp_path / signature
        completed = subprocess.run(
            [
                cli,
                "run",
                "--dir",
                str(path),
                "--tag_set",
                "serve",
                "--signature_def",
                signature,
                "--inputs",
                argument,
                "--outdir",
                str(outdir),
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert completed.returncode == 0, completed.stderr[-2000:]
        np.testing.assert_allclose(np.load(outdir / "probabilities.npy"), expected, atol=1e-6)


def test_undecodable_bytes_are_refused(classifier):
    _, _, signatures = classifier
    with pytest.raises(tf.errors.InvalidArgumentError, match="(?i)unknown image file format"):
        signatures["serving_bytes"](image_bytes=tf.constant([b"not an image"]))


def test_decode_images_keeps_sizes_without_a_size():
    pixels = _pixels(2, 5, 7, 3)
    decoded = decode_images(_png(pixels), 3)
    np.testing.assert_array_equal(decoded.numpy(), pixels.astype("float32"))
