"""The one change a `ReversibleTokenizer` round trip makes: whitespace runs become one space.

Runs of ASCII whitespace (space, tab, newline, carriage return, form feed,
vertical tab) become one space and the ends are trimmed, in Python
(`normalize_whitespace`, to compare with a tokenizer's output) and in
TensorFlow (`normalize_whitespace_strings`, which the tokenizer runs
before SentencePiece, and a serving graph to find blank requests).
"""

import re

import tensorflow as tf

# ASCII whitespace that changes: a run of two or more, or one that is not a space.
# Single spaces, most of the whitespace of a text, are left as they are (matching
# every space as a run of one is several times slower).
_CHANGED_WHITESPACE = r"[ \t\n\r\f\v]{2,}|[\t\n\r\f\v]"


def normalize_whitespace(text):
    """What `decode(encode(text))` gives back: whitespace runs as one space, ends trimmed.

    The same rule in Python, for comparing with the tokenizer's output.

    Args:
        text: a `str`.

    Returns:
        `str`.

    Example:

    >>> from keras_attention.text.whitespace import normalize_whitespace
    >>> normalize_whitespace("  it's \\t 15.04.1957 \\n")
    "it's 15.04.1957"
    """
    return re.sub(_CHANGED_WHITESPACE, " ", text).strip(" ")


def normalize_whitespace_strings(texts):
    """`normalize_whitespace` in TensorFlow, on a string tensor of any shape.

    A text that becomes "" here is blank: the tokenizer gives it no ids.

    Args:
        texts: `tf.string` tensor (or what converts to one).

    Returns:
        `tf.string` tensor of the same shape.

    Example:

    >>> from keras_attention.text.whitespace import normalize_whitespace_strings
    >>> normalize_whitespace_strings([" a \\t b ", "\\n"]).numpy().tolist()
    [b'a b', b'']
    """
    texts = tf.convert_to_tensor(texts, dtype=tf.string)
    return tf.strings.strip(tf.strings.regex_replace(texts, _CHANGED_WHITESPACE, " "))
