"""PatchMerging against a NumPy reference, and the shared harness."""

import numpy as np
import pytest
from layer_harness import LayerSpec
from layer_harness import harness_test
from numpy_swin import patch_merging

from keras_attention import layers
from keras_attention.layers.vision.patch_merging import PatchMerging

RNG = np.random.default_rng(3)


def test_is_exported():
    assert layers.PatchMerging is PatchMerging


@pytest.mark.parametrize("shape", [(2, 4, 6, 3), (1, 5, 3, 4)])
def test_matches_the_numpy_reference(shape):
    layer = PatchMerging()
    layer.build(shape)
    for variable in layer.weights:
        variable.assign(RNG.normal(size=variable.shape).astype("float32"))
    x = RNG.normal(size=shape).astype("float32")
    expected = patch_merging(
        x.astype("float64"),
        np.asarray(layer.norm.gamma),
        np.asarray(layer.norm.beta),
        np.asarray(layer.reduction.kernel),
        1e-5,
    )
    out = np.asarray(layer(x))
    assert out.shape == (shape[0], (shape[1] + 1) // 2, (shape[2] + 1) // 2, 2 * shape[3])
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


def test_merges_neighbours_only():
    layer = PatchMerging()
    x = RNG.normal(size=(1, 4, 4, 2)).astype("float32")
    changed = x.copy()
    changed[0, 1, 2] += 5.0  # in the 2 x 2 group of merged token (0, 1)
    difference = np.abs(np.asarray(layer(changed)) - np.asarray(layer(x))).sum(-1)[0]
    assert difference[0, 1] > 0 and difference.sum() == difference[0, 1]


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="layer_norm_epsilon"):
        PatchMerging(layer_norm_epsilon=-1)
    with pytest.raises(ValueError, match="a feature map"):
        PatchMerging()(np.zeros((2, 4, 3)))


SPECS = [
    LayerSpec("patch_merging", PatchMerging, {}, [RNG.normal(size=(2, 4, 6, 8)).astype("float32")]),
    LayerSpec(
        "patch_merging_odd",
        PatchMerging,
        {"layer_norm_epsilon": 1e-6},
        [RNG.normal(size=(2, 5, 3, 4)).astype("float32")],
        dynamic_axes=[()],
    ),
]

test_harness = harness_test(SPECS)
