import numpy as np
import pytest
from layer_harness import LayerSpec
from layer_harness import harness_test

from keras_attention.layers.transformer.stochastic_depth import StochasticDepth

X = np.random.default_rng(0).normal(size=(64, 3, 4)).astype("float32")

SPECS = [
    LayerSpec("rate_0.2", StochasticDepth, {"rate": 0.2, "seed": 3}, inputs=[X], trainable=False),
]


test_harness = harness_test(SPECS)


def test_drops_whole_examples_and_rescales_the_rest():
    layer = StochasticDepth(0.25, seed=1)
    out = np.asarray(layer(X, training=True))
    dropped = np.all(out == 0.0, axis=(1, 2))
    kept = ~dropped
    np.testing.assert_allclose(out[kept], X[kept] / 0.75, rtol=1e-6)
    # 64 examples at rate 0.25: some but not all are dropped.
    assert 0 < dropped.sum() < 64


def test_identity_at_inference():
    np.testing.assert_array_equal(np.asarray(StochasticDepth(0.5)(X)), X)


@pytest.mark.parametrize("rate", [-0.1, 1.0, "0.5", True])
def test_bad_rate(rate):
    with pytest.raises(ValueError, match="rate.*Received: rate="):
        StochasticDepth(rate)
