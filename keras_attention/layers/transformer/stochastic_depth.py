"""Stochastic depth: drop a whole residual branch per example while training."""

import keras
from keras import ops

from keras_attention.validation import check_rate
from keras_attention.validation import check_seed


@keras.saving.register_keras_serializable(package="keras_attention")
class StochasticDepth(keras.layers.Layer):
    """Zero a residual branch for a random subset of the batch while training.

    Huang et al., "Deep Networks with Stochastic Depth"
    (https://arxiv.org/abs/1603.09382), as used by DeiT and small-data ViTs:
    each example keeps the branch with probability `1 - rate`, and a kept
    branch is scaled by `1 / (1 - rate)` so the expectation is unchanged. At
    inference the layer is the identity.

    Args:
        rate: probability of dropping the branch, in [0, 1).
        seed: optional int seed.

    Call arguments:
        inputs: the residual branch, (batch, ...).
        training: whether to drop.

    Returns:
        a tensor shaped like `inputs`.

    Example:

    >>> import numpy as np
    >>> import keras_attention as ka
    >>> layer = ka.layers.StochasticDepth(0.5)
    >>> x = np.ones((4, 3, 2), "float32")
    >>> bool(np.all(np.asarray(layer(x)) == 1.0))
    True
    """

    def __init__(self, rate=0.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        check_rate("rate", rate)
        self.rate = float(rate)
        check_seed(seed)
        self.seed = seed
        self.supports_masking = True
        self._seed_generator = keras.random.SeedGenerator(seed) if self.rate > 0 else None

    def call(self, inputs, training=None):
        if not training or self.rate == 0.0:
            return inputs
        batch = ops.shape(inputs)[0]
        # One keep/drop decision per example, broadcast over the other axes.
        shape = (batch,) + (1,) * (len(inputs.shape) - 1)
        keep = keras.random.uniform(shape, seed=self._seed_generator) >= self.rate
        scale = ops.cast(keep, inputs.dtype) / ops.cast(1.0 - self.rate, inputs.dtype)
        return inputs * scale

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "seed": self.seed}
