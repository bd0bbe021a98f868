"""Subword pieces to whole words, with the attention between them pooled to match."""

import numpy as np

# Token rules: how a piece says it continues the word before it.
CONTINUATIONS = ("leading_space", "wordpiece")
SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[START]", "[END]")


def _as_pieces(pieces, argument):
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

    Two rules, one per tokenizer family:

    - "leading_space" (`ka.text.ReversibleTokenizer`, byte-level BPE): a
      piece that begins with whitespace starts a new word; any other piece
      continues the word before it. The word is its pieces joined, with the
      surrounding whitespace stripped: ["It", "'s", " 01", ".", "01"] gives
      "It's" and "01.01".
    - "wordpiece" (WordPiece, `ka.text.SubwordEncoder`): a piece that begins
      with "##" continues the word before it (the "##" is dropped); every
      other piece starts a new word: ["play", "##ing", "now"] gives
      "playing" and "now".

    Under both rules the first piece starts a word, and a piece listed in
    `special_tokens` ("[START]", "[END]", ...) is always a word of its own.

    Args:
        pieces: sequence of N pieces (str or UTF-8 bytes).
        continuation: "leading_space" or "wordpiece".
        special_tokens: pieces that are words by themselves.

    Returns:
        `(words, word_of_piece)`: the W words (list of str) and an int array
        (N,) giving each piece's word index.

    Example:

    >>> from keras_attention.visualization.explorer.words import group_pieces
    >>> words, word_of_piece = group_pieces(["It", "'s", " 01", ".", "01"])
    >>> words, word_of_piece.tolist()
    (["It's", '01.01'], [0, 0, 1, 1, 1])
    """
    if continuation not in CONTINUATIONS:
        raise ValueError(
            f"Expected `continuation` to be one of {CONTINUATIONS}. "
            f"Received: continuation={continuation!r}"
        )
    pieces = _as_pieces(pieces, "pieces")
    special = set(special_tokens)
    words, word_of_piece = [], []
    previous_special = True  # the first piece always starts a word
    for piece in pieces:
        is_special = piece in special
        if continuation == "leading_space":
            continues = not piece[:1].isspace()
            text = piece
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


def words_and_attention(
    source_pieces,
    target_pieces,
    attention,
    continuation="leading_space",
    special_tokens=SPECIAL_TOKENS,
):
    """Whole words from subword pieces, with the attention pooled to words.

    Pieces are grouped into words by `group_pieces` (see there for the two
    rules, "leading_space" for `ReversibleTokenizer` and "wordpiece" for
    WordPiece's "##" pieces). The attention between pieces becomes attention
    between words so that every row still sums as before:

    - source side (columns, what is attended to): the weights of a word's
      pieces are summed, as a word gets all the attention its pieces got;
    - target side (rows, who attends): a word's row is the mean of its
      pieces' rows.

    For self-attention pass the same pieces twice:
    `words_and_attention(source_pieces, source_pieces, encoder_attention)`.

    Args:
        source_pieces: the S source pieces (str or bytes), the last axis.
        target_pieces: the T target pieces, the second-to-last axis.
        attention: (..., T, S) weights, e.g. (layers, heads, T, S).
        continuation: "leading_space" or "wordpiece".
        special_tokens: pieces that are always words of their own.

    Returns:
        `(source_words, target_words, word_attention)`: lists of S' and T'
        words and a float64 array (..., T', S').

    Example:

    >>> import numpy as np
    >>> from keras_attention.visualization.explorer.words import words_and_attention
    >>> attention = np.array([[0.1, 0.2, 0.3, 0.4],
    ...                       [0.4, 0.3, 0.2, 0.1],
    ...                       [0.0, 0.0, 0.5, 0.5]])  # (T=3, S=4) pieces
    >>> source, target, pooled = words_and_attention(
    ...     ["It", "'s", " 01", ".01"], ["C'", "est", " 01.01"], attention)
    >>> source, target
    (["It's", '01.01'], ["C'est", '01.01'])
    >>> pooled.round(3).tolist()  # columns summed, rows averaged
    [[0.5, 0.5], [0.0, 1.0]]
    >>> source, target, pooled = words_and_attention(
    ...     ["la", "mai", "##son"], ["play", "##ing", "now"], attention[:, :3],
    ...     continuation="wordpiece")
    >>> source, target
    (['la', 'maison'], ['playing', 'now'])
    >>> pooled.round(3).tolist()
    [[0.25, 0.5], [0.0, 0.5]]
    """
    source_words, source_index = group_pieces(
        _as_pieces(source_pieces, "source_pieces"), continuation, special_tokens
    )
    target_words, target_index = group_pieces(
        _as_pieces(target_pieces, "target_pieces"), continuation, special_tokens
    )
    weights = np.asarray(attention, dtype="float64")
    expected = (len(target_index), len(source_index))
    if weights.ndim < 2 or weights.shape[-2:] != expected:
        raise ValueError(
            "Expected `attention` to have shape (..., len(target_pieces), len(source_pieces)) "
            f"= (..., {expected[0]}, {expected[1]}). Received: attention.shape={weights.shape}"
        )
    # (S, S') sums a word's columns; (T', T) averages a word's rows.
    summing = np.zeros((len(source_index), len(source_words)))
    summing[np.arange(len(source_index)), source_index] = 1.0
    averaging = np.zeros((len(target_words), len(target_index)))
    averaging[target_index, np.arange(len(target_index))] = 1.0
    averaging /= averaging.sum(axis=1, keepdims=True)
    pooled = averaging @ weights @ summing  # (..., T', S')
    return source_words, target_words, pooled


def word_maps(pieces, maps, continuation="leading_space", special_tokens=SPECIAL_TOKENS):
    """Whole words from the pieces of a caption, with one map per word.

    A word's map is the mean of its pieces' maps, as `words_and_attention`
    does for the target side of a translation.

    Args:
        pieces: the T pieces (str or bytes) of a generated text.
        maps: (T, ...) one map per piece, e.g. (T, h, w) attention over an
            image's feature grid.
        continuation: "leading_space" or "wordpiece" (see `group_pieces`).
        special_tokens: pieces that are always words of their own.

    Returns:
        `(words, word_maps)`: the W words and a float array (W, ...).

    Example:

    >>> import numpy as np
    >>> from keras_attention.visualization.explorer.words import word_maps
    >>> words, maps = word_maps(["a", " re", "d"], np.array([[1.0], [0.0], [1.0]]))
    >>> words, maps[:, 0].tolist()
    (['a', 'red'], [1.0, 0.5])
    """
    maps = np.asarray(maps, dtype="float64")
    pieces = _as_pieces(pieces, "pieces")
    if maps.ndim < 1 or maps.shape[0] != len(pieces):
        raise ValueError(
            "Expected one map per piece, maps.shape[0] == len(pieces). "
            f"Received: len(pieces)={len(pieces)}, maps.shape={maps.shape}"
        )
    words, word_of_piece = group_pieces(pieces, continuation, special_tokens)
    pooled = np.stack([maps[word_of_piece == word].mean(axis=0) for word in range(len(words))])
    return words, pooled


def whole_word_example(example, continuation="leading_space", special_tokens=SPECIAL_TOKENS):
    """A translation explorer example with its pieces joined into words.

    Every attention kind is pooled as `words_and_attention` pools: cross
    attention from target to source words, encoder self-attention from
    source to source words, decoder self-attention from target to target
    words.

    Args:
        example: dict with `"source_tokens"`, `"target_tokens"` (pieces) and
            `"cross_attention"` `(..., T, S)`, optionally
            `"encoder_attention"` `(..., S, S)` and `"decoder_attention"`
            `(..., T, T)`, as `write_translation_explorer` takes it.
        continuation: "leading_space" or "wordpiece" (see `group_pieces`).
        special_tokens: pieces that are always words of their own.

    Returns:
        A new dict of the same keys, over words.

    Example:

    >>> import numpy as np
    >>> from keras_attention.visualization.explorer.words import whole_word_example
    >>> example = whole_word_example({
    ...     "source_tokens": ["a", " re", "d"], "target_tokens": ["ro", "jo"],
    ...     "cross_attention": np.array([[[[0.5, 0.25, 0.25], [0.0, 0.5, 0.5]]]])})
    >>> example["source_tokens"], example["target_tokens"]
    (['a', 'red'], ['rojo'])
    >>> example["cross_attention"].tolist()
    [[[[0.25, 0.75]]]]
    """
    pieces = {side: example[f"{side}_tokens"] for side in ("source", "target")}
    pairs = {
        "cross_attention": ("target", "source"),
        "encoder_attention": ("source", "source"),
        "decoder_attention": ("target", "target"),
    }
    result = dict(example)
    for key, (rows, columns) in pairs.items():
        if key not in example:
            continue
        column_words, row_words, pooled = words_and_attention(
            pieces[columns], pieces[rows], example[key], continuation, special_tokens
        )
        result[key] = pooled
        result[f"{columns}_tokens"], result[f"{rows}_tokens"] = column_words, row_words
    return result
