"""A SentencePiece model learned from text by SentencePiece's C++ trainer, ids laid out for us.

`train_sentencepiece_model` streams the text (whitespace normalised in
TensorFlow, as the tokenizer normalises it before encoding) into
`sentencepiece.SentencePieceTrainer` and returns the model's bytes. The ids
are laid out as `ReversibleTokenizer` reads them: `[PAD]` 0, `[UNK]` 1,
`[START]` 2, `[END]` 3, the 256 byte pieces `<0x00>` ... `<0xFF>` at 4 ...
259 (every character outside the learned pieces is spelled with its UTF-8
bytes), then the learned pieces. Digits are pieces of their own (numbers
and dates stay learnable digit by digit), and the text is not normalised
beyond its whitespace, so that the model's pieces join back into the text.
"""

import io
import itertools
import math
import os
import random
import re

import numpy as np
import tensorflow as tf

from keras_attention.text.frequent_merges import MAX_COUNTED_SENTENCES
from keras_attention.text.frequent_merges import keep_frequent_merges
from keras_attention.text.text_batches import TEXT_BATCH_SIZE
from keras_attention.text.text_batches import text_batches
from keras_attention.text.whitespace import normalize_whitespace_strings

MODEL_TYPES = ("bpe", "unigram")
SPECIAL_PIECES = ("[PAD]", "[UNK]", "[START]", "[END]")
NUM_BYTES = 256
# Sentences SentencePiece learns from, at most: it keeps a uniform sample of
# longer texts. Learning time grows with the sample, the pieces learned
# hardly change past a few hundred thousand sentences.
MAX_SENTENCES = 300_000
# SentencePiece's names of the special pieces, in the order of SPECIAL_PIECES.
_SPECIAL_KINDS = ("pad", "unk", "bos", "eos")
# The `SentencePieceTrainer.train` options every model learned here has, whatever the arguments.
_FIXED_TRAINER_OPTIONS = {
    # Small texts give a smaller vocabulary instead of an error.
    "hard_vocab_limit": False,
    "byte_fallback": True,
    "split_digits": True,
    # The text reaches SentencePiece as the tokenizer hands it over: its
    # whitespace already normalised, nothing else to change.
    "normalization_rule_name": "identity",
    "remove_extra_whitespaces": False,
    # "▁the" at the start of a text as inside it: one piece per word.
    "add_dummy_prefix": True,
    "shuffle_input_sentence": True,
    "minloglevel": 2,
    # The special pieces take the first ids, [PAD] 0 to [END] 3.
    **{f"{kind}_id": index for index, kind in enumerate(_SPECIAL_KINDS)},
    **{f"{kind}_piece": piece for kind, piece in zip(_SPECIAL_KINDS, SPECIAL_PIECES)},
}
# SentencePiece's random seed, fixed so that its sampling is the same from run to run
# wherever it reads the seed.
_SEED = 0


def train_sentencepiece_model(
    texts,
    vocabulary_size,
    model_type="bpe",
    *,
    max_sentences=MAX_SENTENCES,
    character_coverage=1.0,
    min_piece_count=None,
    progress=None,
):
    """Learn a SentencePiece model from `texts`; returns its serialized bytes.

    One function on purpose: its length is this docstring, every argument's
    contract; the code streams the texts into the trainer, its options and its
    error message kept in helpers.

    Args:
        texts: a list (tuple, array) of strings, any other iterable of
            strings, or a `tf.data.Dataset` of strings (scalars or batches).
            Blank texts are skipped.
        vocabulary_size: largest number of pieces, the 4 special and 256
            byte pieces included; the model comes out smaller when the text
            has fewer pieces to learn.
        model_type: `"bpe"` (byte-pair merges) or `"unigram"`.
        max_sentences: the most sentences learned from: a uniform sample of
            them when `texts` has more (all are read).
        character_coverage: the share of the text's characters that get
            pieces of their own, 0.98 to 1.0 (all of them); the rarer ones
            are spelled with bytes.
        min_piece_count: None, or (BPE only) the fewest times a merge must
            be made in the text learned from to be kept: the later, rarer
            merges are left out (`keep_frequent_merges`) and the model
            comes out smaller. The translation scripts ask for
            `frequent_piece_count` of their sentences (50 from 5,000 on).
        progress: None, or an object whose `add(count)` is called with the
            texts read so far, batch by batch (a
            `keras_attention.progress.ProgressBar`).

    Returns:
        bytes, a serialized SentencePiece `ModelProto`.

    Raises:
        ValueError: a bad argument, a corpus without text, or a
            `vocabulary_size` too small for the text's characters.

    Example:

    >>> import sentencepiece
    >>> from keras_attention.text.sentencepiece_training import train_sentencepiece_model
    >>> model = train_sentencepiece_model(["one two", "two one"] * 5, 300)
    >>> processor = sentencepiece.SentencePieceProcessor(model_proto=model)
    >>> [processor.id_to_piece(i) for i in (0, 3, 4, 259)]
    ['[PAD]', '[END]', '<0x00>', '<0xFF>']
    >>> processor.encode("two one two", out_type=str)
    ['▁two', '▁one', '▁two']
    """
    import sentencepiece

    _check_arguments(vocabulary_size, model_type, max_sentences, character_coverage)
    _check_min_piece_count(min_piece_count, model_type)
    sentences = _sentences(texts, progress)
    first = next(sentences, None)
    if first is None:
        raise ValueError(
            "`texts` must hold some text to learn from. "
            "Received: texts with no string that is not blank"
        )
    failures = []  # what reading the text raised: SentencePiece wraps it in a RuntimeError
    # The sentences the merges are counted in: kept only when merges are cut.
    counted = _Reservoir(MAX_COUNTED_SENTENCES) if min_piece_count else None

    def read():
        try:
            for sentence in itertools.chain([first], sentences):
                if counted is not None:
                    counted.add(sentence)
                yield sentence
        except Exception as error:
            failures.append(error)
            raise

    sentencepiece.set_random_generator_seed(_SEED)
    model = io.BytesIO()
    options = _trainer_options(vocabulary_size, model_type, character_coverage, max_sentences)
    try:
        sentencepiece.SentencePieceTrainer.train(
            sentence_iterator=read(), model_writer=model, **options
        )
    except RuntimeError as error:
        if failures:
            raise failures[0] from None
        too_small = _too_small_vocabulary(error, vocabulary_size)
        if too_small is None:
            raise
        raise too_small from None
    if counted is None:
        return model.getvalue()
    # The count asked for is one in the sentences learned from; the sample
    # counted holds a share of them.
    learned_from = min(counted.seen, max_sentences)
    min_count = math.ceil(min_piece_count * len(counted.items) / learned_from)
    return keep_frequent_merges(
        model.getvalue(), counted.items, min_count, len(SPECIAL_PIECES) + NUM_BYTES
    )


def _trainer_options(vocabulary_size, model_type, character_coverage, max_sentences):
    """The `SentencePieceTrainer.train` options of a model: the fixed ones, then the arguments'."""
    return dict(
        _FIXED_TRAINER_OPTIONS,
        vocab_size=vocabulary_size,
        model_type=model_type,
        character_coverage=character_coverage,
        input_sentence_size=max_sentences,
        num_threads=os.cpu_count() or 1,
    )


def _too_small_vocabulary(error, vocabulary_size):
    """The `ValueError` to raise for SentencePiece's `error`, or None if it is another.

    SentencePiece says "Vocabulary size is smaller than required_chars. 300 vs 361."
    """
    needed = re.search(r"required_chars\. \d+ vs (\d+)", str(error))
    if needed is None:
        return None
    return ValueError(
        "`vocabulary_size` must leave room for a piece per distinct character of `texts` "
        f"besides the special and byte pieces: {needed.group(1)} here (or pass a "
        "`character_coverage` from 0.98 to 1.0: the rarer characters are then spelled with "
        "bytes). "
        f"Received: vocabulary_size={vocabulary_size}"
    )


class _Reservoir:
    """A uniform sample of at most `capacity` of the items added (reservoir sampling)."""

    def __init__(self, capacity):
        self.capacity = capacity
        self.items = []
        self.seen = 0
        self._random = random.Random(_SEED)

    def add(self, item):
        self.seen += 1
        if len(self.items) < self.capacity:
            self.items.append(item)
            return
        slot = self._random.randrange(self.seen)
        if slot < self.capacity:
            self.items[slot] = item


def _check_min_piece_count(min_piece_count, model_type):
    """A ValueError unless `min_piece_count` is None or a positive integer, with BPE."""
    if min_piece_count is None:
        return
    if (
        isinstance(min_piece_count, bool)
        or not isinstance(min_piece_count, (int, np.integer))
        or min_piece_count < 1
    ):
        raise ValueError(
            "`min_piece_count` must be None or a positive integer. "
            f"Received: min_piece_count={min_piece_count!r}"
        )
    if model_type != "bpe":
        raise ValueError(
            "`min_piece_count` applies to BPE models only (a unigram model has no merges to "
            f"leave out). Received: min_piece_count={min_piece_count!r} with "
            f"model_type={model_type!r}"
        )


def _check_arguments(vocabulary_size, model_type, max_sentences, character_coverage):
    """A ValueError naming the first bad argument of `train_sentencepiece_model`."""
    head = len(SPECIAL_PIECES) + NUM_BYTES
    if (
        isinstance(vocabulary_size, bool)
        or not isinstance(vocabulary_size, (int, np.integer))
        or vocabulary_size <= head
    ):
        raise ValueError(
            f"`vocabulary_size` must be an integer larger than {head} (the special and byte "
            f"pieces). Received: vocabulary_size={vocabulary_size!r}"
        )
    if model_type not in MODEL_TYPES:
        raise ValueError(
            f"`model_type` must be one of {MODEL_TYPES}. Received: model_type={model_type!r}"
        )
    if (
        isinstance(max_sentences, bool)
        or not isinstance(max_sentences, int)
        or max_sentences <= 100
    ):
        raise ValueError(
            "`max_sentences` must be an integer above 100 (SentencePiece samples no fewer). "
            f"Received: max_sentences={max_sentences!r}"
        )
    if (
        isinstance(character_coverage, bool)
        or not isinstance(character_coverage, (int, float))
        or not 0.98 <= character_coverage <= 1
    ):
        raise ValueError(
            "`character_coverage` must be a number from 0.98 to 1 (SentencePiece's range). "
            f"Received: character_coverage={character_coverage!r}"
        )


def _sentences(texts, progress):
    """The non-blank texts, whitespace normalised, as UTF-8 bytes; `progress.add` per batch."""
    for batch in _string_batches(texts):
        if progress is not None:
            progress.add(int(tf.shape(batch)[0]))
        for text in normalize_whitespace_strings(batch).numpy():
            if text:
                yield text


def _string_batches(texts):
    """`(B,)` string tensors of `texts`: a dataset or a sequence as `text_batches` cuts it."""
    if isinstance(texts, (tf.data.Dataset, list, tuple, np.ndarray)):
        if not isinstance(texts, tf.data.Dataset):
            _check_strings(texts)
        yield from text_batches(texts)
        return
    if isinstance(texts, (str, bytes)) or not hasattr(texts, "__iter__"):
        raise ValueError(
            "`texts` must be a list or another iterable of strings, or a tf.data.Dataset of "
            f"strings. Received: texts={texts!r:.80}"
        )
    iterator = iter(texts)
    while chunk := list(itertools.islice(iterator, TEXT_BATCH_SIZE)):
        _check_strings(chunk)
        yield tf.constant(chunk, dtype=tf.string)


def _check_strings(texts):
    """A ValueError unless every item of the sequence `texts` is a `str` (or UTF-8 bytes)."""
    for text in texts:
        if not isinstance(text, (str, bytes, np.str_, np.bytes_)):
            raise ValueError(
                "`texts` must hold strings. "
                f"Received: texts with an item of type {type(text).__name__}: {text!r:.80}"
            )
