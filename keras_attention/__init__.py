"""keras-attention: attention layers and attention models for Keras 3.

The subpackages load on first use, so that light modules (the command line
of the training scripts) can be imported without TensorFlow. Importing the
package registers every class a `.keras` file may hold with Keras, at once
when Keras is loaded, else as soon as it is (`keras_attention.registration`):
`import keras_attention` is enough for `keras.models.load_model`.

>>> import keras_attention as ka
>>> layer = ka.layers.MultiHeadAttention(num_heads=2, key_dim=8)
"""

import importlib

from keras_attention import registration
from keras_attention.version import __version__

SUBPACKAGES = (
    "callbacks",
    "data",
    "generation",
    "layers",
    "losses",
    "metrics",
    "models",
    "ops",
    "serving",
    "text",
    "training",
    "visualization",
)


def __getattr__(name):
    # PEP 562: `ka.layers` imports keras_attention.layers the first time.
    if name in SUBPACKAGES:
        return importlib.import_module(f"keras_attention.{name}")
    raise AttributeError(f"module 'keras_attention' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(SUBPACKAGES))


registration.register_when_keras_loads()
