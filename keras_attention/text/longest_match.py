"""Cut strings into the longest tokens a vocabulary holds, left to right, in TensorFlow ops.

`longest_match_ids` is how a `ReversibleTokenizer` spells a piece it does
not hold whole: from the piece's first character, take the longest token
that starts there, then go on after it. A character no token starts with is
left to the caller (id -1), which spells it with its bytes.

Example:

>>> import tensorflow as tf
>>> from keras_attention.text.longest_match import longest_match_ids
>>> table = tf.lookup.StaticHashTable(
...     tf.lookup.KeyValueTensorInitializer(["a", "b", "ab", "abb"], [0, 1, 2, 3]), -1)
>>> ids, characters = longest_match_ids(tf.constant(["abab", "abbxa"]), table, 3)
>>> ids.to_list(), characters.to_list()
([[2, 2], [3, -1, 0]], [[b'ab', b'ab'], [b'abb', b'x', b'a']])
"""

import tensorflow as tf


def longest_match_ids(strings, table, longest_token):
    """Greedy longest-match ids of `strings` `(N,)`, and the text of each id.

    Args:
        strings: `tf.string` tensor `(N,)`.
        table: a `tf.lookup` table from token to int32 id, -1 when absent.
        longest_token: the most characters a token may have (Python int
            >= 1): longer tokens are not tried.

    Returns:
        `(ids, tokens)`, int32 and string `tf.RaggedTensor`s `(N, None)`:
        row i cuts `strings[i]` into `tokens[i]`, whose ids are `ids[i]`
        (-1 for a single character no token starts with).
    """
    characters = tf.strings.unicode_split(strings, "UTF-8")  # (N, C) ragged
    lengths = tf.cast(characters.row_lengths(), tf.int32)  # (N,)
    dense = characters.to_tensor("")  # (N, C_max)
    width = tf.shape(dense)[1]
    positions = tf.range(width)[None, :]  # (1, C_max)
    # best_length[n, i]: characters of the longest token starting at i (0: none);
    # best_id: its id. Candidates grow one character at a time.
    candidate = tf.fill(tf.shape(dense), "")  # (N, C_max)
    best_length = tf.zeros(tf.shape(dense), tf.int32)
    best_id = tf.fill(tf.shape(dense), -1)
    for size in range(1, longest_token + 1):
        # The character `size - 1` places on from each start; "" past the end.
        shifted = tf.concat([dense[:, size - 1 :], tf.fill([tf.shape(dense)[0], size - 1], "")], 1)
        candidate = tf.strings.join([candidate, shifted[:, :width]])  # (N, C_max)
        fits = positions + size <= lengths[:, None]  # (N, C_max)
        ids = tf.where(fits, table.lookup(candidate), -1)
        best_length = tf.where(ids >= 0, size, best_length)
        best_id = tf.where(ids >= 0, ids, best_id)
    starts = _token_starts(tf.maximum(best_length, 1), lengths)  # (N, C_max)
    ids = tf.ragged.boolean_mask(best_id, starts)  # (N, None)
    # Each token's text: its characters from its start up to the next start.
    token_numbers = tf.cumsum(tf.cast(starts, tf.int32), axis=1) - 1  # (N, C_max)
    in_string = positions < lengths[:, None]
    row_offsets = tf.cast(ids.row_starts(), tf.int32)[:, None]  # (N, 1)
    segment = tf.boolean_mask(token_numbers + row_offsets, in_string)  # (characters,)
    tokens = tf.strings.unsorted_segment_join(
        tf.boolean_mask(dense, in_string), segment, tf.size(ids.flat_values)
    )  # (tokens,)
    return ids, ids.with_flat_values(tokens)


def _token_starts(step, lengths):
    """Where tokens start `(N, C_max)` bool, when a token at i takes `step[n, i]` characters.

    Walks the columns once: a row's next start is 0, then each start plus its step.
    """
    width = tf.shape(step)[1]

    def walk(column, next_start, starts):
        is_start = tf.equal(next_start, column) & (column < lengths)  # (N,)
        next_start = tf.where(is_start, column + step[:, column], next_start)
        marks = (
            tf.one_hot(column, width, dtype=tf.int32)[None, :]
            * tf.cast(is_start, tf.int32)[:, None]
        )
        return column + 1, next_start, starts + marks  # (N, C_max)

    _, _, starts = tf.while_loop(
        lambda column, *_: column < width,
        walk,
        (tf.constant(0), tf.zeros_like(lengths), tf.zeros_like(step)),
    )
    return starts > 0
