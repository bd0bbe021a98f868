"""The one signature every export of this package serves, and loading it."""

import tensorflow as tf

from keras_attention.serving.saved_model_kinds import check_kind

SERVING_SIGNATURE = "serving_default"


def check_saved_model_folder(path, exporter="an export function of keras_attention.serving"):
    """Raise a ValueError unless `path` is a SavedModel folder (with `saved_model.pb`).

    Args:
        path: the folder to load.
        exporter: what writes such folders, for the message.

    Example:

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     check_saved_model_folder(folder, "export_captioner")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: `path` must be a SavedModel folder ... a folder without saved_model.pb
    """
    path = str(path)
    if not tf.io.gfile.exists(path):
        problem = "which does not exist"
    elif not tf.io.gfile.isdir(path):
        problem = "a file, not a folder"
    elif not tf.saved_model.contains_saved_model(path):
        problem = "a folder without saved_model.pb"
    else:
        return
    raise ValueError(
        f"`path` must be a SavedModel folder (with saved_model.pb), as {exporter} writes. "
        f"Received: path={path!r}, {problem}"
    )


def load_serving_signature(path, kind=None):
    """Loads a SavedModel and returns `(loaded, its serving_default function)`.

    Keep `loaded` alive as long as the function is used: it owns the
    variables.

    Args:
        path: a SavedModel folder.
        kind: the `saved_model_kinds.SavedModelKind` the SavedModel must be
            (its signature's input and output names), or None for any.

    Returns:
        `(loaded, function)`.

    Raises:
        ValueError: when `path` is not a SavedModel folder, has no
            `serving_default` signature, or is not of `kind`; the message
            names the path and what it holds.

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
    if kind is None:
        check_saved_model_folder(path)
    else:
        check_saved_model_folder(path, kind.exporter)
    loaded = tf.saved_model.load(str(path))
    if SERVING_SIGNATURE not in loaded.signatures:
        raise ValueError(
            f"`path` must hold a SavedModel with a {SERVING_SIGNATURE!r} signature. "
            f"Received: path={path!r} with signatures {sorted(loaded.signatures)}"
        )
    function = loaded.signatures[SERVING_SIGNATURE]
    if kind is not None:
        check_kind(path, function, kind)
    return loaded, function
