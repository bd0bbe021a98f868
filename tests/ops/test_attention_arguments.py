"""Every public attention op refuses what it would read wrongly: float masks, integer inputs, bad scales."""

import numpy as np
import pytest

import keras_attention as ka

OPS = ka.ops
RNG = np.random.default_rng(0)
QUERY = RNG.standard_normal((2, 4, 2, 8)).astype("float32")
KEY = RNG.standard_normal((2, 6, 2, 8)).astype("float32")
# An additive mask: keys 0..2 may be attended, 3..5 may not.
ADDITIVE = np.array([[0, 0, 0, -1e9, -1e9, -1e9]], "float32")

OPS_TAKING_A_MASK = {
    "masked_softmax": lambda mask: OPS.masked_softmax(np.zeros((1, 6), "float32"), mask=mask),
    "softmax_with_empty_rows": lambda mask: OPS.softmax_with_empty_rows(
        np.zeros((1, 6), "float32"), mask=mask
    ),
    "attention_weights": lambda mask: OPS.attention_weights(QUERY, KEY, mask=mask[None, None]),
    "chunked_attention": lambda mask: OPS.chunked_attention(
        QUERY, KEY, KEY, mask[None, None], False, 8**-0.5
    ),
    "dot_product_attention": lambda mask: OPS.dot_product_attention(QUERY, KEY, KEY, mask=mask),
}


@pytest.mark.parametrize("name", sorted(OPS_TAKING_A_MASK))
def test_a_float_mask_is_refused_by_every_op_not_read_inverted(name):
    with pytest.raises(ValueError, match=r"^`mask` must be boolean \(True = may attend\)"):
        OPS_TAKING_A_MASK[name](ADDITIVE)
    OPS_TAKING_A_MASK[name](ADDITIVE == 0)  # the conversion the message gives


def _numpy_weights(query, key, visible):
    """softmax(q k^T / sqrt(D)) over the visible keys, (B, H, Tq, Tk), float64."""
    logits = np.einsum("bqhd,bkhd->bhqk", query, key) / np.sqrt(query.shape[-1])
    logits = np.where(visible, logits, -np.inf)
    weights = np.exp(logits - logits.max(-1, keepdims=True))
    return weights / weights.sum(-1, keepdims=True)


def test_attention_weights_with_a_converted_mask_match_numpy():
    visible = ADDITIVE == 0  # (1, 6)
    weights = np.asarray(OPS.attention_weights(QUERY, KEY, mask=visible))
    np.testing.assert_allclose(weights, _numpy_weights(QUERY, KEY, visible), atol=1e-6)
    assert np.all(weights[..., 3:] == 0)


@pytest.mark.parametrize("implementation", ["xla", "chunked"])
def test_integer_inputs_are_refused_not_attended_in_integers(implementation):
    ints = np.arange(2 * 4 * 2 * 8).reshape(2, 4, 2, 8).astype("int32")
    with pytest.raises(ValueError, match=r"^`query` must be a float tensor. Received: query.dt"):
        OPS.dot_product_attention(ints, ints, ints, implementation=implementation)
    with pytest.raises(ValueError, match=r"^`value` must be a float tensor"):
        OPS.chunked_attention(QUERY, KEY, KEY.astype("int32"), None, False, 0.5)


@pytest.mark.parametrize("scale", [float("nan"), float("inf"), "x", True])
def test_a_scale_that_is_no_finite_number_is_refused(scale):
    for attend in (
        lambda: OPS.dot_product_attention(QUERY, KEY, KEY, scale=scale),
        lambda: OPS.attention_weights(QUERY, KEY, scale=scale),
        lambda: OPS.chunked_attention(QUERY, KEY, KEY, None, False, scale),
    ):
        with pytest.raises(ValueError, match=r"^`scale` must be a finite number multiplying"):
            attend()


@pytest.mark.parametrize("block_size", [0, -2, 2.5, None])
def test_chunked_attention_refuses_a_block_size_that_is_no_positive_integer(block_size):
    with pytest.raises(ValueError, match=r"^`block_size` must be a positive integer. Received"):
        OPS.chunked_attention(QUERY, KEY, KEY, None, True, 0.5, block_size=block_size)


def test_chunked_attention_checks_ranks_and_takes_the_masks_dot_product_attention_takes():
    with pytest.raises(ValueError, match=r"^`query` must be 4D \(batch, length, heads, head_dim"):
        OPS.chunked_attention(QUERY[:, :, 0], KEY, KEY, None, False, 0.5)
    with pytest.raises(ValueError, match=r"^`mask` must broadcast to the attention scores"):
        OPS.chunked_attention(QUERY, KEY, KEY, np.ones((3, 6), bool), False, 0.5)  # Tq is 4
    visible = np.array([True] * 3 + [False] * 3)[None]  # (Tq | 1, Tk): rank 2
    chunked = OPS.chunked_attention(QUERY, KEY, KEY, visible, False, None, block_size=2)
    weights = _numpy_weights(QUERY, KEY, visible)
    expected = np.einsum("bhqk,bkhd->bqhd", weights, KEY)
    np.testing.assert_allclose(np.asarray(chunked), expected, atol=1e-5)


def test_masked_softmax_gives_zeros_for_a_row_of_minus_inf_and_keeps_nan_visible():
    logits = np.array([[-np.inf] * 4, [0.0, -np.inf, 0.0, -np.inf], [np.nan, 0, 0, 0]], "float32")
    weights = np.asarray(OPS.masked_softmax(logits))
    np.testing.assert_array_equal(weights[0], np.zeros(4))
    np.testing.assert_allclose(weights[1], [0.5, 0.0, 0.5, 0.0])
    assert np.isnan(weights[2]).any()  # a NaN score is not hidden as if masked
