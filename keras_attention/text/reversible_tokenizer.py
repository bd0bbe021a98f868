"""A tokenizer whose ids decode back to the exact text, in plain TensorFlow.

Text is cut into pieces that keep their leading space ("it's a dog" ->
"it", "'", "s", " a", " dog"), so joining the pieces gives the text back:
no rule has to guess where spaces went, and "15.04.1957" stays
"15.04.1957". A piece the vocabulary does not hold is spelled with the
longest subwords it holds (" Sonnen", "blumen", "feld"), down to single
characters, and a character it does not hold with its UTF-8 bytes, so every
string has ids and comes back unchanged.

Both directions are TensorFlow string and lookup ops only (no
tensorflow-text), so they trace into `tf.data` pipelines and into SavedModel
signatures that load with TensorFlow alone.
"""

import collections
import json
import re

import tensorflow as tf

from keras_attention.text.id_rows import check_ids
from keras_attention.text.id_rows import from_end_on
from keras_attention.text.longest_match import longest_match_ids
from keras_attention.text.subword_merges import learn_subword_merges
from keras_attention.text.text_batches import text_batches
from keras_attention.text.tokenizer_base import FixedLengthEncoder
from keras_attention.text.tokenizer_base import check_vocabulary
from keras_attention.validation import check_positive_int

VOCABULARY_FILENAME = "vocabulary.json"
SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[START]", "[END]")
NUM_BYTES = 256
# ASCII whitespace: runs of it become one space and ends are trimmed, the one
# change `decode(encode(text))` makes to a text.
_WHITESPACE_RUN = r"[ \t\n\r\f\v]+"
_LETTER = r"[\pL\pM]"
# How a piece the vocabulary does not hold whole is spelled: with the longest
# tokens it holds ("subwords"), or with single characters ("characters", as
# vocabulary files written before subwords were learned are read).
UNKNOWN_PIECES = ("subwords", "characters")
# Longest subword tried inside an unknown piece, in characters: each
# character more is one more table lookup per character spelled.
LONGEST_SUBWORD = 24
# Rare pieces that subwords are learned from, at most (the commonest first):
# more would lengthen learning without changing the commonest subwords much.
MAX_RARE_PIECES = 50_000
# Fewest times a subword must be seen to be learned: rarer ones would be tokens
# a model meets too seldom to learn (the vocabulary threshold Sennrich et al.
# recommend, 50), such as two parts of a compound merged into one.
MIN_SUBWORD_COUNT = 50


def _byte_token(value):
    return f"<0x{value:02X}>"


def normalize_whitespace(text):
    """What `decode(encode(text))` gives back: whitespace runs as one space, ends trimmed.

    The same rule in Python, for comparing with the tokenizer's output.

    Args:
        text: a `str`.

    Returns:
        `str`.

    Example:

    >>> from keras_attention.text.reversible_tokenizer import normalize_whitespace
    >>> normalize_whitespace("  it's \\t 15.04.1957 \\n")
    "it's 15.04.1957"
    """
    return re.sub(_WHITESPACE_RUN, " ", text).strip(" ")


def normalize_whitespace_strings(texts):
    """`normalize_whitespace` in TensorFlow, on a string tensor of any shape.

    A text that becomes "" here is blank: the tokenizer gives it no ids.

    Args:
        texts: `tf.string` tensor (or what converts to one).

    Returns:
        `tf.string` tensor of the same shape.

    Example:

    >>> from keras_attention.text.reversible_tokenizer import normalize_whitespace_strings
    >>> normalize_whitespace_strings([" a \\t b ", "\\n"]).numpy().tolist()
    [b'a b', b'']
    """
    texts = tf.convert_to_tensor(texts, dtype=tf.string)
    return tf.strings.strip(tf.strings.regex_replace(texts, _WHITESPACE_RUN, " "))


def split_pieces(texts):
    """Cut strings into the pieces the tokenizer looks up, each with its leading space.

    A piece is a run of letters (and combining marks), a single digit, or a
    single other character (punctuation, symbols), with the space before it
    if there is one. Whitespace is normalised first (`normalize_whitespace`),
    so joining a row's pieces gives the normalised text back.

    Args:
        texts: `tf.string` tensor `(B,)`.

    Returns:
        `tf.RaggedTensor` of strings `(B, None)`.

    Example:

    >>> from keras_attention.text.reversible_tokenizer import split_pieces
    >>> split_pieces(["it's 15.04, ok"]).to_list()
    [[b'it', b"'", b's', b' 1', b'5', b'.', b'0', b'4', b',', b' ok']]
    """
    texts = normalize_whitespace_strings(texts)  # (B,)
    # One code per character: every letter becomes "a", so the codes tell
    # letters (97) and spaces (32) apart without a regex per character.
    codes = tf.strings.unicode_decode(tf.strings.regex_replace(texts, _LETTER, "a"), "UTF-8")
    _, offsets = tf.strings.unicode_decode_with_offsets(texts, "UTF-8")  # (B, C) byte offsets
    flat = codes.flat_values  # (N,)
    rows = codes.value_rowids()  # (N,)
    is_space = tf.equal(flat, ord(" "))
    is_letter = tf.equal(flat, ord("a"))
    previous_space = tf.concat([[False], is_space[:-1]], axis=0)  # (N,)
    previous_letter = tf.concat([[False], is_letter[:-1]], axis=0)  # (N,)
    row_start = tf.equal(
        tf.range(tf.size(flat, out_type=tf.int64)), tf.gather(codes.row_starts(), rows)
    )  # (N,)
    # A piece starts at a space, and at any character that neither follows a
    # space (it joins that space's piece) nor continues a run of letters.
    starts = row_start | is_space | ~(previous_space | (is_letter & previous_letter))
    piece_rows = tf.boolean_mask(rows, starts)  # (P,)
    piece_begins = tf.cast(tf.boolean_mask(offsets.flat_values, starts), tf.int32)  # (P,)
    # A piece ends where the next one of its row begins, or at the row's end.
    next_rows = tf.concat([piece_rows[1:], [-1]], axis=0)  # (P,)
    next_begins = tf.concat([piece_begins[1:], [0]], axis=0)  # (P,)
    row_bytes = tf.gather(tf.strings.length(texts), piece_rows)  # (P,)
    piece_ends = tf.where(tf.equal(next_rows, piece_rows), next_begins, row_bytes)  # (P,)
    pieces = tf.strings.substr(
        tf.gather(texts, piece_rows), piece_begins, piece_ends - piece_begins
    )  # (P,)
    pieces_per_row = tf.math.unsorted_segment_sum(
        tf.ones_like(piece_rows), piece_rows, tf.shape(texts, out_type=tf.int64)[0]
    )  # (B,)
    return tf.RaggedTensor.from_row_lengths(pieces, pieces_per_row)


class ReversibleTokenizer(FixedLengthEncoder, tf.Module):
    """Encodes text into padded ids and decodes ids back into the same text.

    The vocabulary starts with the special tokens `[PAD]` (id 0), `[UNK]`,
    `[START]`, `[END]`, then the 256 byte tokens `<0x00>` ... `<0xFF>`, then
    the space, characters, frequent pieces and subwords learned by `train`.
    Encoding looks each piece up whole, then spells it with the longest
    tokens the vocabulary holds, left to right (`unknown_pieces="subwords"`)
    or with its characters (`"characters"`), then with the bytes of any
    character it lacks; decoding joins the pieces of the ids. So
    `decode(encode(text)) == normalize_whitespace(text)` for every string,
    however little of it the vocabulary holds; `[UNK]` is never produced.

    It is a `tf.Module`: an object that holds it (an exported
    `tf.Module`, a Keras layer) saves its lookup table with it.

    Args:
        vocabulary: list of distinct tokens in id order, as `train` makes:
            the special tokens and the byte tokens first.
        unknown_pieces: `"subwords"` or `"characters"`: how a piece the
            vocabulary does not hold whole is spelled.

    Example:

    >>> from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
    >>> tokenizer = ReversibleTokenizer.train(["it's a dog, isn't it?", "15.04.1957"], 400)
    >>> ids = tokenizer.encode(["It's 01.01.35!"], sequence_length=20, add_end=True)
    >>> tokenizer.decode(ids).numpy().tolist()
    [b"It's 01.01.35!"]
    >>> tokenizer.decode(tokenizer.encode("Ça va ?", 20)).numpy().decode("utf-8")
    'Ça va ?'
    """

    # How a piece marks the start of a word (`keras_attention.text.word_pieces`).
    word_continuation = "leading_space"

    def __init__(self, vocabulary, unknown_pieces="subwords"):
        """Checks the vocabulary; makes the lookup table and the text of every id."""
        super().__init__(name="reversible_tokenizer")
        check_vocabulary(vocabulary)
        if unknown_pieces not in UNKNOWN_PIECES:
            raise ValueError(
                f"`unknown_pieces` must be one of {UNKNOWN_PIECES}. "
                f"Received: unknown_pieces={unknown_pieces!r}"
            )
        expected_head = list(SPECIAL_TOKENS) + [_byte_token(value) for value in range(NUM_BYTES)]
        if list(vocabulary[: len(expected_head)]) != expected_head:
            raise ValueError(
                "`vocabulary` must start with the special tokens "
                f"{list(SPECIAL_TOKENS)} and the byte tokens <0x00> ... <0xFF>, as "
                f"`ReversibleTokenizer.train` makes it. Received: vocabulary={vocabulary[:6]!r}..."
            )
        self._set_vocabulary(vocabulary)
        self._num_head = len(expected_head)
        # What each id stands for in text: byte tokens are their raw byte,
        # special tokens nothing (they are dropped before joining anyway).
        surfaces = [b""] * len(SPECIAL_TOKENS) + [bytes([value]) for value in range(NUM_BYTES)]
        surfaces += [token.encode("utf-8") for token in self._vocabulary[self._num_head :]]
        self._surfaces = tf.constant(surfaces, dtype=tf.string)
        learned = self._vocabulary[self._num_head :]
        self._unknown_pieces = unknown_pieces
        self._longest_subword = (
            min(LONGEST_SUBWORD, max((len(token) for token in learned), default=1))
            if unknown_pieces == "subwords"
            else 1
        )
        self._piece_ids = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(
                tf.constant(learned or [""], dtype=tf.string),
                tf.constant(
                    list(range(self._num_head, len(self._vocabulary))) if learned else [-1],
                    dtype=tf.int32,
                ),
            ),
            default_value=-1,
        )

    @classmethod
    def train(cls, texts, vocabulary_size, min_frequency=2, progress=None):
        """Learn a vocabulary from text: every character, the commonest pieces, then subwords.

        Room the characters and the pieces seen `min_frequency` times leave
        in the vocabulary goes to subwords of the other pieces, learned by
        byte-pair merges (`learn_subword_merges`): the parts a rare word
        shares with others, such as those of a compound.

        Args:
            texts: a list of strings, or a `tf.data.Dataset` of strings
                (scalars or batches).
            vocabulary_size: largest number of tokens, the 4 special and
                256 byte tokens included; the vocabulary comes out smaller
                when the text has fewer distinct characters and pieces.
            min_frequency: pieces seen fewer times than this are left to be
                spelled with subwords; subwords are learned where seen this
                many times and at least `MIN_SUBWORD_COUNT` (50).
            progress: None, or an object whose `add(count)` is called with
                the texts counted so far, batch by batch (a
                `keras_attention.progress.ProgressBar`).

        Returns:
            a `ReversibleTokenizer`.

        Example:

        >>> from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
        >>> tokenizer = ReversibleTokenizer.train(["one two", "two one", "one"], 300)
        >>> tokenizer.vocabulary[260:]  # " two", "two" and " one" are seen once only
        ['o', 'n', 'e', ' ', 't', 'w', 'one']
        >>> tokenizer.tokenize(["two one"]).to_list()  # " one" is " " and "one"
        [[264, 265, 260, 263, 266]]
        """
        num_head = len(SPECIAL_TOKENS) + NUM_BYTES
        if (
            isinstance(vocabulary_size, bool)
            or not isinstance(vocabulary_size, int)
            or vocabulary_size <= num_head
        ):
            raise ValueError(
                f"`vocabulary_size` must be an integer larger than {num_head} (the special "
                f"and byte tokens). Received: vocabulary_size={vocabulary_size!r}"
            )
        check_positive_int("min_frequency", min_frequency)
        piece_counts = collections.Counter()
        for batch in text_batches(texts):
            piece_counts.update(split_pieces(batch).flat_values.numpy().tolist())
            if progress is not None:
                progress.add(int(batch.shape[0]))
        character_counts = collections.Counter()
        for piece, count in piece_counts.items():
            for character in piece.decode("utf-8"):
                character_counts[character] += count
        # Counter.most_common keeps first-seen order among ties: deterministic.
        learned = [character for character, _ in character_counts.most_common()]
        known = set(learned)
        rare = {}  # piece -> count, of the pieces left to subwords
        for piece, count in piece_counts.most_common():
            text = piece.decode("utf-8")
            if count < min_frequency:
                if len(rare) < MAX_RARE_PIECES:
                    rare[text] = count
            elif text not in known:
                learned.append(text)
                known.add(text)
        learned = learned[: vocabulary_size - num_head]
        learned += learn_subword_merges(
            rare,
            vocabulary_size - num_head - len(learned),
            known,
            max(min_frequency, MIN_SUBWORD_COUNT),
        )
        head = list(SPECIAL_TOKENS) + [_byte_token(value) for value in range(NUM_BYTES)]
        return cls(head + learned)

    @property
    def pad_id(self):
        """Id of the padding token: always 0."""
        return 0

    @property
    def unknown_id(self):
        """Id of `[UNK]`; kept for the vocabulary layout, never produced by `encode`."""
        return 1

    @property
    def start_id(self):
        """Id of the start-of-sequence token."""
        return 2

    @property
    def end_id(self):
        """Id of the end-of-sequence token."""
        return 3

    def tokenize(self, strings):
        """Ids of each string, unpadded, without special tokens.

        Args:
            strings: `tf.string` tensor `(B,)` or a list of strings.

        Returns:
            int32 `tf.RaggedTensor` `(B, None)`.

        Example:

        >>> from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
        >>> tokenizer = ReversibleTokenizer.train(["ab ab ab"], 300)
        >>> tokenizer.vocabulary[260:]
        ['a', 'b', ' ', ' ab']
        >>> # "ab" is spelled "a", "b"; " abc" is " ab" and "c", unknown: its byte, 4 + 99
        >>> tokenizer.tokenize(["ab abc"]).to_list()
        [[260, 261, 263, 103]]
        """
        pieces = split_pieces(strings)  # (B, P) ragged
        ids = self._piece_ids_with_fallback(pieces.flat_values)  # (P, None)
        return pieces.with_flat_values(ids).merge_dims(1, 2)  # (B, None)

    @property
    def unknown_pieces(self):
        """How a piece the vocabulary does not hold whole is spelled: "subwords" or "characters"."""
        return self._unknown_pieces

    def _piece_ids_with_fallback(self, pieces):
        """Ids `(P, None)` ragged of pieces `(P,)`: the piece, else its subwords, else bytes."""
        return _ids_with_fallback(self._piece_ids.lookup(pieces), pieces, self._subword_ids)

    def _subword_ids(self, pieces):
        """Ids `(P, None)` of unknown pieces `(P,)`: the longest tokens held, else bytes."""
        ids, tokens = longest_match_ids(pieces, self._piece_ids, self._longest_subword)
        flat = _ids_with_fallback(ids.flat_values, tokens.flat_values, _byte_ids)  # (N, None)
        return ids.with_flat_values(flat).merge_dims(1, 2)  # (P, None)

    def decode(self, ids):
        """Turn ids back into text, one string per row.

        Reading stops at the first end token; padding and start tokens are
        dropped, and the pieces are joined as they are (they carry their
        spaces). Leading and trailing spaces are trimmed, as `encode` never
        makes them. The text is always valid UTF-8: byte tokens that do not
        form a whole character (which a model may produce) become U+FFFD.

        Args:
            ids: integer ids `(B, T)` or `(T,)`: a tensor (also symbolic), a
                NumPy array or nested lists.

        Returns:
            `tf.string` tensor `(B,)`, or a scalar for `(T,)` ids.

        Example:

        >>> from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
        >>> tokenizer = ReversibleTokenizer.train(["a b"], 300)
        >>> tokenizer.vocabulary[260:]
        ['a', ' ', 'b']
        >>> tokenizer.decode([[2, 260, 261, 262, 3, 260]]).numpy().tolist()
        [b'a b']
        >>> tokenizer.decode([260, 4 + 0xC3]).numpy().decode("utf-8")  # half of "é"
        'a\ufffd'
        """
        batch, single = check_ids(ids)  # (B, T)
        after_end = from_end_on(batch, self.end_id)  # (B, T)
        in_range = (batch >= 0) & (batch < self.vocabulary_size)
        surfaces = tf.gather(self._surfaces, tf.where(in_range, batch, 0))  # (B, T)
        surfaces = tf.where(after_end, "", surfaces)
        text = tf.strings.strip(tf.strings.reduce_join(surfaces, axis=1))  # (B,)
        # A model may emit byte tokens that do not form whole characters:
        # each broken sequence becomes U+FFFD, so the result is valid UTF-8.
        text = tf.strings.unicode_transcode(text, "UTF-8", "UTF-8", errors="replace")
        return text[0] if single else text

    def save(self, directory):
        """Write the vocabulary to `directory/vocabulary.json` (tokens may hold any character).

        The file holds `{"tokens": [...], "unknown_pieces": "subwords"}`; a
        tokenizer that spells unknown pieces with characters writes the bare
        list of tokens, as it was written before subwords were learned.

        Args:
            directory: folder to write to; created if missing.

        Returns:
            str, the path of the vocabulary file.

        Example:

        >>> import tempfile
        >>> from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
        >>> tokenizer = ReversibleTokenizer.train(["a\\u2028b"], 300)
        >>> with tempfile.TemporaryDirectory() as directory:
        ...     path = tokenizer.save(directory)
        ...     (path.endswith("vocabulary.json"),
        ...      ReversibleTokenizer.load(directory).vocabulary == tokenizer.vocabulary)
        (True, True)
        """

        def write(file, tokens):
            if self._unknown_pieces != "characters":
                tokens = {"tokens": tokens, "unknown_pieces": self._unknown_pieces}
            json.dump(tokens, file, ensure_ascii=False, indent=0)

        return self._write_vocabulary(directory, VOCABULARY_FILENAME, write)

    @classmethod
    def load(cls, directory):
        """Make a tokenizer from a vocabulary written by `save`.

        Args:
            directory: folder holding `vocabulary.json`.

        Returns:
            a `ReversibleTokenizer`.
        """
        contents = cls._read_vocabulary(directory, VOCABULARY_FILENAME, json.load)
        if isinstance(contents, list):  # written before subwords were learned
            return cls(contents, unknown_pieces="characters")
        if not isinstance(contents, dict) or "tokens" not in contents:
            raise ValueError(
                f"`directory` must hold a {VOCABULARY_FILENAME} written by `save`: a list of "
                f"tokens or an object with 'tokens'. Received: directory={directory!r}"
            )
        return cls(contents["tokens"], contents.get("unknown_pieces", "subwords"))


def _byte_ids(characters):
    """Ids `(N, 1..4)` ragged of the UTF-8 bytes of strings `(N,)`: byte b has id 4 + b."""
    pieces = tf.strings.bytes_split(characters)  # (N, 1..4) one-byte strings
    values = tf.reshape(tf.io.decode_raw(pieces.flat_values, tf.uint8), [-1])  # (bytes,)
    return pieces.with_flat_values(tf.cast(values, tf.int32) + len(SPECIAL_TOKENS))


def _ids_with_fallback(ids, strings, fallback):
    """Per row: `[ids[i]]` where it is known (>= 0), else `fallback` of `strings[i]`.

    `fallback` runs on the unknown strings only, which are few in text like
    the training text, so the common case costs one lookup.

    Args:
        ids: int32 `(N,)`, -1 where unknown.
        strings: `(N,)` the strings the ids were looked up for.
        fallback: function from strings `(U,)` to int32 ragged ids `(U, None)`.

    Returns:
        int32 ragged `(N, None)`.
    """
    known = tf.where(ids >= 0)[:, 0]  # (K,)
    unknown = tf.where(ids < 0)[:, 0]  # (U,)
    whole = tf.RaggedTensor.from_tensor(tf.gather(ids, known)[:, None])  # (K, 1)
    spelled = fallback(tf.gather(strings, unknown))  # (U, None)
    rows = tf.concat([whole, spelled], axis=0)  # (K + U, None), known rows first
    # Put each row back at its string's position.
    order = tf.math.invert_permutation(tf.cast(tf.concat([known, unknown], axis=0), tf.int32))
    return tf.gather(rows, order)  # (N, None)
