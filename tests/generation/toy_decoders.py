"""Hand-made decoder adapters with fixed logits tables, and NumPy references.

`TableDecoder` chooses the logits of the next token from a table indexed by
(example kind, position, token before the previous one, previous token), so
the search has to keep each hypothesis' own history in its cache. Its
attention at position i is one-hot at `(previous token + i) % S`, hidden
where the source is padding.
"""

import itertools

import numpy as np
import tensorflow as tf
from keras import ops

from keras_attention.generation.decoding_protocol import DecoderAdapter

PAD, START, END = 0, 1, 2


class TableDecoder(DecoderAdapter):
    """Logits `tables[kind, index, before_previous, previous]`, kind = inputs[:, 0] - 1."""

    def __init__(self, tables, count_steps=False):
        self.tables = np.asarray(tables, "float32")  # (kinds, L, V, V, V)
        self.kinds, self.max_length, vocabulary, _, _ = self.tables.shape[:5]
        self.vocabulary_size = vocabulary
        self.traces = 0
        self.steps = tf.Variable(0) if count_steps else None

    def encode(self, inputs):
        self.traces += 1
        inputs = ops.cast(inputs, "int32")
        return {"kind": inputs[:, 0] - 1, "memory_mask": ops.not_equal(inputs, 0)}

    def initial_cache(self, encoder_state, batch_size, max_length):
        return {"before_previous": ops.zeros((batch_size,), "int32")}

    def step(self, token_ids, index, cache, encoder_state):
        if self.steps is not None:
            self.steps.assign_add(1)
        vocabulary = self.vocabulary_size
        flat = self.tables.reshape(-1, vocabulary)
        kind = encoder_state["kind"]
        history = cache["before_previous"] * vocabulary + token_ids
        row = (kind * self.max_length + index) * vocabulary * vocabulary + history
        logits = ops.take(flat, row, axis=0)  # (B, V)
        mask = encoder_state["memory_mask"]
        length = mask.shape[1]
        attention = ops.one_hot((token_ids + index) % length, length) * ops.cast(mask, "float32")
        return logits, {"before_previous": token_ids}, attention


def log_softmax(logits):
    shifted = logits - logits.max(-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


def sequence_log_prob(tables, kind, sequence):
    """sum_t log p(y_t | y_<t) of a produced sequence under `TableDecoder`, padding excluded."""
    before_previous, previous, total = 0, START, 0.0
    for index, token in enumerate(sequence):
        logits = tables[kind, index, before_previous, previous].astype("float64")
        logits[PAD] = -np.inf  # the search never produces padding
        total += log_softmax(logits)[token]
        before_previous, previous = previous, token
    return total


def gnmt_penalty(length, alpha):
    return ((5.0 + length) / 6.0) ** alpha


def brute_force_best(tables, kind, max_length, alpha):
    """The best sequence over every possible output, and its normalised score."""
    vocabulary = tables.shape[-1]
    others = [token for token in range(vocabulary) if token not in (PAD, END)]
    candidates = []
    for length in range(1, max_length + 1):
        for prefix in itertools.product(others, repeat=length - 1):
            candidates.append(list(prefix) + [END])
    candidates.extend(list(prefix) for prefix in itertools.product(others, repeat=max_length))
    scored = [
        (sequence_log_prob(tables, kind, sequence) / gnmt_penalty(len(sequence), alpha), sequence)
        for sequence in candidates
    ]
    score, sequence = max(scored, key=lambda item: item[0])
    return sequence, score


def expected_attention(sequence, length, mask):
    """The attention rows `TableDecoder` gives when it produces `sequence`."""
    rows = np.zeros((len(sequence), length), "float32")
    previous = START
    for index, token in enumerate(sequence):
        rows[index, (previous + index) % length] = 1.0
        previous = token
    return rows * mask[None, :]


def padded(sequence, max_length):
    return list(sequence) + [PAD] * (max_length - len(sequence))
