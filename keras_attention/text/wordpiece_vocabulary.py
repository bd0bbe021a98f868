"""Learn a WordPiece vocabulary from text with keras-hub."""

import keras_hub

from keras_attention.text.text_batches import text_batches

DEFAULT_RESERVED_TOKENS = ("[PAD]", "[UNK]", "[START]", "[END]")


def train_wordpiece_vocabulary(texts, vocabulary_size, reserved_tokens=DEFAULT_RESERVED_TOKENS):
    """Learn a WordPiece vocabulary whose first entries are the reserved tokens.

    Text is split on whitespace and punctuation, keeping case and accents; words
    the vocabulary does not hold whole are covered by pieces, continuation pieces
    starting with "##". The vocabulary may come out smaller than
    `vocabulary_size` when the text has few distinct words.

    Args:
        texts: a list of strings, or a `tf.data.Dataset` of strings (scalars
            or batches).
        vocabulary_size: largest number of entries, reserved tokens included.
        reserved_tokens: tokens placed first, in this order, so the first one
            (the padding token, "[PAD]") gets id 0.

    Returns:
        list of str, the vocabulary in id order.

    Example:

    >>> from keras_attention.text.wordpiece_vocabulary import train_wordpiece_vocabulary
    >>> vocabulary = train_wordpiece_vocabulary(["the cat sat", "the cat ran"] * 10, 40)
    >>> vocabulary[:4]
    ['[PAD]', '[UNK]', '[START]', '[END]']
    >>> "cat" in vocabulary and "##t" in vocabulary
    True
    """
    if (
        isinstance(reserved_tokens, str)
        or not isinstance(reserved_tokens, (list, tuple))
        or not reserved_tokens
        or len(set(reserved_tokens)) != len(reserved_tokens)
        or not all(isinstance(token, str) and token for token in reserved_tokens)
    ):
        raise ValueError(
            "`reserved_tokens` must be a non-empty sequence of distinct non-empty strings. "
            f"Received: reserved_tokens={reserved_tokens!r}"
        )
    if (
        isinstance(vocabulary_size, bool)
        or not isinstance(vocabulary_size, int)
        or vocabulary_size <= len(reserved_tokens)
    ):
        raise ValueError(
            "`vocabulary_size` must be an integer larger than the number of reserved tokens "
            f"({len(reserved_tokens)}). Received: vocabulary_size={vocabulary_size!r}"
        )
    return keras_hub.tokenizers.compute_word_piece_vocabulary(
        text_batches(texts),
        vocabulary_size,
        reserved_tokens=list(reserved_tokens),
    )
