"""Subwords for the pieces a vocabulary cannot hold whole, learned by byte-pair merges.

A word-level vocabulary spells a rare word with its characters: a German
compound such as "Sonnenblumenfeld" becomes 16 tokens, and a model has to
keep count of where it is inside the word. `learn_subword_merges` learns, from
the rare pieces and how often each was seen, the character sequences they
share ("Sonnen", "blumen", "feld"), by repeatedly joining the most frequent
pair of neighbouring symbols (Sennrich et al., "Neural Machine Translation of
Rare Words with Subword Units", https://arxiv.org/abs/1508.07909).

Example:

>>> from keras_attention.text.subword_merges import learn_subword_merges
>>> counts = {" Sonnenfeld": 3, " Sonnenhaus": 2, " Feldhaus": 2}
>>> learn_subword_merges(counts, 6, known=set())
[' S', 'on', 'ne', 'el', ' Son', 'nen']
"""

import collections

from keras_attention.validation import check_non_negative_int
from keras_attention.validation import check_positive_int


def learn_subword_merges(piece_counts, max_new_tokens, known, min_frequency=2):
    """New tokens made by merging frequent neighbouring symbols of `piece_counts`' pieces.

    Each piece starts as its characters. At every step the pair of
    neighbouring symbols seen most often (each piece weighted by its count;
    ties go to the pair seen first) is joined into one symbol everywhere, and
    the joined string becomes a new token unless `known` already holds it.
    Learning stops when `max_new_tokens` are made or no pair is seen
    `min_frequency` times.

    Args:
        piece_counts: mapping from piece (str) to how many times it was seen,
            in a fixed order (the order ties are broken in).
        max_new_tokens: most tokens to return (0 returns none).
        known: set of tokens the vocabulary holds already; not returned again.
        min_frequency: a pair seen fewer times than this is not joined.

    Returns:
        list of str: the new tokens, in the order they were made.
    """
    check_positive_int("min_frequency", min_frequency)
    check_non_negative_int("max_new_tokens", max_new_tokens)
    words = [list(piece) for piece in piece_counts if len(piece) > 1]
    counts = [count for piece, count in piece_counts.items() if len(piece) > 1]
    pair_counts = collections.Counter()
    pair_words = collections.defaultdict(set)  # pair -> indices of the words holding it
    for index, symbols in enumerate(words):
        _count_pairs(symbols, counts[index], index, pair_counts, pair_words)
    new_tokens, known = [], set(known)
    while len(new_tokens) < max_new_tokens and pair_counts:
        # Counter.most_common keeps first-seen order among ties: deterministic.
        pair, frequency = pair_counts.most_common(1)[0]
        if frequency < min_frequency:
            break
        joined = pair[0] + pair[1]
        for index in sorted(pair_words[pair]):
            old_pairs = collections.Counter(zip(words[index], words[index][1:]))
            words[index] = _join_pair(words[index], pair, joined)
            new_pairs = collections.Counter(zip(words[index], words[index][1:]))
            # Only the pairs around the joined symbols change: count those.
            new_pairs.subtract(old_pairs)
            for changed, difference in new_pairs.items():
                if difference:
                    _add_pair(changed, difference * counts[index], index, pair_counts, pair_words)
        if joined not in known:
            known.add(joined)
            new_tokens.append(joined)
    return new_tokens


def _count_pairs(symbols, weight, index, pair_counts, pair_words):
    """Adds `weight` to the count of every neighbouring pair of `symbols` (word `index`)."""
    for pair in zip(symbols, symbols[1:]):
        _add_pair(pair, weight, index, pair_counts, pair_words)


def _add_pair(pair, weight, index, pair_counts, pair_words):
    """Adds `weight` to `pair`'s count, seen in word `index`; forgets a pair counted to 0."""
    pair_counts[pair] += weight
    if weight > 0:
        pair_words[pair].add(index)
    elif pair_counts[pair] <= 0:
        del pair_counts[pair]
        pair_words.pop(pair, None)


def _join_pair(symbols, pair, joined):
    """`symbols` with each non-overlapping occurrence of `pair`, left to right, made one symbol."""
    result, position = [], 0
    while position < len(symbols):
        if (
            position + 1 < len(symbols)
            and symbols[position] == pair[0]
            and symbols[position + 1] == pair[1]
        ):
            result.append(joined)
            position += 2
        else:
            result.append(symbols[position])
            position += 1
    return result
