"""learn_subword_merges against byte-pair encoding recounted from scratch at every step."""

import collections
import random

import pytest

from keras_attention.text.subword_merges import learn_subword_merges


def _reference_merges(piece_counts, max_new_tokens, known, min_frequency):
    """Sennrich et al.'s algorithm, every pair counted again after each merge."""
    words = {piece: list(piece) for piece in piece_counts}
    new_tokens, known = [], set(known)
    while len(new_tokens) < max_new_tokens:
        counts, first_seen = collections.Counter(), {}
        for piece, symbols in words.items():
            for pair in zip(symbols, symbols[1:]):
                counts[pair] += piece_counts[piece]
                first_seen.setdefault(pair, len(first_seen))
        if not counts:
            break
        best = max(counts.values())
        if best < min_frequency:
            break
        # Among equal counts, which pair goes first is an implementation choice:
        # the caller is handed all of them.
        tied = [pair for pair in counts if counts[pair] == best]
        pair = yield tied  # the caller picks one of them
        joined = pair[0] + pair[1]
        for piece, symbols in words.items():
            merged, index = [], 0
            while index < len(symbols):
                if index + 1 < len(symbols) and (symbols[index], symbols[index + 1]) == pair:
                    merged.append(joined)
                    index += 2
                else:
                    merged.append(symbols[index])
                    index += 1
            words[piece] = merged
        if joined not in known:
            known.add(joined)
            new_tokens.append(joined)
        yield joined


def _check_against_reference(piece_counts, max_new_tokens, known, min_frequency):
    """Replays our merges through the reference: each must be one of its most frequent pairs."""
    ours = learn_subword_merges(piece_counts, max_new_tokens, known, min_frequency)
    reference = _reference_merges(piece_counts, max_new_tokens, known, min_frequency)
    replayed, expected_new = [], set(known)
    tied = next(reference, None)
    position = 0
    while tied is not None:
        joined_choices = {a + b: (a, b) for a, b in tied}
        # Our next merge is the next new token, unless it merged a known token: find
        # a tied pair that makes our next token, or one whose join is already known.
        target = ours[position] if position < len(ours) else None
        if target in joined_choices:
            pair = joined_choices[target]
        else:
            known_joins = [pair for pair in tied if pair[0] + pair[1] in expected_new]
            assert known_joins, f"merge {position}: ours {target!r} is not among {tied}"
            pair = known_joins[0]
        joined = reference.send(pair)
        if joined not in expected_new:
            expected_new.add(joined)
            replayed.append(joined)
            position += 1
        tied = next(reference, None)
    assert ours == replayed


def test_compound_parts_are_learned():
    counts = {}
    parts = ["sonnen", "blumen", "feld", "haus", "wasser", "berg"]
    rng = random.Random(0)
    for _ in range(300):
        chosen = rng.sample(parts, 3)
        counts[" " + "".join(chosen)] = counts.get(" " + "".join(chosen), 0) + 1
    tokens = learn_subword_merges(counts, 200, known=set())
    assert {"sonnen", "blumen", "feld", "haus", "wasser", "berg"} <= set(tokens)


@pytest.mark.parametrize("seed", range(6))
def test_matches_byte_pair_encoding_recounted_at_every_step(seed):
    rng = random.Random(seed)
    alphabet = "abcde é"
    counts = {}
    for _ in range(rng.randint(5, 40)):
        piece = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))
        counts[piece] = rng.randint(1, 4)
    known = {"ab", "e"} if seed % 2 else set()
    _check_against_reference(counts, rng.randint(0, 30), known, min_frequency=rng.randint(1, 3))


def test_stops_at_min_frequency_and_skips_known_tokens():
    counts = {"abab": 1, "cd": 1}
    # "ab" is seen twice (in one piece): joined; "abab" then once: not joined.
    assert learn_subword_merges(counts, 10, known=set(), min_frequency=2) == ["ab"]
    # Joining "ab" still happens when it is known, so "abab" can follow at min_frequency 1.
    assert learn_subword_merges(counts, 10, known={"ab"}, min_frequency=1) == ["cd", "abab"]
    assert learn_subword_merges(counts, 0, known=set()) == []


@pytest.mark.parametrize(
    "arguments, message",
    [
        (dict(max_new_tokens=-1), r"`max_new_tokens` must be .* Received: max_new_tokens=-1"),
        (dict(max_new_tokens=True), r"`max_new_tokens` must be .* Received: max_new_tokens=True"),
        (dict(max_new_tokens=3, min_frequency=0), r"`min_frequency`"),
    ],
)
def test_rejects_bad_arguments(arguments, message):
    with pytest.raises(ValueError, match=message):
        learn_subword_merges({"ab": 2}, known=set(), **arguments)
