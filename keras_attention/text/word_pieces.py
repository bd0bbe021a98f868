"""Subword pieces to whole words: the two rules tokenizers use to mark a word's pieces."""

import numpy as np

# Token rules: how a piece says it continues the word before it.
CONTINUATIONS = ("leading_space", "wordpiece", "sentencepiece")
SENTENCEPIECE_WORD_START = "\u2581"
SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[START]", "[END]")


def as_pieces(pieces, argument):
    """`pieces` as a list of str (bytes decoded as UTF-8); a ValueError names `argument`."""
    if isinstance(pieces, (str, bytes)) or not hasattr(pieces, "__len__") or len(pieces) == 0:
        raise ValueError(
            f"Expected `{argument}` to be a non-empty sequence of token pieces (strings). "
            f"Received: {argument}={pieces!r}"
        )
    return [
        piece.decode("utf-8", errors="replace") if isinstance(piece, bytes) else str(piece)
        for piece in pieces
    ]


def group_pieces(pieces, continuation="leading_space", special_tokens=SPECIAL_TOKENS):
    """Groups subword pieces into whole words.

    Three rules, one per tokenizer family:

    - "leading_space" (`ka.text.ReversibleTokenizer`, whose SentencePiece
      pieces show their word-start mark as a space): a piece that begins
      with whitespace starts a new word; any other piece continues the
      word before it. The word is its pieces joined, with the surrounding
      whitespace stripped: [" It", "'", "s", " ", "0", "1", ".", "0", "1"]
      gives "It's" and "01.01".
    - "wordpiece" (WordPiece, `ka.text.SubwordEncoder`): a piece that begins
      with "##" continues the word before it (the "##" is dropped); every
      other piece starts a new word: ["play", "##ing", "now"] gives
      "playing" and "now".
    - "sentencepiece" (SentencePiece, `ka.text.SentencePieceTokenizer`): a
      piece that begins with "\u2581" starts a new word (the mark is
      dropped); any other piece continues the word before it:
      ["\u2581play", "ing", "\u2581now"] gives "playing" and "now".

    Under both rules the first piece starts a word, and a piece listed in
    `special_tokens` ("[START]", "[END]", ...) is always a word of its own.

    Args:
        pieces: sequence of N pieces (str or UTF-8 bytes).
        continuation: "leading_space", "wordpiece" or "sentencepiece".
        special_tokens: pieces that are words by themselves.

    Returns:
        `(words, word_of_piece)`: the W words (list of str) and an int array
        (N,) giving each piece's word index.

    Example:

    >>> from keras_attention.text.word_pieces import group_pieces
    >>> words, word_of_piece = group_pieces(["It", "'s", " 01", ".", "01"])
    >>> words, word_of_piece.tolist()
    (["It's", '01.01'], [0, 0, 1, 1, 1])
    """
    if continuation not in CONTINUATIONS:
        raise ValueError(
            f"Expected `continuation` to be one of {CONTINUATIONS}. "
            f"Received: continuation={continuation!r}"
        )
    pieces = as_pieces(pieces, "pieces")
    special = set(special_tokens)
    words, word_of_piece = [], []
    previous_special = True  # the first piece always starts a word
    for piece in pieces:
        is_special = piece in special
        if continuation == "leading_space":
            continues = not piece[:1].isspace()
            text = piece
        elif continuation == "sentencepiece":
            continues = not piece.startswith(SENTENCEPIECE_WORD_START)
            text = piece if continues else piece[1:]
        else:
            continues = piece.startswith("##")
            text = piece[2:] if continues else piece
        if is_special or previous_special or not continues:
            words.append(text)
        else:
            words[-1] += text
        word_of_piece.append(len(words) - 1)
        previous_special = is_special
    if continuation == "leading_space":
        words = [word.strip() for word in words]
    return words, np.asarray(word_of_piece, dtype="int64")
