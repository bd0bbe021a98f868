"""What the image SavedModels (classifier, captioner) answer to requests of every shape and range.

A batch `(B, H, W, 3)` of pixels in 0..255 is answered; other ranks (one
image `(H, W, 3)` included), and pixels outside 0..255, are refused by the
signature itself with a message naming what it expects and what it got.
"""

import numpy as np
import pytest
import tensorflow as tf
from outside_process import SERVE_REQUESTS
from outside_process import XLA_AUTO_CLUSTERING
from outside_process import run_without_the_package
from tiny_models import tiny_transformer_captioner
from tiny_models import tiny_vision_transformer

from keras_attention.serving.captioning_export import export_captioner
from keras_attention.serving.image_classification_export import export_image_classifier

VOCABULARY = ["[PAD]", "[UNK]", "[START]", "[END]", "a", "red", "blue", "circle", "square", "x"]
IMAGES = np.random.default_rng(0).uniform(0, 255, (2, 12, 10, 3)).astype("float32")
RANK = (
    r"`images` must be a batch \(batch, height, width, 3\), one image as a batch of one "
    r"\(images\[None\]\)"
)
RANGE = r"`images` must hold pixel values in 0\.\.255"


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    """{"classifier": path, "captioner": path} of two tiny exports."""
    folder = tmp_path_factory.mktemp("exports")
    classifier = tiny_vision_transformer()
    rng = np.random.default_rng(1)
    # Large weights: different images get different probabilities.
    weights = classifier.get_weights()
    classifier.set_weights([rng.normal(0, 0.5, w.shape).astype("float32") for w in weights])
    captioner = tiny_transformer_captioner()
    return {
        "classifier": export_image_classifier(classifier, folder / "vit", ["a", "b", "c"]),
        "captioner": export_captioner(
            captioner, folder / "captioner", VOCABULARY, 4, decode_batch_size=2
        ),
    }


def _serve(exports, kind):
    return tf.saved_model.load(exports[kind]).signatures["serving_default"]


@pytest.mark.parametrize("kind", ["classifier", "captioner"])
def test_one_image_is_refused_with_the_fix_and_as_a_batch_of_one_answered_as_in_a_batch(
    exports, kind
):
    serve = _serve(exports, kind)
    with pytest.raises(
        tf.errors.InvalidArgumentError, match=RANK + r"\. Received: images\.shape=\[12 10 3\]"
    ):
        serve(images=tf.constant(IMAGES[1]))
    batch = serve(images=tf.constant(IMAGES))
    one = serve(images=tf.constant(IMAGES[1][None]))
    for name, value in one.items():
        if value.dtype == tf.string:
            np.testing.assert_array_equal(value.numpy(), batch[name].numpy()[1:])
        else:
            np.testing.assert_allclose(value.numpy(), batch[name].numpy()[1:], atol=1e-5)


@pytest.mark.parametrize("kind", ["classifier", "captioner"])
@pytest.mark.parametrize(
    "shape, received",
    [
        ((12, 3), r"\[12 3\]"),
        ((1, 1, 12, 10, 3), r"\[1 1 12 10 3\]"),
        ((7,), r"\[7\]"),
        ((), r"\[\]"),
    ],
)
def test_other_ranks_name_the_shapes_expected_and_received(exports, kind, shape, received):
    serve = _serve(exports, kind)
    with pytest.raises(tf.errors.InvalidArgumentError, match=RANK + r"\. Received: images\.shape="):
        serve(images=tf.zeros(shape))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"images\.shape=" + received):
        serve(images=tf.zeros(shape))


@pytest.mark.parametrize("kind", ["classifier", "captioner"])
@pytest.mark.parametrize(
    "value, received",
    [(1e38, "from 0 to 1e\\+38"), (65535.0, "from 0 to 65535"), (-1e6, "from -1e\\+06 to 255")],
)
def test_pixels_outside_0_to_255_are_refused_with_the_values_received(
    exports, kind, value, received
):
    serve = _serve(exports, kind)
    images = np.zeros((2, 12, 10, 3), "float32")
    images[0] = 255.0
    images[1, 3, 4, 1] = value
    with pytest.raises(
        tf.errors.InvalidArgumentError,
        match=RANGE + r".*Received: images with values " + received + r" \(1 values outside",
    ):
        serve(images=tf.constant(images))


@pytest.mark.parametrize("kind", ["classifier", "captioner"])
def test_pixels_just_outside_the_range_are_refused_and_its_ends_accepted(exports, kind):
    serve = _serve(exports, kind)
    for outside in (-0.5, 255.5):
        with pytest.raises(tf.errors.InvalidArgumentError, match=RANGE):
            serve(images=tf.fill((1, 8, 8, 3), outside))
    ends = np.zeros((2, 8, 8, 3), "float32")
    ends[1] = 255.0
    outputs = serve(images=tf.constant(ends))
    assert all(value.shape[0] == 2 for value in outputs.values())


def test_checks_hold_without_the_package_and_under_xla_auto_clustering(exports, tmp_path):
    # TensorFlow alone serves the SavedModels, with its XLA auto-clustering on:
    # the checks still run (XLA drops the asserts of the graphs it compiles).
    wide = np.zeros((1, 8, 8, 3), "float32")
    wide[0, 0, 0, 0] = 65535.0
    not_finite = np.zeros((1, 8, 8, 3), "float32")
    not_finite[0, 2, 2, 2] = np.nan
    requests = {
        "batch": IMAGES,
        "one_image": IMAGES[0],
        "rank_two": IMAGES[0, 0],
        "sixteen_bit": wide,
        "not_finite": not_finite,
    }
    np.savez(tmp_path / "requests.npz", **requests)
    answers = {
        kind: run_without_the_package(
            SERVE_REQUESTS, path, tmp_path / "requests.npz", environment=XLA_AUTO_CLUSTERING
        )
        for kind, path in exports.items()
    }
    for answer in answers.values():
        assert not answer["package_imported"]
        assert "Received: images.shape=[10 3]" in answer["rank_two"]
        assert "one image as a batch of one (images[None])" in answer["one_image"]
        assert "must hold pixel values in 0..255" in answer["sixteen_bit"]
        assert "values from 0 to 65535 (1 values outside 0..255)" in answer["sixteen_bit"]
        assert "must hold finite pixel values" in answer["not_finite"]
    assert answers["classifier"]["batch"] == {"labels": [2], "probabilities": [2, 3]}
    # The captioner's text ops do not compile under auto-clustering, so only its
    # refusals are checked here; test_captioning_export.py serves it without.
