"""A non-finite value reaches exactly the queries that may see its key, on every kernel.

The expected outputs come from NumPy: the finite reference where a query's
visible keys hold only finite values, NaN where one of them does not.
"""

import numpy as np
import pytest
import tensorflow as tf
from numpy_reference import scaled_dot_product_attention as reference
from numpy_reference import sliding_window_band

from keras_attention.ops import attention

rng = np.random.default_rng(5)
QUERIES, KEYS, HEADS = 7, 9, 2


def _inputs():
    q = rng.normal(size=(2, QUERIES, HEADS, 4)).astype("float32")
    k = rng.normal(size=(2, KEYS, HEADS, 4)).astype("float32")
    v = rng.normal(size=(2, KEYS, HEADS, 3)).astype("float32")
    v[0, 4, 1, 2] = np.nan  # batch 0, key 4, head 1
    v[1, 7, :, 0] = np.inf  # batch 1, key 7, both heads
    return q, k, v


def _visible(is_causal, window, key_padding):
    """(B, H, Tq, Tk) visibility built from the rules, not from the code under test."""
    visible = np.ones((2, HEADS, QUERIES, KEYS), bool)
    rows, cols = np.arange(QUERIES)[:, None], np.arange(KEYS)[None, :]
    if window is not None:
        visible &= sliding_window_band(QUERIES, KEYS, window, is_causal)
    elif is_causal:
        visible &= rows >= cols
    if key_padding is not None:
        visible &= key_padding[:, None, None, :]
    return visible


def _expected(q, k, v, visible):
    finite_v = np.where(np.isfinite(v), v, 0.0)
    expected, _ = reference(q, k, finite_v, visible)
    nonfinite = ~np.isfinite(v).all(axis=-1)  # (B, Tk, H)
    sees = np.einsum("bhqk,bkh->bqh", visible.astype(int), nonfinite.astype(int)) > 0
    return np.where(sees[..., None], np.nan, expected), sees


@pytest.mark.parametrize("implementation", ["xla", "chunked"])
@pytest.mark.parametrize("is_causal, window", [(True, None), (False, 2), (True, 3), (False, None)])
@pytest.mark.parametrize("padded", [False, True])
def test_nan_reaches_exactly_the_queries_that_see_it(implementation, is_causal, window, padded):
    q, k, v = _inputs()
    key_padding = np.array([[True] * KEYS, [True] * 6 + [False] * 3]) if padded else None
    mask = None if key_padding is None else key_padding[:, None, None, :]
    if not is_causal and window is None and mask is None:
        mask = np.ones((2, 1, 1, KEYS), bool)  # something must hide keys for the check to run
    visible = _visible(is_causal, window, key_padding)
    expected, sees = _expected(q, k, v, visible)
    assert sees.any() and not sees.all()  # the case separates the queries
    run = tf.function(
        lambda q, k, v: attention.dot_product_attention(
            q,
            k,
            v,
            mask=mask,
            is_causal=is_causal,
            sliding_window=window,
            implementation=implementation,
        ),
        jit_compile=True,
    )
    output = np.asarray(run(q, k, v))
    np.testing.assert_array_equal(np.isnan(output).all(-1), sees)
    np.testing.assert_allclose(output[~sees], expected[~sees], atol=1e-5)


def test_a_mask_with_a_query_axis_still_decides_who_sees_nan():
    q, k, v = _inputs()
    mask = rng.random((2, 1, QUERIES, KEYS)) < 0.5
    mask[..., 0] = True
    visible = np.broadcast_to(mask, (2, HEADS, QUERIES, KEYS))
    expected, sees = _expected(q, k, v, visible)
    output = np.asarray(attention.dot_product_attention(q, k, v, mask=mask, is_causal=False))
    np.testing.assert_array_equal(np.isnan(output).all(-1), sees)
    np.testing.assert_allclose(output[~sees], expected[~sees], atol=1e-5)
