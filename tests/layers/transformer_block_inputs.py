"""The inputs the Transformer block and stack tests share: two sequences, the second padded.

X (2, 6, 16) is the sequence a block transforms; CONTEXT (2, 5, 12) is what a
decoder attends to; each padding mask marks the real positions (True).
"""

import numpy as np

_rng = np.random.default_rng(0)
X = _rng.normal(size=(2, 6, 16)).astype("float32")
CONTEXT = _rng.normal(size=(2, 5, 12)).astype("float32")
PADDING = np.array([[1] * 6, [1] * 4 + [0] * 2], bool)
CONTEXT_PADDING = np.array([[1] * 5, [1] * 3 + [0] * 2], bool)
