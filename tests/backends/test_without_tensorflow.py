"""The layers, ops, models and decoding loops on a machine with JAX and no TensorFlow.

GPU machines often carry JAX alone. A subprocess runs with
`tests/without_tensorflow` first on PYTHONPATH, where `import tensorflow`
fails as if it were not installed, and KERAS_BACKEND=jax.
"""

import importlib.util
import json
import subprocess
import sys

import pytest
from without_tensorflow_environment import without_tensorflow_environment

# Packages that must import and work without TensorFlow (the rest is built on it).
BACKEND_NEUTRAL = (
    "ops",
    "layers",
    "models",
    "generation",
    "losses",
    "metrics",
    "callbacks",
    "visualization",
)

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("jax") is None,
    reason="jax is not installed: pip install -e '.[backends]'",
)

PROGRAM = """
import importlib, json, pkgutil, sys
import numpy as np
import keras
import keras_attention as ka

failures = {}
for package in PACKAGES:
    module = importlib.import_module("keras_attention." + package)
    for info in pkgutil.walk_packages(module.__path__, module.__name__ + "."):
        try:
            importlib.import_module(info.name)
        except Exception as error:
            failures[info.name] = repr(error)

rng = np.random.default_rng(0)
model = ka.models.rnn_attention_translator(
    source_vocabulary_size=12, target_vocabulary_size=12, embedding_dim=4, units=8)
model.compile(optimizer="adam", loss=ka.losses.masked_sparse_categorical_crossentropy)
inputs = {"source": rng.integers(1, 12, (2, 6)), "target": rng.integers(1, 12, (2, 5))}
history = model.fit(inputs, rng.integers(1, 12, (2, 5)), epochs=1, verbose=0)
from keras_attention.generation.greedy_search import _greedy_loop
tokens, _ = _greedy_loop(model, inputs["source"], 1, 2, 4)
print(json.dumps({
    "failures": failures,
    "tensorflow_loaded": "tensorflow" in sys.modules,
    "loss": float(history.history["loss"][-1]),
    "tokens_shape": list(np.asarray(tokens).shape),
}))
"""


def test_the_import_blocker_works():
    result = subprocess.run(
        [sys.executable, "-c", "import tensorflow"],
        env=without_tensorflow_environment(),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert "No module named 'tensorflow'" in result.stderr


def test_backend_neutral_packages_import_train_and_decode_without_tensorflow():
    program = PROGRAM.replace("PACKAGES", repr(BACKEND_NEUTRAL))
    result = subprocess.run(
        [sys.executable, "-c", program],
        env=without_tensorflow_environment(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["failures"] == {}
    assert report["tensorflow_loaded"] is False
    assert report["loss"] > 0 and report["loss"] < 1e3
    assert report["tokens_shape"] == [2, 4]
