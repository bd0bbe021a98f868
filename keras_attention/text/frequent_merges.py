"""A BPE model cut back to the merges its text makes often enough for a model to learn.

SentencePiece's BPE trainer merges until the vocabulary is full, so on a
small or repetitive corpus its last merges join pieces seen a handful of
times: two parts of a compound, a word and its neighbour's first letters.
A translation model meets such a piece too seldom to learn it, yet the
piece replaces the well-learned parts wherever it matches. Sennrich et al.
("Neural Machine Translation of Rare Words with Subword Units", 2016)
recommend a vocabulary threshold of 50; `keep_frequent_merges` keeps the
merges whose piece the text holds at least that many times when it is
first made.

BPE merges are learned most frequent first, so a model cut to its first `k`
merges is the model SentencePiece learns with `k` merges, and the count of
merge `k`'s piece in the text encoded with that model is how often the
merge was made. These counts fall (almost always) from merge to merge: a
binary search finds the last frequent one in about ten encodings of the
text.
"""

import math

from keras_attention.text.sentencepiece_model import parse_model_proto

# Fewest times a merge's piece must be made to be kept: the vocabulary
# threshold Sennrich et al. recommend.
FREQUENT_PIECE_COUNT = 50
# Below FREQUENT_PIECE_COUNT * this many sentences, the count asked for
# shrinks with the text (at least twice), so that a corpus of a few hundred
# sentences keeps its whole words instead of being spelled letter by letter.
SENTENCES_PER_SIGHTING = 100
# Sentences counted at most: a uniform sample of longer texts, the count
# scaled to the whole (counting is one encoding of the sample per step of
# the search).
MAX_COUNTED_SENTENCES = 20_000


def frequent_piece_count(num_sentences):
    """How often a merge must be made in `num_sentences` sentences to be kept.

    `FREQUENT_PIECE_COUNT` (50) from 5,000 sentences on; below, one sighting
    per `SENTENCES_PER_SIGHTING` sentences, and at least 2.

    Example:

    >>> from keras_attention.text.frequent_merges import frequent_piece_count
    >>> [frequent_piece_count(n) for n in (10, 180, 2_000, 5_000, 4_500_000)]
    [2, 2, 20, 50, 50]
    """
    return min(FREQUENT_PIECE_COUNT, max(2, math.ceil(num_sentences / SENTENCES_PER_SIGHTING)))


def keep_frequent_merges(model_proto, sentences, min_count, num_head):
    """`model_proto` (a BPE model) without its merges made fewer than `min_count` times.

    Args:
        model_proto: a serialized BPE `ModelProto` as SentencePiece's trainer
            writes it: `num_head` special and byte pieces, the merged pieces
            in the order they were learned, then the single characters.
        sentences: the texts (UTF-8 bytes or str) to count merges in, as the
            model was learned from them.
        min_count: fewest times a merge must be made in `sentences`.
        num_head: how many pieces precede the merged ones.

    Returns:
        bytes, the serialized model with the merges after the last frequent
        one left out: `model_proto` itself when every merge is frequent.

    Example:

    >>> import sentencepiece
    >>> from keras_attention.text.frequent_merges import keep_frequent_merges
    >>> from keras_attention.text.sentencepiece_training import train_sentencepiece_model
    >>> texts = ["sun flower"] * 60 + ["sunflower"] * 3
    >>> model = train_sentencepiece_model(texts, 300)
    >>> def pieces(model, text):
    ...     processor = sentencepiece.SentencePieceProcessor(model_proto=model)
    ...     return processor.encode(text, out_type=str)
    >>> pieces(model, "sunflower")  # the last merge, made 3 times
    ['▁sunflower']
    >>> frequent = keep_frequent_merges(model, texts, 50, 260)
    >>> pieces(frequent, "sunflower")  # its parts, each made 63 times
    ['▁sun', 'flower']
    """
    import sentencepiece

    proto = parse_model_proto(model_proto)
    num_merges = _num_merges(proto, num_head)
    if num_merges == 0:
        return model_proto
    sentences = list(sentences)

    def frequent(count_merges):
        """Whether the last of the first `count_merges` merges is made `min_count` times."""
        if count_merges == 0:
            return True
        model = _with_merges(proto, num_head, num_merges, count_merges)
        processor = sentencepiece.SentencePieceProcessor(model_proto=model.SerializeToString())
        last_id = num_head + count_merges - 1
        made = sum(ids.count(last_id) for ids in processor.encode(sentences))
        return made >= min_count

    if frequent(num_merges):
        return model_proto
    kept, too_many = 0, num_merges  # frequent(kept) holds, frequent(too_many) does not
    while too_many - kept > 1:
        middle = (kept + too_many) // 2
        if frequent(middle):
            kept = middle
        else:
            too_many = middle
    return _with_merges(proto, num_head, num_merges, kept).SerializeToString()


def _num_merges(proto, num_head):
    """How many merged pieces follow the head: the single characters close the model."""
    end = len(proto.pieces)
    while end > num_head and len(proto.pieces[end - 1].piece) == 1:
        end -= 1
    return end - num_head


def _with_merges(proto, num_head, num_merges, count_merges):
    """A copy of `proto` keeping its first `count_merges` merged pieces."""
    from sentencepiece import sentencepiece_model_pb2

    model = sentencepiece_model_pb2.ModelProto()
    model.CopyFrom(proto)
    del model.pieces[num_head + count_merges : num_head + num_merges]
    model.trainer_spec.vocab_size = len(model.pieces)
    return model
