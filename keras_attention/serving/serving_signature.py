"""The one signature every export of this package serves, and loading it."""

import tensorflow as tf

SERVING_SIGNATURE = "serving_default"


def load_serving_signature(path):
    """Loads a SavedModel and returns `(loaded, its serving_default function)`.

    Keep `loaded` alive as long as the function is used: it owns the
    variables.

    Args:
        path: a SavedModel folder.

    Returns:
        `(loaded, function)`.

    Raises:
        ValueError: when the SavedModel has no `serving_default` signature.

    Example:

    >>> import tempfile
    >>> import tensorflow as tf
    >>> from keras_attention.serving.serving_signature import load_serving_signature
    >>> module = tf.Module()
    >>> module.f = tf.function(lambda x: {"y": 2 * x}, input_signature=[tf.TensorSpec(None)])
    >>> with tempfile.TemporaryDirectory() as path:
    ...     tf.saved_model.save(module, path, signatures={"serving_default": module.f})
    ...     loaded, serve = load_serving_signature(path)
    ...     float(serve(x=tf.constant(3.0))["y"])
    6.0
    """
    loaded = tf.saved_model.load(str(path))
    if SERVING_SIGNATURE not in loaded.signatures:
        raise ValueError(
            f"`path` must hold a SavedModel with a {SERVING_SIGNATURE!r} signature. "
            f"Received: path={path!r} with signatures {sorted(loaded.signatures)}"
        )
    return loaded, loaded.signatures[SERVING_SIGNATURE]
