"""Token lists of `vocabulary.json` files read as SentencePiece models: the same ids for every text.

A `ReversibleTokenizer` folder may hold `vocabulary.json`, a list of tokens:
the special tokens, the 256 byte tokens `<0x00>` ... `<0xFF>`, then learned
tokens whose spaces are real spaces (" dog"). The file holds either an
object `{"tokens": [...], "unknown_pieces": "subwords"}` or the bare list,
read with `unknown_pieces="characters"`. Both cut the text into pieces
(`split_pieces`: a run of letters and marks, a single digit or a single
other character, each with the space before it) and read a piece the list
holds whole as that token; they spell the other pieces differently:

- "subwords": from the piece's start, the longest token of at most
  `LONGEST_SUBWORD` characters that starts there, else the character's
  UTF-8 bytes, and on after it. A piece held whole is the longest token at
  its start, and no token reaches over the end of a piece, so this is
  what SentencePiece does with the tokens as user-defined pieces (spaces
  as "▁"): it matches them longest first and spells the rest with bytes.
- "characters": its characters' tokens, else their bytes: SentencePiece
  with the single characters as user-defined pieces.

`token_list_model_proto` makes that SentencePiece model (BPE without
merges, the tokens' ids as its ids); the tokens too long to be matched
inside a piece are unused pieces. Greedy matching cannot say "whole piece
or characters" (a word's token would match inside a longer word), so
where such tokens exist `whole_piece_ids` looks whole pieces up in a table
first and hands the others to the model.

Example:

>>> import json, os, tempfile
>>> from keras_attention.text.vocabulary_json import read_vocabulary_json
>>> path = os.path.join(tempfile.mkdtemp(), "vocabulary.json")
>>> tokens = ["[PAD]", "[UNK]", "[START]", "[END]"] + [f"<0x{b:02X}>" for b in range(256)]
>>> with open(path, "w") as file:
...     json.dump(tokens + ["a", " ", " a"], file)
>>> tokens_read, unknown_pieces = read_vocabulary_json(path)
>>> tokens_read[260:], unknown_pieces
(['a', ' ', ' a'], 'characters')
"""

import json

import tensorflow as tf

from keras_attention.text.sentencepiece_model import WORD_START
from keras_attention.text.sentencepiece_model import sentencepiece_tokenize
from keras_attention.text.sentencepiece_training import NUM_BYTES
from keras_attention.text.sentencepiece_training import SPECIAL_PIECES
from keras_attention.text.tokenizer_base import check_vocabulary

VOCABULARY_FILENAME = "vocabulary.json"
UNKNOWN_PIECES = ("subwords", "characters")
# Longest token "subwords" spelling matches inside a piece, in characters.
LONGEST_SUBWORD = 24
# A piece of either spelling: a run of letters and combining marks, or one other
# character (a digit, punctuation, a symbol), with the space before it if there is one.
_PIECE = r" ?(?:[\pL\pM]+|[^\pL\pM])"
# Put after each piece to split on: the byte 0xFF, which no UTF-8 text holds.
_PIECE_END = b"\xff"


def read_vocabulary_json(path):
    """The tokens of a `vocabulary.json` file and how it spells unknown pieces.

    Args:
        path: the file's path.

    Returns:
        `(tokens, unknown_pieces)`: list of str, and "subwords" or "characters".

    Raises:
        ValueError: naming the file, when it is missing or holds no token list.
    """
    try:
        with open(path, encoding="utf-8") as file:
            contents = json.load(file)
    except FileNotFoundError:
        raise ValueError(
            f"`path` must be a {VOCABULARY_FILENAME} file. Received: path={str(path)!r}, "
            "which does not exist"
        ) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(
            f"`path` must be a {VOCABULARY_FILENAME} file of JSON. Received: path={str(path)!r}, "
            f"which does not parse ({error})"
        ) from None
    if isinstance(contents, list):  # the bare list: spelled by characters
        return contents, "characters"
    if not isinstance(contents, dict) or not isinstance(contents.get("tokens"), list):
        raise ValueError(
            f"`path` must be a {VOCABULARY_FILENAME} file holding a list of tokens or an object "
            f"with 'tokens'. Received: path={str(path)!r}"
        )
    unknown_pieces = contents.get("unknown_pieces", "subwords")
    if unknown_pieces not in UNKNOWN_PIECES:
        raise ValueError(
            f"`path` must be a {VOCABULARY_FILENAME} file whose unknown_pieces is one of "
            f"{UNKNOWN_PIECES}. Received: path={str(path)!r}, unknown_pieces={unknown_pieces!r}"
        )
    return contents["tokens"], unknown_pieces


def longest_matched(unknown_pieces):
    """The most characters of a token matched inside a piece: 24 for "subwords", 1 otherwise."""
    return LONGEST_SUBWORD if unknown_pieces == "subwords" else 1


def token_list_model_proto(tokens, longest=LONGEST_SUBWORD):
    """A SentencePiece model whose ids are `tokens`' ids, spelling text by longest tokens.

    Args:
        tokens: list of distinct tokens: the 4 special tokens, the 256 byte
            tokens `<0x00>` ... `<0xFF>`, then the learned ones.
        longest: tokens of more characters are unused pieces, which
            SentencePiece never matches (`whole_piece_ids` finds them).

    Returns:
        bytes, a serialized SentencePiece `ModelProto` (BPE without merges).

    Example:

    >>> import sentencepiece
    >>> from keras_attention.text.vocabulary_json import token_list_model_proto
    >>> head = ["[PAD]", "[UNK]", "[START]", "[END]"] + [f"<0x{b:02X}>" for b in range(256)]
    >>> model = token_list_model_proto(head + ["a", "b", " ", " ab"])
    >>> processor = sentencepiece.SentencePieceProcessor(model_proto=model)
    >>> processor.encode("ab abc")  # "ab" is "a", "b"; "c" is its byte, 4 + 99
    [260, 261, 263, 103]
    """
    from sentencepiece import sentencepiece_model_pb2

    check_vocabulary(tokens)
    head = list(SPECIAL_PIECES) + [f"<0x{value:02X}>" for value in range(NUM_BYTES)]
    if list(tokens[: len(head)]) != head:
        raise ValueError(
            f"`tokens` must start with the special tokens {list(SPECIAL_PIECES)} and the byte "
            f"tokens <0x00> ... <0xFF>. Received: tokens={list(tokens[:6])!r}..."
        )
    piece_type = sentencepiece_model_pb2.ModelProto.SentencePiece
    proto = sentencepiece_model_pb2.ModelProto()
    trainer = proto.trainer_spec
    trainer.model_type = sentencepiece_model_pb2.TrainerSpec.BPE
    trainer.vocab_size = len(tokens)
    trainer.byte_fallback = True
    trainer.pad_id, trainer.unk_id, trainer.bos_id, trainer.eos_id = 0, 1, 2, 3
    trainer.pad_piece, trainer.unk_piece, trainer.bos_piece, trainer.eos_piece = SPECIAL_PIECES
    normalizer = proto.normalizer_spec
    normalizer.name = "identity"
    normalizer.add_dummy_prefix = False  # a text's first token has no leading space
    normalizer.remove_extra_whitespaces = False
    normalizer.escape_whitespaces = True
    for index, token in enumerate(tokens):
        piece = proto.pieces.add()
        if index < len(SPECIAL_PIECES):
            piece.piece = token
            piece.type = piece_type.UNKNOWN if index == 1 else piece_type.CONTROL
        elif index < len(head):
            piece.piece, piece.type = token, piece_type.BYTE
        elif WORD_START in token:
            # SentencePiece reads a "▁" in text as a space: no text reaches this token
            # (its "▁" may also clash with a space written as "▁"), so it keeps its id only.
            piece.piece, piece.type = f"<unreachable {index}>", piece_type.CONTROL
        else:
            piece.piece = token.replace(" ", WORD_START)
            piece.type = piece_type.USER_DEFINED if len(token) <= longest else piece_type.UNUSED
    return proto.SerializeToString()


def split_pieces(texts):
    """Cut whitespace-normalised strings into pieces, each with its leading space.

    A piece is a run of letters (and combining marks), a single digit, or a
    single other character (punctuation, symbols), with the space before
    it if there is one; joining a row's pieces gives its text back.

    Args:
        texts: `tf.string` tensor `(B,)`, whitespace runs already one space.

    Returns:
        `tf.RaggedTensor` of strings `(B, None)`.

    Example:

    >>> from keras_attention.text.vocabulary_json import split_pieces
    >>> split_pieces(["it's 15.04, ok"]).to_list()
    [[b'it', b"'", b's', b' 1', b'5', b'.', b'0', b'4', b',', b' ok']]
    """
    marked = tf.strings.regex_replace(texts, f"({_PIECE})", b"\\1" + _PIECE_END)  # (B,)
    pieces = tf.strings.split(marked, sep=_PIECE_END)  # (B, None), "" after the last piece
    return tf.ragged.boolean_mask(pieces, tf.not_equal(pieces, ""))


def whole_piece_table(tokens):
    """Lookup table from each learned token (after the byte tokens) to its id, -1 if absent."""
    first = len(SPECIAL_PIECES) + NUM_BYTES
    learned = list(tokens[first:]) or [""]  # a table needs a key
    return tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(
            tf.constant(learned, dtype=tf.string),
            tf.range(first, first + len(learned), dtype=tf.int32),
        ),
        default_value=-1,
    )


def whole_piece_ids(texts, table, model_proto):
    """Ids of each piece: its token if `table` holds it whole, else the model's spelling.

    Args:
        texts: `tf.string` tensor `(B,)`, whitespace normalised.
        table: `whole_piece_table` of the tokens.
        model_proto: `token_list_model_proto(tokens, ...)`.

    Returns:
        int32 `tf.RaggedTensor` `(B, None)`.
    """
    pieces = split_pieces(texts)  # (B, P)
    flat = pieces.flat_values  # (P,)
    whole = table.lookup(flat)  # (P,), -1 where the piece is not a token
    held = whole >= 0
    whole_ids = tf.ragged.boolean_mask(whole[:, None], held[:, None])  # (P, 0 or 1)
    # A piece held whole is not spelled ("" has no ids).
    spelled = sentencepiece_tokenize(model_proto, tf.where(held, "", flat), tf.int32)  # (P, None)
    ids = tf.concat([whole_ids, spelled], axis=1)  # (P, None)
    return pieces.with_flat_values(ids).merge_dims(1, 2)  # (B, None)
