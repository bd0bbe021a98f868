"""longest_match_ids against greedy longest match written out in Python."""

import hypothesis
import hypothesis.strategies as st
import tensorflow as tf

from keras_attention.text.longest_match import longest_match_ids

TOKENS = ["a", "b", "é", "ab", "abé", "bb", "bbb", " a", " ab", "ba", "€"]
LONGEST = 3


def _table(tokens):
    return tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(tokens, list(range(len(tokens)))), default_value=-1
    )


def _reference(text, tokens, longest):
    """From each position, the longest token (of at most `longest` characters) that starts there."""
    ids, pieces, position = [], [], 0
    while position < len(text):
        for size in range(min(longest, len(text) - position), 0, -1):
            candidate = text[position : position + size]
            if candidate in tokens:
                ids.append(tokens.index(candidate))
                pieces.append(candidate)
                position += size
                break
        else:  # no token starts here: the character alone, id -1
            ids.append(-1)
            pieces.append(text[position])
            position += 1
    return ids, pieces


@hypothesis.given(st.lists(st.text(alphabet="ab é€xу", max_size=12), max_size=8))
@hypothesis.settings(max_examples=60, deadline=None, derandomize=True, database=None)
def test_matches_greedy_longest_match(texts):
    ids, pieces = longest_match_ids(tf.constant(texts, tf.string), _table(TOKENS), LONGEST)
    expected = [_reference(text, TOKENS, LONGEST) for text in texts]
    assert ids.to_list() == [row_ids for row_ids, _ in expected]
    assert [[p.decode("utf-8") for p in row] for row in pieces.to_list()] == [
        row_pieces for _, row_pieces in expected
    ]


def test_longer_tokens_than_the_limit_are_not_tried():
    ids, _ = longest_match_ids(tf.constant(["bbb"]), _table(TOKENS), 2)
    assert ids.to_list() == [[TOKENS.index("bb"), TOKENS.index("b")]]


def test_traces_for_any_batch_size_including_none():
    table = _table(TOKENS)
    traced = tf.function(
        lambda strings: longest_match_ids(strings, table, LONGEST)[0],
        input_signature=[tf.TensorSpec([None], tf.string)],
    )
    assert traced(tf.constant([], tf.string)).to_list() == []
    assert traced(tf.constant(["", "abé"])).to_list() == [[], [TOKENS.index("abé")]]
