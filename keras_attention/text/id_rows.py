"""Fixed-length id rows with start and end tokens: the id arithmetic every tokenizer shares.

`encode` turns strings into `(B, L)` ids with an optional start token first
and end token after the text, cut or padded with 0 to `L`; `decode` reads each
row up to its first end token. The tokenizers differ only in how a string
becomes ids and ids become text.
"""

import tensorflow as tf


def check_encode_arguments(strings, sequence_length, add_start, add_end):
    """Validate `encode`'s arguments; return the strings as a `(B,)` batch, and if one was scalar.

    Example:

    >>> from keras_attention.text.id_rows import check_encode_arguments
    >>> batch, scalar = check_encode_arguments("a b", 4, True, True)
    >>> batch.shape.as_list(), scalar
    ([1], True)
    """
    num_special = int(bool(add_start)) + int(bool(add_end))
    if (
        isinstance(sequence_length, bool)
        or not isinstance(sequence_length, int)
        or sequence_length < num_special + 1
    ):
        raise ValueError(
            "`sequence_length` must be an integer with room for one token besides the "
            f"{num_special} start/end token(s). Received: sequence_length={sequence_length!r}"
        )
    strings = tf.convert_to_tensor(strings, dtype=tf.string)
    if strings.shape.rank not in (0, 1):
        raise ValueError(
            "`strings` must be a string or a 1D batch of strings. "
            f"Received: strings with shape={strings.shape}"
        )
    return tf.reshape(strings, [-1]), strings.shape.rank == 0  # (B,)


def pad_to_length(ids, strings, sequence_length, add_start, add_end, start_id, end_id, pad_id):
    """Rows `(B, L)` from ragged ids `(B, None)`: start token, ids (cut), end token, padding.

    `strings` is the `(B,)` batch the ids came from: its static size (a
    `tf.data` batch with `drop_remainder=True`) becomes the rows' static size.
    `sequence_length`, `add_start` and `add_end` may be tensors. When the ids
    do not fit, they are cut so that the end token keeps its place.

    Example:

    >>> import tensorflow as tf
    >>> from keras_attention.text.id_rows import pad_to_length
    >>> ids = tf.ragged.constant([[7, 8, 9], [7]])
    >>> pad_to_length(ids, tf.constant(["a", "b"]), 4, True, True,
    ...               start_id=2, end_id=3, pad_id=0).numpy().tolist()
    [[2, 7, 8, 3], [2, 7, 3, 0]]
    """
    num_start = tf.cast(add_start, tf.int32)
    room = sequence_length - num_start - tf.cast(add_end, tf.int32)
    ids = ids[:, :room]  # (B, None)
    width = tf.stack([-1, sequence_length])  # -1: keep the batch size
    padded = ids.to_tensor(default_value=pad_id, shape=width)  # (B, L)
    start = tf.fill([tf.shape(strings)[0], 1], start_id)[:, :num_start]  # (B, 0 or 1)
    padded = tf.concat([tf.cast(start, padded.dtype), padded], axis=1)[:, :sequence_length]
    # The end token goes right after the last id of each row.
    end_position = tf.cast(ids.row_lengths(), tf.int32) + num_start  # (B,)
    at_end = tf.equal(tf.range(sequence_length)[None, :], end_position[:, None])  # (B, L)
    return tf.where(tf.logical_and(at_end, add_end), tf.cast(end_id, padded.dtype), padded)


def check_ids(ids):
    """Validate `decode`'s ids; returns them as int32 `(B, T)` and whether they were one row.

    Example:

    >>> from keras_attention.text.id_rows import check_ids
    >>> batch, single = check_ids([4, 5, 3])
    >>> batch.shape.as_list(), single
    ([1, 3], True)
    """
    ids = tf.convert_to_tensor(ids)
    if not ids.dtype.is_integer or ids.shape.rank not in (1, 2):
        raise ValueError(
            "`ids` must be integer ids shaped (batch, length) or (length,). "
            f"Received: ids with dtype={ids.dtype.name} and shape={ids.shape}"
        )
    batch = tf.reshape(tf.cast(ids, tf.int32), [-1, tf.shape(ids)[-1]])  # (B, T)
    return batch, ids.shape.rank == 1


def from_end_on(ids, end_id):
    """Bool `(B, T)`: True at the first end token of each row and after it.

    Example:

    >>> from keras_attention.text.id_rows import from_end_on
    >>> from_end_on([[4, 3, 5, 3]], end_id=3).numpy().tolist()
    [[False, True, True, True]]
    """
    return tf.cumsum(tf.cast(tf.equal(ids, end_id), tf.int32), axis=1) > 0
