"""Whitespace normalisation, in Python and in TensorFlow, against its plain definition."""

import hypothesis
import hypothesis.strategies as st

from keras_attention.text.whitespace import normalize_whitespace
from keras_attention.text.whitespace import normalize_whitespace_strings

ASCII_WHITESPACE = " \t\n\r\f\v"
TEXTS = st.text(alphabet=st.sampled_from(list("ab" + ASCII_WHITESPACE) + ["\u00a0", "\u2028", "é"]))


def _words_joined(text):
    """The definition: the text's runs of non-whitespace, joined by one space."""
    words, word = [], ""
    for character in text:
        if character in ASCII_WHITESPACE:
            words, word = (words + [word]) if word else words, ""
        else:
            word += character
    return " ".join(words + ([word] if word else []))


@hypothesis.given(st.lists(TEXTS, min_size=1, max_size=20))
@hypothesis.settings(max_examples=100, deadline=None, derandomize=True, database=None)
def test_python_and_tensorflow_follow_the_definition(texts):
    expected = [_words_joined(text) for text in texts]
    assert [normalize_whitespace(text) for text in texts] == expected
    got = normalize_whitespace_strings(texts).numpy().tolist()
    assert [text.decode("utf-8") for text in got] == expected


def test_by_hand():
    assert normalize_whitespace("  a \t\n b\u00a0c  ") == "a b\u00a0c"  # no-break space is kept
    assert normalize_whitespace_strings([" \t ", "a  b"]).numpy().tolist() == [b"", b"a b"]
