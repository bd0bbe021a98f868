"""Text to WordPiece ids and back, in eager code and inside TensorFlow graphs.

Both directions run on `tf.string` tensors with TensorFlow ops (the tokenizer
is keras-hub's `WordPieceTokenizer`, backed by tensorflow-text), so they can
be traced into `tf.data` pipelines and SavedModel serving signatures; a
SavedModel that uses `encode` needs `import tensorflow_text` before loading,
as that registers the tokenizer's ops.
"""

import os

import keras_hub
import tensorflow as tf

from keras_attention.text.fixed_length_ids import check_encode_arguments
from keras_attention.text.fixed_length_ids import check_ids
from keras_attention.text.fixed_length_ids import from_end_on
from keras_attention.text.fixed_length_ids import pad_to_length

VOCABULARY_FILENAME = "vocabulary.txt"
_SUFFIX_INDICATOR = "##"


class SubwordEncoder:
    """Encodes text into padded WordPiece ids and decodes ids back into text.

    Args:
        vocabulary: list of WordPiece tokens in id order, such as the output of
            `train_wordpiece_vocabulary`; continuation pieces start with "##".
            It must start with `pad_token` (id 0) and contain the other
            special tokens.
        pad_token: token of id 0 that fills sequences up to their length.
        unknown_token: token for words the vocabulary cannot spell.
        start_token: token `encode` puts first when `add_start=True`.
        end_token: token `encode` puts last when `add_end=True`; `decode`
            stops at its first occurrence.

    Example:

    >>> from keras_attention.text.subword_encoder import SubwordEncoder
    >>> encoder = SubwordEncoder(
    ...     ["[PAD]", "[UNK]", "[START]", "[END]", "the", "cat", "s", "##at", "##s"]
    ... )
    >>> ids = encoder.encode(["the cats sat"], sequence_length=8, add_start=True, add_end=True)
    >>> ids.numpy().tolist()
    [[2, 4, 5, 8, 6, 7, 3, 0]]
    >>> encoder.decode(ids).numpy().tolist()
    [b'the cats sat']
    """

    def __init__(
        self,
        vocabulary,
        pad_token="[PAD]",
        unknown_token="[UNK]",
        start_token="[START]",
        end_token="[END]",
    ):
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
        if not vocabulary or vocabulary[0] != pad_token:
            raise ValueError(
                f"`vocabulary` must start with the padding token {pad_token!r} (id 0). "
                f"Received: vocabulary={vocabulary[:5]!r}..."
            )
        for name, token in (
            ("unknown_token", unknown_token),
            ("start_token", start_token),
            ("end_token", end_token),
        ):
            if token not in vocabulary:
                raise ValueError(
                    f"`vocabulary` must contain `{name}`. Received: {name}={token!r} "
                    f"missing from vocabulary={vocabulary[:8]!r}..."
                )
        self._vocabulary = list(vocabulary)
        self._pad_token = pad_token
        self._unknown_token = unknown_token
        self._start_token = start_token
        self._end_token = end_token
        self._token_ids = {token: index for index, token in enumerate(self._vocabulary)}
        self._tokenizer = keras_hub.tokenizers.WordPieceTokenizer(
            vocabulary=self._vocabulary,
            suffix_indicator=_SUFFIX_INDICATOR,
            oov_token=unknown_token,
            dtype="int32",
        )
        self._token_strings = tf.constant(self._vocabulary, dtype=tf.string)
        # keras-hub runs its Python tokenizer on eager inputs; one traced
        # function keeps a single TensorFlow path for eager calls, tf.data and
        # SavedModels. Lengths and flags are tensors so that it is traced once
        # per encoder, which also keeps the graphs that call it small.
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

    @property
    def vocabulary(self):
        """The tokens, in id order (a copy)."""
        return list(self._vocabulary)

    @property
    def vocabulary_size(self):
        """Number of tokens, special tokens included."""
        return len(self._vocabulary)

    @property
    def pad_id(self):
        """Id of the padding token: always 0."""
        return self._token_ids[self._pad_token]

    @property
    def unknown_id(self):
        """Id of the token for unknown words."""
        return self._token_ids[self._unknown_token]

    @property
    def start_id(self):
        """Id of the start-of-sequence token."""
        return self._token_ids[self._start_token]

    @property
    def end_id(self):
        """Id of the end-of-sequence token."""
        return self._token_ids[self._end_token]

    @property
    def tokenizer(self):
        """The underlying `keras_hub.tokenizers.WordPieceTokenizer`."""
        return self._tokenizer

    def encode(self, strings, sequence_length, add_start=False, add_end=False):
        """Turn strings into int32 ids of a fixed length.

        Sequences longer than `sequence_length` are cut; `[END]` is kept as
        the last id when `add_end=True`. Shorter ones are padded with 0.

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

        >>> from keras_attention.text.subword_encoder import SubwordEncoder
        >>> encoder = SubwordEncoder(["[PAD]", "[UNK]", "[START]", "[END]", "a", "b"])
        >>> encoder.encode(["a b a", "b"], 3, add_end=True).numpy().tolist()
        [[4, 5, 3], [5, 3, 0]]
        """
        batch, scalar = check_encode_arguments(strings, sequence_length, add_start, add_end)
        ids = self._traced_encode(batch, sequence_length, bool(add_start), bool(add_end))
        ids = tf.ensure_shape(ids, [None, sequence_length])  # (B, L), static L for graphs
        return ids[0] if scalar else ids

    def _encode(self, batch, sequence_length, add_start, add_end):
        """Encode strings `(B,)` into ids `(B, L)`; all arguments are tensors."""
        return pad_to_length(
            self._tokenizer.tokenize(batch), batch, sequence_length, add_start, add_end,
            self.start_id, self.end_id, self.pad_id,
        )

    def decode(self, ids):
        """Turn ids back into text, one string per row.

        Reading stops at the first end token; padding and start tokens are
        dropped, and "##" continuation pieces are glued to the previous piece.

        Args:
            ids: integer ids `(B, T)` or `(T,)`: a tensor (also symbolic), a
                NumPy array or nested lists.

        Returns:
            `tf.string` tensor `(B,)`, or a scalar for `(T,)` ids.

        Example:

        >>> from keras_attention.text.subword_encoder import SubwordEncoder
        >>> encoder = SubwordEncoder(["[PAD]", "[UNK]", "[START]", "[END]", "a", "##b"])
        >>> encoder.decode([[2, 4, 5, 4, 3, 4, 0]]).numpy().tolist()
        [b'ab a']
        """
        batch, single = check_ids(ids)  # (B, T)
        after_end = from_end_on(batch, self.end_id)  # (B, T)
        keep = (
            tf.logical_not(after_end)
            & tf.not_equal(batch, self.pad_id)
            & tf.not_equal(batch, self.start_id)
        )  # (B, T)
        tokens = tf.gather(self._token_strings, batch)  # (B, T)
        words = tf.ragged.boolean_mask(tokens, keep)  # (B, None)
        text = tf.strings.reduce_join(words, axis=1, separator=" ")  # (B,)
        text = tf.strings.regex_replace(text, " " + _SUFFIX_INDICATOR, "")
        return text[0] if single else text

    def save(self, directory):
        """Write the vocabulary, one token per line, to `directory/vocabulary.txt`.

        Args:
            directory: folder to write to; created if missing.

        Returns:
            str, the path of the vocabulary file.

        Example:

        >>> import tempfile
        >>> from keras_attention.text.subword_encoder import SubwordEncoder
        >>> encoder = SubwordEncoder(["[PAD]", "[UNK]", "[START]", "[END]", "a"])
        >>> with tempfile.TemporaryDirectory() as directory:
        ...     _ = encoder.save(directory)
        ...     SubwordEncoder.load(directory).vocabulary == encoder.vocabulary
        True
        """
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, VOCABULARY_FILENAME)
        with open(path, "w", encoding="utf-8") as file:
            file.write("".join(token + "\n" for token in self._vocabulary))
        return path

    @classmethod
    def load(cls, directory, **special_tokens):
        """Make an encoder from a vocabulary written by `save`.

        Args:
            directory: folder holding `vocabulary.txt`.
            **special_tokens: `pad_token`, `unknown_token`, `start_token` or
                `end_token` where they differ from the defaults.

        Returns:
            a `SubwordEncoder`.

        Example:

        >>> import tempfile
        >>> from keras_attention.text.subword_encoder import SubwordEncoder
        >>> with tempfile.TemporaryDirectory() as directory:
        ...     _ = SubwordEncoder(["[PAD]", "[UNK]", "[START]", "[END]"]).save(directory)
        ...     SubwordEncoder.load(directory).end_id
        3
        """
        path = os.path.join(directory, VOCABULARY_FILENAME)
        if not os.path.isfile(path):
            raise ValueError(
                f"`directory` must hold a {VOCABULARY_FILENAME} written by `save`. "
                f"Received: directory={directory!r}"
            )
        with open(path, encoding="utf-8") as file:
            vocabulary = [line.rstrip("\n") for line in file]
        return cls(vocabulary, **special_tokens)
