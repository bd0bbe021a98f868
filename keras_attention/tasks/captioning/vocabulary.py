"""A captioner's vocabulary and caption length, learned from its training captions.

`train_caption_vocabulary` learns (and saves) a `ReversibleTokenizer` of the
training captions; `caption_length` gives the tokens a model reads and
writes, enough for `LENGTH_PERCENTILE` percent of the captions;
`caption_token_ids` lists the tokens a captioner predicts, from which
`keras_attention.losses.prior_cross_entropy` computes the loss of a model
that ignores the image. Each reads caption strings (the training captions,
or a sample of them: `DatasetSplits.sample`), never an image.

Example:

>>> import tempfile
>>> from keras_attention.tasks.captioning.vocabulary import (
...     caption_length, train_caption_vocabulary)
>>> captions = ["a red circle", "a blue square", "a red square"] * 2
>>> tokenizer = train_caption_vocabulary(captions, 300, tempfile.mkdtemp())
learning the caption vocabulary: 6 captions in ...
>>> caption_length(captions, tokenizer)  # three words and the start (or end) token
4
"""

import os

import numpy as np

from keras_attention.data.length_limits import covering_length
from keras_attention.progress import ProgressBar
from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
from keras_attention.validation import check_positive_int

# The longest caption decoded when no length is given, in tokens.
MAX_DEFAULT_LENGTH = 40
# Captions tokenized at once while measuring them.
_TEXT_BATCH = 1024


def _tokenized(captions, encoder):
    """The ids of `captions`, `_TEXT_BATCH` at a time: ragged `(B, None)` batches."""
    for start in range(0, len(captions), _TEXT_BATCH):
        yield encoder.tokenize(list(captions[start : start + _TEXT_BATCH]))


def train_caption_vocabulary(captions, vocabulary_size, output_dir):
    """A vocabulary of the training captions, saved under `output_dir/vocabulary`.

    Args:
        captions: the training captions (or a sample of them), a list of str.
        vocabulary_size: the most tokens, special and byte tokens included.
        output_dir: the run's folder.

    Returns:
        the trained `ReversibleTokenizer`.
    """
    with ProgressBar("learning the caption vocabulary", len(captions), "captions") as bar:
        tokenizer = ReversibleTokenizer.train(list(captions), vocabulary_size, progress=bar)
    tokenizer.save(os.path.join(output_dir, "vocabulary"))
    return tokenizer


def caption_lengths(captions, encoder):
    """The tokens of each caption, without start and end tokens: an int array.

    Example:

    >>> from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
    >>> from keras_attention.tasks.captioning.vocabulary import caption_lengths
    >>> tokenizer = ReversibleTokenizer.train(["a b", "a b"], 300)
    >>> caption_lengths(["a b", "a"], tokenizer).tolist()
    [2, 1]
    """
    lengths = [tokens.row_lengths().numpy() for tokens in _tokenized(captions, encoder)]
    return np.concatenate(lengths) if lengths else np.zeros(0, np.int64)


def caption_length(captions, encoder, max_length=None):
    """The tokens per caption a model reads and writes: `max_length` if given.

    Otherwise the tokens `LENGTH_PERCENTILE` percent of the training
    captions fit (`covering_length`), plus the start (or end) token, at most
    `MAX_DEFAULT_LENGTH`.

    Args:
        captions: the training captions (or a sample), a list of str.
        encoder: the captions' tokenizer.
        max_length: the user's length, or None.

    Returns:
        int.
    """
    check_positive_int("max_length", max_length, allow_none=True)
    if max_length is not None:
        return max_length
    fitting = covering_length(caption_lengths(captions, encoder)) + 1
    return min(fitting, MAX_DEFAULT_LENGTH)


def caption_token_ids(captions, encoder):
    """The tokens a captioner predicts over the training captions: theirs and an end token each.

    Args:
        captions: the training captions (or a sample), a list of str.
        encoder: the captions' tokenizer (`tokenize` and `end_id`).

    Returns:
        a list of int arrays, for `prior_cross_entropy` (the unigram loss).

    Example:

    >>> from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
    >>> from keras_attention.tasks.captioning.vocabulary import caption_token_ids
    >>> tokenizer = ReversibleTokenizer.train(["a b", "a b"], 300)
    >>> int(sum(len(ids) for ids in caption_token_ids(["a b", "a"], tokenizer)))  # 3 words, 2 ends
    5
    """
    token_ids = []
    for tokens in _tokenized(captions, encoder):
        token_ids += [tokens.flat_values.numpy(), np.full(tokens.nrows(), encoder.end_id)]
    return token_ids
