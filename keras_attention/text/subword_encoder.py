"""Text to WordPiece ids and back, in eager code and inside TensorFlow graphs.

Both directions run on `tf.string` tensors with TensorFlow ops (the tokenizer
is keras-hub's `WordPieceTokenizer`, backed by tensorflow-text), so they can
be traced into `tf.data` pipelines and SavedModel serving signatures; a
SavedModel that uses `encode` needs `import tensorflow_text` before loading,
as that registers the tokenizer's ops.
"""

import keras_hub
import tensorflow as tf

from keras_attention.text.id_rows import check_ids
from keras_attention.text.id_rows import from_end_on
from keras_attention.text.tokenizer_base import FixedLengthEncoder
from keras_attention.text.tokenizer_base import check_vocabulary

VOCABULARY_FILENAME = "vocabulary.txt"
_SUFFIX_INDICATOR = "##"


def _special_token_id(attribute, doc):
    """A read-only property: the id of the special token held in `attribute`."""
    return property(lambda self: self._token_ids[getattr(self, attribute)], doc=doc)


class SubwordEncoder(FixedLengthEncoder):
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

    # How a piece marks the rest of a word (`keras_attention.text.word_pieces`).
    word_continuation = "wordpiece"

    def __init__(
        self,
        vocabulary,
        pad_token="[PAD]",
        unknown_token="[UNK]",
        start_token="[START]",
        end_token="[END]",
    ):
        """Checks that `vocabulary` starts with `pad_token` and holds the other special
        tokens, then builds the WordPiece tokenizer and the id-to-piece table."""
        check_vocabulary(vocabulary)
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
        self._set_vocabulary(vocabulary)
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
        # keras-hub runs its Python tokenizer on eager inputs; `encode`'s
        # traced function keeps a single TensorFlow path for eager calls,
        # tf.data and SavedModels.

    pad_id = _special_token_id("_pad_token", "Id of the padding token: always 0.")
    unknown_id = _special_token_id("_unknown_token", "Id of the token for unknown words.")
    start_id = _special_token_id("_start_token", "Id of the start-of-sequence token.")
    end_id = _special_token_id("_end_token", "Id of the end-of-sequence token.")

    @property
    def special_tokens(self):
        """The special tokens' constructor arguments, as `load` takes them back.

        Example:

        >>> SubwordEncoder(["[PAD]", "[UNK]", "[START]", "[END]"]).special_tokens["end_token"]
        '[END]'
        """
        return {
            "pad_token": self._pad_token,
            "unknown_token": self._unknown_token,
            "start_token": self._start_token,
            "end_token": self._end_token,
        }

    @property
    def tokenizer(self):
        """The underlying `keras_hub.tokenizers.WordPieceTokenizer`."""
        return self._tokenizer

    def tokenize(self, strings):
        """WordPiece ids of each string, unpadded, without special tokens.

        Args:
            strings: `tf.string` tensor `(B,)` or a list of strings.

        Returns:
            int32 `tf.RaggedTensor` `(B, None)`.
        """
        return self._tokenizer.tokenize(strings)

    def decode(self, ids):
        """Turn ids back into text, one string per row.

        Reading stops at the first end token; padding and start tokens are
        dropped, and "##" continuation pieces are glued to the previous piece.
        `ids` `(B, T)` or `(T,)` (a tensor, also symbolic, a NumPy array or
        nested lists) give a `tf.string` tensor `(B,)`, or a scalar.

        Example:

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

        `directory` is created if missing; returns the file's path (a str).

        Example:

        >>> import tempfile
        >>> encoder = SubwordEncoder(["[PAD]", "[UNK]", "[START]", "[END]", "a"])
        >>> with tempfile.TemporaryDirectory() as directory:
        ...     _ = encoder.save(directory)
        ...     SubwordEncoder.load(directory).vocabulary == encoder.vocabulary
        True
        """
        return self._write_vocabulary(
            directory,
            VOCABULARY_FILENAME,
            lambda file, tokens: file.write("".join(token + "\n" for token in tokens)),
        )

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
        vocabulary = cls._read_vocabulary(
            directory, VOCABULARY_FILENAME, lambda file: [line.rstrip("\n") for line in file]
        )
        return cls(vocabulary, **special_tokens)
