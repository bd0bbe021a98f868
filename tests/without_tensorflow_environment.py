"""The environment of a subprocess on Keras' JAX backend in which `import tensorflow` fails.

`tests/without_tensorflow/sitecustomize.py`, first on PYTHONPATH, makes the
process act as a machine with JAX alone (the GPU machines), the repository
root second makes `keras_attention` and `benchmarks` importable.
"""

import os
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
WITHOUT_TENSORFLOW = ROOT / "tests" / "without_tensorflow"


def without_tensorflow_environment():
    """`os.environ` with KERAS_BACKEND=jax and the import blocker first on PYTHONPATH."""
    environment = dict(os.environ, KERAS_BACKEND="jax", TF_CPP_MIN_LOG_LEVEL="3")
    paths = [str(WITHOUT_TENSORFLOW), str(ROOT), environment.get("PYTHONPATH", "")]
    environment["PYTHONPATH"] = os.pathsep.join(path for path in paths if path)
    return environment
