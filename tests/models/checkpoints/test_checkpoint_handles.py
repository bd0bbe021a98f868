"""Checkpoints by name: `hf://` handles through huggingface_hub's cache, keras-hub handles
through keras-hub's loader, with no network (caches laid out as the hubs lay them out).

The logits are checked against the NumPy ViT of tests/hf_checkpoints.py on the
same weights, not against a folder read by the code under test.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from hf_checkpoints import numpy_vit_logits
from hf_checkpoints import random_pixels
from hf_checkpoints import softmax
from hf_checkpoints import write_vit_checkpoint
from hub_caches import put_in_hf_cache
from hub_caches import put_in_kaggle_cache
from huggingface_hub import constants
from keras_hub_presets import keras_hub_vit_classifier

from keras_attention.models import VisionTransformer
from keras_attention.models.checkpoints.checkpoint_handles import checkpoint_folder
from keras_attention.models.checkpoints.checkpoint_handles import parse_hf_handle

COMMIT = "0123456789abcdef0123456789abcdef01234567"
OTHER_COMMIT = "fedcba9876543210fedcba9876543210fedcba98"


@pytest.fixture
def hf_cache(tmp_path, monkeypatch):
    """An offline Hugging Face cache with one ViT repository; returns its weights by commit."""
    home = tmp_path / "hf_home"
    weights = {COMMIT: write_vit_checkpoint(tmp_path / "vit")}
    put_in_hf_cache(tmp_path / "vit", home, "acme/vit-tiny", COMMIT, "main")
    # A second commit on branch "dev", with other weights: only the class names differ.
    dev = tmp_path / "vit_dev"
    weights[OTHER_COMMIT] = write_vit_checkpoint(dev, mean=(0.4, 0.4, 0.4))
    put_in_hf_cache(dev, home, "acme/vit-tiny", OTHER_COMMIT, "dev")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(home / "hub"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    return weights


@pytest.mark.parametrize(
    "handle",
    ["hf://", "hf://acme/", "hf://acme/vit tiny", "hf://acme/vit@", "hf://a/b/c"],
)
def test_a_malformed_hf_handle_is_refused_naming_the_argument(handle):
    with pytest.raises(ValueError, match=r"`--init-from` must be a Hugging Face handle"):
        parse_hf_handle(handle, "--init-from")


def test_a_folder_is_its_own_checkpoint_folder(tmp_path):
    assert checkpoint_folder(str(tmp_path)) == str(tmp_path)
    assert checkpoint_folder(tmp_path) == tmp_path


@pytest.mark.parametrize(
    "handle, commit",
    [
        ("hf://acme/vit-tiny", COMMIT),
        ("hf://acme/vit-tiny@main", COMMIT),
        ("hf://acme/vit-tiny@dev", OTHER_COMMIT),
        (f"hf://acme/vit-tiny@{OTHER_COMMIT}", OTHER_COMMIT),
    ],
)
def test_an_hf_handle_loads_the_cached_revision_offline(hf_cache, handle, commit):
    model = VisionTransformer.from_preset(handle)
    pixels = random_pixels()
    mean = 0.5 if commit == COMMIT else 0.4
    expected = numpy_vit_logits(hf_cache[commit], (pixels / 255 - mean) / 0.5)
    np.testing.assert_allclose(np.asarray(model(pixels)), expected, atol=1e-4)


def test_an_uncached_model_in_offline_mode_says_how_to_fetch_it(hf_cache):
    with pytest.raises(ValueError) as error:
        VisionTransformer.from_preset("hf://acme/vit-large@v2")
    message = str(error.value)
    assert "\n" not in message
    assert "offline mode is on (HF_HUB_OFFLINE=1)" in message
    assert "`hf download acme/vit-large --revision v2`" in message
    assert constants.HF_HUB_CACHE in message


def _run(command, env):
    return subprocess.run(command, env={**os.environ, **env}, capture_output=True, text=True)


def test_convert_reads_a_handle_from_the_cache_hf_home_names(tmp_path):
    """The real environment variables, in a process of their own: HF_HOME and HF_HUB_OFFLINE."""
    weights = write_vit_checkpoint(tmp_path / "vit")
    put_in_hf_cache(tmp_path / "vit", tmp_path / "home", "acme/vit-tiny")
    env = {"HF_HOME": str(tmp_path / "home"), "HF_HUB_OFFLINE": "1"}
    convert = [sys.executable, "-m", "keras_attention.convert"]
    done = _run([*convert, "hf://acme/vit-tiny", "--export", str(tmp_path / "served")], env)
    assert done.returncode == 0, done.stderr
    check = (
        "import json, sys, numpy as np, tensorflow as tf\n"
        "pixels = np.asarray(json.loads(sys.argv[2]), 'float32')\n"
        "serve = tf.saved_model.load(sys.argv[1]).signatures['serving_default']\n"
        "print(json.dumps(serve(images=tf.constant(pixels))['probabilities'].numpy().tolist()))\n"
    )
    pixels = random_pixels()
    served = _run(
        [sys.executable, "-c", check, str(tmp_path / "served"), json.dumps(pixels.tolist())], {}
    )
    assert served.returncode == 0, served.stderr
    probabilities = np.asarray(json.loads(served.stdout.strip().splitlines()[-1]))
    expected = softmax(numpy_vit_logits(weights, pixels.astype("float64") / 127.5 - 1))
    np.testing.assert_allclose(probabilities, expected, atol=1e-4)

    missing = _run([*convert, "hf://acme/absent", "--export", str(tmp_path / "other")], env)
    assert missing.returncode != 0
    last = missing.stderr.strip().splitlines()[-1]
    assert "hf download acme/absent" in last and "Traceback" not in missing.stderr
    assert not (tmp_path / "other").exists()


def test_a_versioned_kaggle_handle_loads_from_kagglehubs_cache(tmp_path, monkeypatch):
    classifier = keras_hub_vit_classifier(image_shape=(32, 32, 3))
    classifier.save_to_preset(str(tmp_path / "preset"))
    monkeypatch.setenv("KAGGLEHUB_CACHE", str(tmp_path / "kaggle"))
    cached = put_in_kaggle_cache(tmp_path / "preset", tmp_path / "kaggle", "acme/vit/keras/tiny/2")
    handle = "kaggle://acme/vit/keras/tiny/2"
    assert checkpoint_folder(handle) == str(cached)
    model = VisionTransformer.from_preset(handle)
    pixels = random_pixels()
    theirs = np.asarray(classifier(classifier.preprocessor.image_converter(pixels)))
    np.testing.assert_allclose(np.asarray(model(pixels)), theirs, atol=1e-4)


@pytest.mark.parametrize(
    "model_class", ["TransformerTranslator", "VisionTransformer", "SwinTransformer", "ViTCaptioner"]
)
@pytest.mark.parametrize("preset", [None, 42])
def test_a_preset_that_is_no_path_nor_name_is_refused_naming_the_argument(model_class, preset):
    import keras_attention as ka

    with pytest.raises(ValueError) as error:
        getattr(ka.models, model_class).from_preset(preset)
    assert str(error.value) == (
        "`preset` must be a checkpoint folder's path, an hf:// or kaggle:// handle, or a preset "
        f"name. Received: preset={preset!r}"
    )
