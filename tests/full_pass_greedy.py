"""Reference greedy decoding: the whole model re-run on the prefix at every step.

    tokens = greedy_by_full_passes(model, {"source": sources}, "target", 1, 2, max_length=6)

Slow but independent of any decoding cache: what the cached decoders must match.
"""

import numpy as np


def greedy_by_full_passes(model, context, prefix_name, start_id, end_id, max_length):
    """(B, max_length) argmax tokens of `model({**context, prefix_name: prefix})`.

    The padding id 0 is never produced, and every position after the first
    `end_id` is 0.
    """
    batch_size = len(next(iter(context.values())))
    prefix = np.full((batch_size, 1), start_id)
    for _ in range(max_length):
        logits = np.array(model({**context, prefix_name: prefix}))[:, -1]
        logits[:, 0] = -np.inf  # the padding id is never produced
        prefix = np.concatenate([prefix, logits.argmax(-1)[:, None]], axis=1)
    tokens = prefix[:, 1:]
    ended = np.cumsum(tokens == end_id, axis=1) - (tokens == end_id) > 0  # after the end
    return np.where(ended, 0, tokens)
