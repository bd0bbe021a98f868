"""A captioner's vocabulary and caption length, learned from its training captions.

`train_caption_vocabulary` learns (and saves) a `ReversibleTokenizer` of the
frequent words of the `(image, caption)` training pairs; `caption_length`
gives the tokens a model must read and write to fit the longest caption;
`caption_token_ids` lists the tokens a captioner predicts, from which
`keras_attention.losses.prior_cross_entropy` computes the loss of a
model that ignores the image.

Example:

>>> import tempfile
>>> import numpy as np
>>> import tensorflow as tf
>>> from keras_attention.tasks.captioning.vocabulary import (
...     caption_length, train_caption_vocabulary)
>>> captions = ["a red circle", "a blue square", "a red square"] * 2
>>> pairs = tf.data.Dataset.from_tensor_slices((np.zeros((6, 8, 8, 3), "float32"), captions))
>>> tokenizer = train_caption_vocabulary(pairs, 300, tempfile.mkdtemp())
learning the caption vocabulary: 6 captions in ... s
>>> caption_length(pairs, tokenizer)  # three words and the start (or end) token
4
"""

import os

import numpy as np
import tensorflow as tf

from keras_attention.progress import ProgressBar
from keras_attention.progress import dataset_size
from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
from keras_attention.validation import check_positive_int

# The longest caption decoded when no length is given, in tokens.
MAX_DEFAULT_LENGTH = 40
# Captions tokenized at once while reading the training set.
_TEXT_BATCH = 1024
# Tokens a caption is encoded to while measuring it: longer captions are counted as this.
_MEASURED_LENGTH = 256


def _captions(pairs):
    return pairs.map(lambda image, text: text)


def train_caption_vocabulary(train_pairs, vocabulary_size, output_dir):
    """A vocabulary of the training captions' words, saved under `output_dir/vocabulary`.

    Args:
        train_pairs: a `tf.data.Dataset` of `(image, caption)` pairs.
        vocabulary_size: the most tokens, special and byte tokens included.
        output_dir: the run's folder.

    Returns:
        the trained `ReversibleTokenizer`.
    """
    with ProgressBar(
        "learning the caption vocabulary", dataset_size(train_pairs), "captions"
    ) as bar:
        tokenizer = ReversibleTokenizer.train(_captions(train_pairs), vocabulary_size, progress=bar)
    tokenizer.save(os.path.join(output_dir, "vocabulary"))
    return tokenizer


def longest_caption(train_pairs, encoder):
    """Tokens of the longest training caption plus one.

    The one is the start token the caption is read after, or the end token
    it is written with.

    Args:
        train_pairs: a `tf.data.Dataset` of `(image, caption)` pairs.
        encoder: the captions' tokenizer (`encode(texts, length)` gives
            padded ids, 0 for padding).

    Returns:
        int.
    """
    lengths = (
        _captions(train_pairs)
        .batch(_TEXT_BATCH)
        .map(
            lambda texts: tf.reduce_sum(
                tf.cast(encoder.encode(texts, _MEASURED_LENGTH) > 0, tf.int32), axis=1
            )
        )
    )
    return int(max(np.max(batch) for batch in lengths.as_numpy_iterator())) + 1


def caption_length(train_pairs, encoder, max_length=None):
    """The tokens per caption a model reads and writes: `max_length` if given.

    Otherwise the longest training caption plus its start (or end) token,
    at most `MAX_DEFAULT_LENGTH`.

    Args:
        train_pairs: a `tf.data.Dataset` of `(image, caption)` pairs.
        encoder: the captions' tokenizer.
        max_length: the user's length, or None.

    Returns:
        int.
    """
    check_positive_int("max_length", max_length, allow_none=True)
    if max_length is not None:
        return max_length
    return min(longest_caption(train_pairs, encoder), MAX_DEFAULT_LENGTH)


def caption_token_ids(train_pairs, encoder):
    """The tokens a captioner predicts over the training captions: theirs and an end token each.

    Args:
        train_pairs: a `tf.data.Dataset` of `(image, caption)` pairs.
        encoder: the captions' tokenizer (`tokenize` and `end_id`).

    Returns:
        a list of int arrays, for `prior_cross_entropy` (the unigram loss).

    Example:

    >>> import numpy as np
    >>> import tensorflow as tf
    >>> from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
    >>> from keras_attention.tasks.captioning.vocabulary import caption_token_ids
    >>> tokenizer = ReversibleTokenizer.train(["a b", "a b"], 300)
    >>> pairs = tf.data.Dataset.from_tensor_slices((np.zeros((2, 1)), ["a b", "a"]))
    >>> int(sum(len(ids) for ids in caption_token_ids(pairs, tokenizer)))  # 3 words, 2 ends
    5
    """
    token_ids = []
    for texts in _captions(train_pairs).batch(_TEXT_BATCH):
        tokens = encoder.tokenize(texts)  # (B, None)
        token_ids += [tokens.flat_values.numpy(), np.full(len(texts), encoder.end_id)]
    return token_ids
