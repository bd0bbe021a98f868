"""Which Keras backend runs, and a clear stop for what only TensorFlow runs.

The layers, ops, losses, metrics and `.keras` files work on every Keras 3
backend (TensorFlow, JAX, PyTorch). SavedModel export, the XLA-compiled
searches of `keras_attention.generation` (traced with `tf.function`) and the
example scripts are written on TensorFlow itself: their entry points call
`require_tensorflow_backend` first, so that on another backend they stop at
once with a message naming the feature, the backend and how to switch,
instead of failing deep inside a trace.

Example:

>>> from keras_attention.backend_support import current_backend, require_tensorflow_backend
>>> current_backend()
'tensorflow'
>>> require_tensorflow_backend("SavedModel export")  # returns: TensorFlow runs
"""

import os
import sys

TENSORFLOW = "tensorflow"


class UnsupportedBackendError(RuntimeError):
    """A feature that needs the TensorFlow backend was used on another one."""


def current_backend():
    """The Keras backend of this process.

    Keras fixes its backend when it is first imported. Once it is imported,
    its answer is the truth; before, `KERAS_BACKEND` is what it will use (the
    variable overrides `~/.keras/keras.json`), read without importing Keras,
    so that a command line can be checked before the seconds an import takes.

    Returns:
        "tensorflow", "jax", "torch" or "numpy".

    Example:

    >>> current_backend() in ("tensorflow", "jax", "torch", "numpy")
    True
    """
    keras = sys.modules.get("keras")
    if keras is None and "KERAS_BACKEND" in os.environ:
        return os.environ["KERAS_BACKEND"]
    import keras

    return keras.backend.backend()


def require_tensorflow_backend(feature):
    """Raises `UnsupportedBackendError` unless Keras runs on TensorFlow.

    Args:
        feature: what needs TensorFlow, as the user calls it (e.g.
            "SavedModel export"), named in the message.

    Raises:
        UnsupportedBackendError: (a RuntimeError) naming `feature`, the
            current backend and how to switch to TensorFlow.

    Example:

    >>> require_tensorflow_backend("greedy_search")  # nothing: TensorFlow runs
    """
    backend = current_backend()
    if backend != TENSORFLOW:
        raise UnsupportedBackendError(
            f"{feature} needs the TensorFlow backend of Keras, but Keras runs on "
            f"{backend!r} (KERAS_BACKEND={os.environ.get('KERAS_BACKEND', '<unset>')}). "
            f"Set KERAS_BACKEND=tensorflow before Keras is imported, e.g. "
            f"`KERAS_BACKEND=tensorflow python ...`. The layers, ops, losses and metrics "
            f"of keras_attention run on {backend!r} as well."
        )
