"""A toy translation task: 2..5 tokens in 3..11 copied, or reversed, between START and END.

    inputs, labels = toy_translation_task(64, reverse=True)

`inputs` holds "source" (B, 6) and "target" (B, 7), START then the output
tokens; `labels` (B, 7) is the output tokens then END; 0 pads all three.
"""

import numpy as np

START, END = 1, 2


def toy_translation_task(examples, reverse=False, seed=0):
    """({"source", "target"}, labels) for `examples` random sequences."""
    rng = np.random.default_rng(seed)
    source = np.zeros((examples, 6), "int32")
    target = np.zeros((examples, 7), "int32")
    labels = np.zeros((examples, 7), "int32")
    for row in range(examples):
        tokens = rng.integers(3, 12, size=rng.integers(2, 6))
        output = tokens[::-1] if reverse else tokens
        source[row, : len(tokens)] = tokens
        target[row, : len(tokens) + 1] = [START, *output]
        labels[row, : len(tokens) + 1] = [*output, END]
    return {"source": source, "target": target}, labels
