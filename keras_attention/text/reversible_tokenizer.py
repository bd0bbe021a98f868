"""A tokenizer whose ids decode back to the exact text: a SentencePiece model with byte pieces.

`ReversibleTokenizer.train` learns a SentencePiece model with SentencePiece's
C++ trainer (`keras_attention.text.sentencepiece_training`): pieces carry the
space before them ("▁dog", shown as " dog"), digits are pieces of their own,
and a character the model lacks is spelled with its UTF-8 bytes, so every
string has ids and decodes back unchanged but for its whitespace runs
(`normalize_whitespace`). The model's ids are the tokenizer's ids: 0 padding,
1 unknown (never produced), 2 start, 3 end, 4 ... 259 the bytes.

Encoding runs tensorflow-text's SentencePiece op, so it traces into
`tf.data` pipelines and SavedModel signatures; loading such a SavedModel
needs `import tensorflow_text` first (TensorFlow Serving has the op built
in). Decoding is TensorFlow string ops alone.
"""

import json
import os

import tensorflow as tf

from keras_attention.text.id_rows import check_ids
from keras_attention.text.id_rows import from_end_on
from keras_attention.text.sentencepiece_model import WORD_START
from keras_attention.text.sentencepiece_model import parse_model_proto
from keras_attention.text.sentencepiece_model import read_model_file
from keras_attention.text.sentencepiece_model import read_model_into_op
from keras_attention.text.sentencepiece_model import sentencepiece_tokenize
from keras_attention.text.sentencepiece_model import write_model_file
from keras_attention.text.sentencepiece_training import NUM_BYTES
from keras_attention.text.sentencepiece_training import SPECIAL_PIECES
from keras_attention.text.sentencepiece_training import train_sentencepiece_model
from keras_attention.text.tokenizer_base import FixedLengthEncoder
from keras_attention.text.vocabulary_json import UNKNOWN_PIECES
from keras_attention.text.vocabulary_json import VOCABULARY_FILENAME
from keras_attention.text.vocabulary_json import longest_matched
from keras_attention.text.vocabulary_json import read_vocabulary_json
from keras_attention.text.vocabulary_json import token_list_model_proto
from keras_attention.text.vocabulary_json import whole_piece_ids
from keras_attention.text.vocabulary_json import whole_piece_table
from keras_attention.text.whitespace import normalize_whitespace_strings
from keras_attention.validation import check_bool

MODEL_FILENAME = "reversible_tokenizer.model"
SETTINGS_FILENAME = "reversible_tokenizer.json"


class ReversibleTokenizer(FixedLengthEncoder, tf.Module):
    """Encodes text into padded ids and decodes ids back into the same text.

    The ids are those of a SentencePiece model (`model_proto`) laid out as
    `train` makes it: `[PAD]` (id 0), `[UNK]`, `[START]`, `[END]`, the 256
    byte pieces `<0x00>` ... `<0xFF>`, then the learned pieces. Encoding
    normalises whitespace (`normalize_whitespace`) and cuts the text with
    the model; a character it lacks becomes its UTF-8 bytes, so
    `decode(encode(text)) == normalize_whitespace(text)` for every string,
    however little of it the model holds ("[UNK]" is never produced). The
    one exception: SentencePiece writes a space as U+2581 ("▁"), so a "▁" in
    the text comes back as a space.

    `vocabulary` shows each piece as the text it stands for, the space mark
    as a space (" dog"): a piece that begins with a space begins a word
    (`word_continuation = "leading_space"`).

    It is a `tf.Module`: an object that holds it (an exported `tf.Module`,
    a Keras layer) saves what it holds (the table of whole pieces, where it
    has one); the SentencePiece model is a constant of the graphs that
    encode.

    Args:
        model_proto: bytes of a SentencePiece model with the id layout
            above, as `train` makes (`model_proto` of another tokenizer).
        whole_pieces: look each piece of the text (a run of letters with
            its leading space, a digit, another character) up whole first
            and spell only the others with the model, as token lists of
            `vocabulary.json` files are read (`from_tokens`).

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

    def __init__(self, model_proto, whole_pieces=False):
        """Checks the model and its id layout; makes the SentencePiece op and each id's text."""
        super().__init__(name="reversible_tokenizer")
        proto = parse_model_proto(model_proto)
        check_bool("whole_pieces", whole_pieces)
        _check_layout(proto)
        read_model_into_op(model_proto)  # once per model and process, quietly
        self._model_proto = model_proto
        self._whole_pieces = whole_pieces
        self._set_vocabulary([_token_text(piece) for piece in proto.pieces])
        if whole_pieces:
            self._whole_piece_table = whole_piece_table(self._vocabulary)
        # What each id stands for in text: byte pieces their raw byte, special
        # pieces nothing (decoding drops them).
        self._surfaces = tf.constant([_surface(piece) for piece in proto.pieces], tf.string)

    @classmethod
    def train(cls, texts, vocabulary_size, model_type="bpe", **training_options):
        """Learn a SentencePiece model from text (`train_sentencepiece_model`): its tokenizer.

        Args:
            texts: a list of strings, any iterable of strings, or a
                `tf.data.Dataset` of strings (scalars or batches).
            vocabulary_size: largest number of tokens, the 4 special and
                256 byte tokens included; the vocabulary comes out smaller
                when the text has fewer pieces to learn.
            model_type: `"bpe"` (byte-pair merges: fast to learn) or
                `"unigram"` (slightly fewer tokens per text, learned many
                times slower).
            **training_options: `max_sentences`, `character_coverage`,
                `min_piece_count` and `progress`, documented (and checked)
                once, by `train_sentencepiece_model`.

        Returns:
            a `ReversibleTokenizer`.

        Example:

        >>> from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
        >>> tokenizer = ReversibleTokenizer.train(["one two", "two one", "one"], 300)
        >>> tokenizer.vocabulary[:3], tokenizer.vocabulary[4], tokenizer.vocabulary[259]
        (['[PAD]', '[UNK]', '[START]'], '<0x00>', '<0xFF>')
        >>> [tokenizer.vocabulary[i] for i in tokenizer.tokenize(["two one"]).to_list()[0]]
        [' two', ' one']
        """
        return cls(
            train_sentencepiece_model(texts, vocabulary_size, model_type, **training_options)
        )

    @classmethod
    def from_tokens(cls, tokens, unknown_pieces="subwords"):
        """The tokenizer of a token list as `vocabulary.json` holds it, with the same ids.

        Args:
            tokens: the special tokens, the 256 byte tokens, then the
                learned ones, their spaces real spaces.
            unknown_pieces: how text the tokens do not hold whole is spelled:
                `"subwords"` (the longest tokens, left to right) or
                `"characters"` (see `keras_attention.text.vocabulary_json`).

        Returns:
            a `ReversibleTokenizer`.

        Example:

        >>> from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
        >>> head = ["[PAD]", "[UNK]", "[START]", "[END]"] + [f"<0x{b:02X}>" for b in range(256)]
        >>> tokens = head + ["a", "b", " ", " ab"]
        >>> ReversibleTokenizer.from_tokens(tokens).tokenize(["ab abc"]).to_list()
        [[260, 261, 263, 103]]
        >>> by_characters = ReversibleTokenizer.from_tokens(tokens, "characters")
        >>> by_characters.tokenize(["ab abc"]).to_list()  # " abc" is not a token: " ", "a", ...
        [[260, 261, 262, 260, 261, 103]]
        """
        if unknown_pieces not in UNKNOWN_PIECES:
            raise ValueError(
                f"`unknown_pieces` must be one of {UNKNOWN_PIECES}. "
                f"Received: unknown_pieces={unknown_pieces!r}"
            )
        longest = longest_matched(unknown_pieces)
        model_proto = token_list_model_proto(tokens, longest)
        # Tokens too long to be matched inside a piece are found whole only.
        first = len(SPECIAL_PIECES) + NUM_BYTES
        whole_pieces = any(len(token) > longest for token in tokens[first:])
        return cls(model_proto, whole_pieces=whole_pieces)

    pad_id = property(lambda self: 0, doc="Id of the padding token: always 0.")
    unknown_id = property(lambda self: 1, doc="Id of `[UNK]`: in the layout, never produced.")
    start_id = property(lambda self: 2, doc="Id of the start-of-sequence token.")
    end_id = property(lambda self: 3, doc="Id of the end-of-sequence token.")
    model_proto = property(lambda self: self._model_proto, doc="The SentencePiece model (bytes).")
    whole_pieces = property(
        lambda self: self._whole_pieces, doc="Whether pieces are looked up whole first."
    )

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
        ['ab', ' ab', ' a', 'a', 'b', ' ']
        >>> # " abc": " ab", then "c", which the model lacks: its byte, 4 + 99
        >>> tokenizer.tokenize(["ab  abc"]).to_list()
        [[261, 261, 103]]
        """
        texts = normalize_whitespace_strings(strings)  # (B,)
        if self._whole_pieces:
            return whole_piece_ids(texts, self._whole_piece_table, self._model_proto)
        return sentencepiece_tokenize(self._model_proto, texts, tf.int32)  # (B, None)

    def decode(self, ids):
        """Turn ids back into text, one string per row.

        Reading stops at the first end token; padding, start and unknown
        tokens are dropped, byte pieces become their bytes and the other
        pieces the text they stand for. The text is always valid UTF-8:
        byte pieces that do not form a whole character (which a model may
        produce) become U+FFFD.

        Args:
            ids: integer ids `(B, T)` or `(T,)`: a tensor (also symbolic), a
                NumPy array or nested lists.

        Returns:
            `tf.string` tensor `(B,)`, or a scalar for `(T,)` ids.

        Example:

        >>> from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
        >>> tokenizer = ReversibleTokenizer.train(["a b"], 300)
        >>> tokenizer.vocabulary[260:]
        [' a', ' b', ' ', 'a', 'b']
        >>> tokenizer.decode([[2, 260, 261, 3, 260]]).numpy().tolist()
        [b'a b']
        >>> tokenizer.decode([260, 4 + 0xC3]).numpy().decode("utf-8")  # half of "é"
        'a\\ufffd'
        """
        batch, single = check_ids(ids)  # (B, T)
        after_end = from_end_on(batch, self.end_id)  # (B, T)
        in_range = (batch >= 0) & (batch < self.vocabulary_size)
        surfaces = tf.gather(self._surfaces, tf.where(in_range, batch, 0))  # (B, T)
        surfaces = tf.where(after_end, "", surfaces)
        # The first piece's space (SentencePiece's mark of a word start) goes.
        text = tf.strings.strip(tf.strings.reduce_join(surfaces, axis=1))  # (B,)
        # Byte pieces that do not form whole characters: each broken sequence
        # becomes U+FFFD, so the result is valid UTF-8.
        text = tf.strings.unicode_transcode(text, "UTF-8", "UTF-8", errors="replace")
        return text[0] if single else text

    def save(self, directory):
        """Write the SentencePiece model and a note of how it is read into `directory`.

        `reversible_tokenizer.model` is the SentencePiece model (the
        `sentencepiece` package and tensorflow-text read it too);
        `reversible_tokenizer.json` holds `vocabulary_size` and `whole_pieces`.

        Args:
            directory: folder to write to; created if missing.

        Returns:
            str, the path of the model file.

        Example:

        >>> import os, tempfile
        >>> from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
        >>> tokenizer = ReversibleTokenizer.train(["a\\u2028b"], 300)
        >>> with tempfile.TemporaryDirectory() as directory:
        ...     path = tokenizer.save(directory)
        ...     (sorted(os.listdir(directory)),
        ...      ReversibleTokenizer.load(directory).vocabulary == tokenizer.vocabulary)
        (['reversible_tokenizer.json', 'reversible_tokenizer.model'], True)
        """
        path = write_model_file(os.path.join(directory, MODEL_FILENAME), self._model_proto)
        settings = {"vocabulary_size": self.vocabulary_size, "whole_pieces": self._whole_pieces}
        with open(os.path.join(directory, SETTINGS_FILENAME), "w", encoding="utf-8") as file:
            json.dump(settings, file, indent=1)
        return path

    @classmethod
    def load(cls, directory):
        """The tokenizer `save` wrote into `directory`, or that of a `vocabulary.json` there.

        Args:
            directory: folder holding `reversible_tokenizer.model` and
                `reversible_tokenizer.json`, or a `vocabulary.json` token
                list (`from_tokens` reads it, with the ids it gave).

        Returns:
            a `ReversibleTokenizer`.

        Raises:
            ValueError: naming the file that is missing, damaged or of
                another layout.
        """
        settings_path = os.path.join(str(directory), SETTINGS_FILENAME)
        model_path = os.path.join(str(directory), MODEL_FILENAME)
        if not os.path.isfile(settings_path):
            vocabulary_path = os.path.join(str(directory), VOCABULARY_FILENAME)
            if os.path.isfile(vocabulary_path):
                return cls.from_tokens(*read_vocabulary_json(vocabulary_path))
            raise ValueError(
                f"`directory` must hold {MODEL_FILENAME} and {SETTINGS_FILENAME} (or a "
                f"{VOCABULARY_FILENAME}) written by `save`. Received: directory={str(directory)!r}"
            )
        with open(settings_path, encoding="utf-8") as file:
            settings = json.load(file)
        tokenizer = cls(
            _checked_model(read_model_file(model_path), model_path),
            settings.get("whole_pieces", False),
        )
        if tokenizer.vocabulary_size != settings.get("vocabulary_size"):
            raise ValueError(
                f"`directory` must hold the model its {SETTINGS_FILENAME} describes. Received: "
                f"{model_path!r} of {tokenizer.vocabulary_size} pieces, where "
                f"{SETTINGS_FILENAME} says {settings.get('vocabulary_size')}"
            )
        return tokenizer


def _checked_model(model_proto, path):
    """`model_proto` when it is a SentencePiece model of the layout; a ValueError names `path`."""
    _check_layout(parse_model_proto(model_proto, path), path)
    return model_proto


def _check_layout(proto, name="model_proto"):
    """A ValueError unless the model's ids are laid out as `ReversibleTokenizer` reads them."""
    from sentencepiece import sentencepiece_model_pb2

    piece_type = sentencepiece_model_pb2.ModelProto.SentencePiece
    head = len(SPECIAL_PIECES) + NUM_BYTES
    types = [piece.type for piece in proto.pieces[:head]]
    normalizer = proto.normalizer_spec
    if (
        len(proto.pieces) <= head
        or [piece.piece for piece in proto.pieces[: len(SPECIAL_PIECES)]] != list(SPECIAL_PIECES)
        or types[1] != piece_type.UNKNOWN
        or any(types[index] != piece_type.CONTROL for index in (0, 2, 3))
        or any(kind != piece_type.BYTE for kind in types[len(SPECIAL_PIECES) :])
        or not proto.trainer_spec.byte_fallback
        or normalizer.precompiled_charsmap
        or normalizer.remove_extra_whitespaces
        or not normalizer.escape_whitespaces
    ):
        raise ValueError(
            f"`{name}` must be a SentencePiece model laid out as `ReversibleTokenizer.train` "
            f"makes it: {list(SPECIAL_PIECES)}, the byte pieces <0x00> ... <0xFF> and learned "
            "pieces, byte fallback on, text not normalised. Received: a model whose first "
            f"pieces are {[piece.piece for piece in proto.pieces[:6]]}"
        )


def _is_text(piece):
    """Whether a piece stands for text (learned, user-defined, unused): not special, not a byte."""
    return piece.type in (piece.NORMAL, piece.USER_DEFINED, piece.UNUSED)


def _token_text(piece):
    """A piece as `vocabulary` shows it: special and byte pieces by name, "▁" as a space."""
    return piece.piece.replace(WORD_START, " ") if _is_text(piece) else piece.piece


def _surface(piece):
    """The bytes a piece stands for in text: nothing for special pieces, a byte piece's byte."""
    if piece.type == piece.BYTE:
        return bytes([int(piece.piece[3:5], 16)])  # "<0xC3>"
    return _token_text(piece).encode("utf-8") if _is_text(piece) else b""
