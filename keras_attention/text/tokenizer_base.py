"""The tokenizers' base class: a checked vocabulary, and text to padded ids of a fixed length."""

import os

import tensorflow as tf

from keras_attention.text.id_rows import check_encode_arguments
from keras_attention.text.id_rows import pad_to_length


def check_vocabulary(vocabulary):
    """Raise a ValueError unless `vocabulary` is a list of distinct non-empty strings."""
    if (
        isinstance(vocabulary, str)
        or not isinstance(vocabulary, (list, tuple))
        or not all(isinstance(token, str) and token for token in vocabulary)
        or len(set(vocabulary)) != len(vocabulary)
    ):
        raise ValueError(
            "`vocabulary` must be a list of distinct non-empty strings. "
            f"Received: vocabulary={vocabulary!r:.200}"
        )


class FixedLengthEncoder:
    """Base of the tokenizers: vocabulary, and text to padded ids of a fixed length.

    A subclass calls `_set_vocabulary(vocabulary)` in its constructor and
    defines `tokenize(strings)` (ragged ids without special tokens), the
    `pad_id`, `start_id` and `end_id` properties, and `decode`. A tokenizer
    saved as a file of tokens writes and reads it with `_write_vocabulary`
    and `_read_vocabulary`.
    `encode` traces one `tf.function` per tokenizer with tensor arguments,
    so that eager calls, `tf.data` maps and SavedModels share one small
    graph.
    """

    def _set_vocabulary(self, vocabulary):
        check_vocabulary(vocabulary)
        self._vocabulary = list(vocabulary)
        self._traced_encode = tf.function(
            self._encode,
            autograph=False,  # plain TensorFlow ops: nothing to convert, faster tracing
            input_signature=[
                tf.TensorSpec([None], tf.string),
                tf.TensorSpec([], tf.int32),
                tf.TensorSpec([], tf.bool),
                tf.TensorSpec([], tf.bool),
            ],
        )

    def _write_vocabulary(self, directory, filename, write):
        """`write(file, tokens)` into `directory/filename`, `directory` created if missing."""
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, filename)
        with open(path, "w", encoding="utf-8") as file:
            write(file, self._vocabulary)
        return path

    @staticmethod
    def _read_vocabulary(directory, filename, read):
        """`read(file)` of the `directory/filename` that `save` wrote."""
        path = os.path.join(directory, filename)
        if not os.path.isfile(path):
            raise ValueError(
                f"`directory` must hold a {filename} written by `save`. "
                f"Received: directory={directory!r}"
            )
        with open(path, encoding="utf-8") as file:
            return read(file)

    @property
    def vocabulary(self):
        """The tokens, in id order (a copy)."""
        return list(self._vocabulary)

    @property
    def vocabulary_size(self):
        """Number of tokens, special tokens included."""
        return len(self._vocabulary)

    def encode(self, strings, sequence_length, add_start=False, add_end=False):
        """Turn strings into int32 ids of a fixed length.

        Sequences longer than `sequence_length` are cut, keeping the end
        token last when `add_end=True`; shorter ones are padded with 0.

        Args:
            strings: a string or a 1D batch of strings: Python `str`, a list
                of them, or a `tf.string` tensor (also a symbolic one inside a
                `tf.function` or `tf.data` map).
            sequence_length: length of every output row, special tokens
                included.
            add_start: whether to put the start token first.
            add_end: whether to put the end token after the text.

        Returns:
            int32 tensor `(B, sequence_length)`, or `(sequence_length,)` for a
            single string.

        Example:

        >>> from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
        >>> tokenizer = ReversibleTokenizer.train(["a b a", "b a b"], 300)
        >>> tokenizer.vocabulary[260:]
        [' a', ' b', ' ', 'a', 'b']
        >>> tokenizer.encode(["a b", "b"], 4, add_start=True, add_end=True).numpy().tolist()
        [[2, 260, 261, 3], [2, 261, 3, 0]]
        """
        batch, scalar = check_encode_arguments(strings, sequence_length, add_start, add_end)
        ids = self._traced_encode(batch, sequence_length, bool(add_start), bool(add_end))
        ids = tf.ensure_shape(ids, [None, sequence_length])  # (B, L), static L for graphs
        return ids[0] if scalar else ids

    def _encode(self, batch, sequence_length, add_start, add_end):
        """Encode strings `(B,)` into ids `(B, L)`; all arguments are tensors."""
        return pad_to_length(
            self.tokenize(batch),
            batch,
            sequence_length,
            add_start,
            add_end,
            self.start_id,
            self.end_id,
            self.pad_id,
        )
