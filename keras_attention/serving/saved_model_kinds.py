"""The kinds of SavedModel this package exports, told apart by their signature's names."""

import collections

import tensorflow as tf

SavedModelKind = collections.namedtuple(
    "SavedModelKind", ["name", "inputs", "outputs", "exporter", "loader"]
)
SavedModelKind.__doc__ = """One kind of export: its `serving_default` input names and outputs.

A signature is of this kind when its inputs are exactly `inputs` and its
outputs include `outputs`.
"""

IMAGE_CLASSIFIER = SavedModelKind(
    "an image classifier",
    ("images",),
    ("labels", "probabilities"),
    "export_image_classifier",
    "load_image_classifier",
)
CAPTIONER = SavedModelKind(
    "an image captioner",
    ("images",),
    ("attention", "caption", "caption_tokens"),
    "export_captioner",
    "load_captioner",
)
TRANSLATOR = SavedModelKind(
    "a translator",
    ("text",),
    ("attention", "source_tokens", "translation", "translation_tokens"),
    "export_translator",
    "load_translator",
)
KINDS = (IMAGE_CLASSIFIER, CAPTIONER, TRANSLATOR)


def signature_names(function):
    """`(input names, output names)` of a signature function, each sorted.

    Args:
        function: a concrete function, as `loaded.signatures[...]`.

    Returns:
        two tuples of strings.
    """
    positional, named = function.structured_input_signature
    # A loaded signature takes its inputs by name; a traced function may take them in order.
    inputs = list(named) + [spec.name for spec in tf.nest.flatten(positional)]
    return tuple(sorted(inputs)), tuple(sorted(function.structured_outputs))


def describe(inputs, outputs):
    """`"inputs: a, b; outputs: c, d"`.

    Example:

    >>> describe(("images",), ("caption", "attention"))
    'inputs: images; outputs: caption, attention'
    """
    return f"inputs: {', '.join(inputs)}; outputs: {', '.join(outputs)}"


def kind_of(inputs, outputs):
    """The `SavedModelKind` whose names these are, or None.

    Example:

    >>> kind_of(("images",), ("attention", "caption", "caption_tokens")).loader
    'load_captioner'
    >>> kind_of(("x",), ("y",)) is None
    True
    """
    for kind in KINDS:
        if set(inputs) == set(kind.inputs) and set(kind.outputs) <= set(outputs):
            return kind
    return None


def check_kind(path, function, expected):
    """Raise a ValueError unless the signature `function` of `path` is of kind `expected`.

    The message names the path, the kind expected and the kind found, with
    the loader that reads it.

    Args:
        path: the SavedModel folder, for the message.
        function: its `serving_default` signature.
        expected: a `SavedModelKind`.

    Example:

    >>> import tensorflow as tf
    >>> function = tf.function(
    ...     lambda text: {"translation": text, "attention": text, "source_tokens": text,
    ...                   "translation_tokens": text},
    ...     input_signature=[tf.TensorSpec(None, tf.string, name="text")],
    ... ).get_concrete_function()
    >>> check_kind("nmt", function, IMAGE_CLASSIFIER)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: `path` must hold an image classifier...which holds a translator...load_translator
    """
    inputs, outputs = signature_names(function)
    found = kind_of(inputs, outputs)
    if found == expected:
        return
    if found is None:
        holds = f"a SavedModel of no kind this package exports ({describe(inputs, outputs)})"
    else:
        holds = f"{found.name} ({describe(inputs, outputs)}); use {found.loader}"
    raise ValueError(
        f"`path` must hold {expected.name}, as {expected.exporter} writes "
        f"({describe(expected.inputs, expected.outputs)}). Received: path={str(path)!r}, "
        f"which holds {holds}"
    )
