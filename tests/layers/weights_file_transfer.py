"""One model's `.weights.h5` file loaded into another built alike gives the same outputs."""

import os

import numpy as np


def assert_loads_weights_file_of(theirs, ours, inputs, tmp_path):
    """`theirs` saves its weights to a file; `ours` loads it and then answers as `theirs` does."""
    path = os.path.join(tmp_path, "model.weights.h5")
    theirs.save_weights(path)
    ours.load_weights(path)
    np.testing.assert_allclose(ours(inputs), theirs(inputs), atol=1e-5)
