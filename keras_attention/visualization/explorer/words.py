"""Subword pieces to whole words, with the attention between them pooled to match."""

import numpy as np

from keras_attention.text.word_pieces import SPECIAL_TOKENS
from keras_attention.text.word_pieces import as_pieces
from keras_attention.text.word_pieces import group_pieces


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
        continuation: "leading_space", "wordpiece" or "sentencepiece".
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
        as_pieces(source_pieces, "source_pieces"), continuation, special_tokens
    )
    target_words, target_index = group_pieces(
        as_pieces(target_pieces, "target_pieces"), continuation, special_tokens
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
    pieces = as_pieces(pieces, "pieces")
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
