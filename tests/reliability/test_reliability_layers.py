"""Bad inputs to layers and ops: clear errors, masked NaN kept out, empty inputs allowed.

Each test is named for the case it covers; expectations come from NumPy.
"""

import numpy as np
import pytest
import tensorflow as tf

import keras_attention as ka
from keras_attention.layers.attention.additive_attention import AdditiveAttention
from keras_attention.layers.attention.dot_product_attention import DotProductAttention
from keras_attention.layers.attention.multi_head_attention import MultiHeadAttention
from keras_attention.layers.transformer.transformer_decoder_block import TransformerDecoderBlock
from keras_attention.layers.transformer.transformer_encoder_block import TransformerEncoderBlock

KERNELS = ("xla", "chunked", "fused")
RNG = np.random.default_rng(0)


def _numpy_attention(query, key, value, key_visible):
    """softmax(q k^T / sqrt(d)) v over the visible keys only; (B, T, H, D) layout."""
    logits = np.einsum("bqhd,bkhd->bhqk", query, key) / np.sqrt(query.shape[-1])
    logits = np.where(key_visible[:, None, None, :], logits, -np.inf)
    weights = np.exp(logits - logits.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    visible_values = np.where(key_visible[:, :, None, None], value, 0.0)
    return np.einsum("bhqk,bkhd->bqhd", weights, visible_values)


def _padded_inputs():
    query = RNG.normal(size=(2, 3, 2, 4)).astype("float32")
    key = RNG.normal(size=(2, 5, 2, 4)).astype("float32")
    value = RNG.normal(size=(2, 5, 2, 4)).astype("float32")
    key_visible = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 0]], bool)
    return query, key, value, key_visible


@pytest.mark.parametrize("implementation", KERNELS)
def test_nan_in_masked_key_and_value_rows_never_reaches_the_output(implementation):
    query, key, value, key_visible = _padded_inputs()
    expected = _numpy_attention(query, key, value, key_visible)
    key[~key_visible] = np.nan
    value[~key_visible] = np.inf
    output = ka.ops.dot_product_attention(
        query, key, value, mask=key_visible[:, None, None, :], implementation=implementation
    )
    np.testing.assert_allclose(np.asarray(output), expected, atol=1e-5)


def _numpy_attention_per_query(query, key, value, visible):
    """Like `_numpy_attention` with a (B, Tq, Tk) mask: each query sums only what it sees."""
    logits = np.einsum("bqhd,bkhd->bhqk", query, key) / np.sqrt(query.shape[-1])
    logits = np.where(visible[:, None], logits, -np.inf)
    weights = np.exp(logits - logits.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    # (B, H, Tq, Tk, 1) * (B, 1, 1, Tk, H, D) summed over the visible keys only.
    with np.errstate(invalid="ignore"):  # 0 * inf on hidden terms, dropped just below
        terms = weights[..., None] * np.transpose(value, (0, 2, 1, 3))[:, :, None]
    terms = np.where(visible[:, None, :, :, None], terms, 0.0)
    return np.transpose(terms.sum(3), (0, 2, 1, 3))  # (B, H, Tq, D) -> (B, Tq, H, D)


@pytest.mark.parametrize("implementation", KERNELS)
@pytest.mark.parametrize("masking", ["is_causal", "causal_mask"])
def test_nan_in_rows_hidden_from_only_some_queries_never_reaches_them(implementation, masking):
    query = RNG.normal(size=(2, 5, 2, 4)).astype("float32")
    key = RNG.normal(size=(2, 5, 2, 4)).astype("float32")
    value = RNG.normal(size=(2, 5, 2, 4)).astype("float32")
    causal = np.broadcast_to(np.tril(np.ones((5, 5), bool)), (2, 5, 5))
    key[:, 3] = np.nan  # seen by queries 3 and 4 only
    value[:, 3, 1] = np.inf
    value[1, 4, 0, 2] = np.nan
    expected = _numpy_attention_per_query(query, key, value, causal)
    kwargs = {"is_causal": True} if masking == "is_causal" else {"mask": causal}
    output = np.asarray(
        ka.ops.dot_product_attention(query, key, value, implementation=implementation, **kwargs)
    )
    np.testing.assert_allclose(output[:, :3], expected[:, :3], atol=1e-5)
    # The queries that may see a non-finite row get NaN, as NumPy's do.
    assert np.isnan(expected[:, 3:]).all() and np.isnan(output[:, 3:]).all()


def test_nan_in_future_values_never_reaches_a_causal_layer_under_xla():
    layer = MultiHeadAttention(num_heads=2, key_dim=4)
    inputs = RNG.normal(size=(2, 5, 8)).astype("float32")
    clean = np.asarray(layer(inputs, inputs, use_causal_mask=True))
    poisoned = inputs.copy()
    poisoned[:, 4] = np.nan

    @tf.function(jit_compile=True)
    def compiled(x):
        return layer(x, x, use_causal_mask=True)

    output = np.asarray(compiled(poisoned))
    np.testing.assert_allclose(output[:, :4], clean[:, :4], atol=1e-5)
    assert np.isnan(output[:, 4]).all()


def test_nan_in_masked_values_never_reaches_additive_or_dot_product_layers():
    memory = RNG.normal(size=(2, 5, 4)).astype("float32")
    query = RNG.normal(size=(2, 3, 4)).astype("float32")
    visible = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    for layer in (AdditiveAttention(units=4), DotProductAttention()):
        clean = np.asarray(layer(query, memory, value_mask=visible))
        poisoned = memory.copy()
        poisoned[~visible] = np.nan
        output = np.asarray(layer(query, poisoned, value_mask=visible))
        np.testing.assert_allclose(output, clean, atol=1e-6)


def test_nan_in_masked_values_never_reaches_multi_head_attention():
    layer = MultiHeadAttention(num_heads=2, key_dim=4)
    query = RNG.normal(size=(2, 3, 8)).astype("float32")
    memory = RNG.normal(size=(2, 5, 8)).astype("float32")
    visible = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    mask = np.broadcast_to(visible[:, None, :], (2, 3, 5))
    clean = np.asarray(layer(query, memory, attention_mask=mask))
    memory[~visible] = np.nan
    poisoned = np.asarray(layer(query, memory, attention_mask=mask))
    np.testing.assert_allclose(poisoned, clean, atol=1e-6)


@pytest.mark.parametrize("implementation", KERNELS)
@pytest.mark.parametrize(
    "query_shape, key_shape",
    [((2, 0, 2, 4), (2, 5, 2, 4)), ((2, 3, 2, 4), (2, 0, 2, 4)), ((0, 3, 2, 4), (0, 5, 2, 4))],
    ids=["zero_queries", "zero_keys", "zero_batch"],
)
def test_zero_length_inputs_give_empty_outputs_on_every_kernel(
    implementation, query_shape, key_shape
):
    query = np.ones(query_shape, "float32")
    key = np.ones(key_shape, "float32")
    output = ka.ops.dot_product_attention(query, key, key, implementation=implementation)
    # NumPy: a softmax over no keys weighs nothing, so the output is 0 where it exists.
    assert tuple(output.shape) == query_shape[:3] + (key_shape[-1],)
    np.testing.assert_array_equal(np.asarray(output), np.zeros(output.shape))


def test_additive_float_mask_is_refused_with_how_to_convert():
    query, key, value, key_visible = _padded_inputs()
    additive = np.where(key_visible, 0.0, -1e9).astype("float32")[:, None, None, :]
    with pytest.raises(ValueError, match=r"`mask` must be boolean.*mask.dtype=float32.*mask == 0"):
        ka.ops.dot_product_attention(query, key, value, mask=additive)
    # The conversion the message gives is exact.
    converted = ka.ops.dot_product_attention(query, key, value, mask=additive == 0)
    expected = _numpy_attention(query, key, value, key_visible)
    np.testing.assert_allclose(np.asarray(converted), expected, atol=1e-5)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: MultiHeadAttention(num_heads=2, key_dim=4)(
            np.ones((2, 3, 8)), np.ones((2, 3, 8)), attention_mask=m
        ),
        lambda m: TransformerEncoderBlock(num_heads=2, intermediate_dim=8)(
            np.ones((2, 3, 8)), attention_mask=m
        ),
        lambda m: TransformerEncoderBlock(num_heads=2, intermediate_dim=8)(
            np.ones((2, 3, 8)), padding_mask=m[:, 0]
        ),
        lambda m: AdditiveAttention(units=4)(
            np.ones((2, 3, 8)), np.ones((2, 3, 8)), value_mask=m[:, 0]
        ),
        lambda m: DotProductAttention()(np.ones((2, 3, 8)), np.ones((2, 3, 8)), query_mask=m[:, 0]),
    ],
    ids=["multi_head", "encoder_attention_mask", "encoder_padding_mask", "additive", "luong"],
)
def test_float_masks_are_refused_by_every_layer(call):
    with pytest.raises(ValueError, match=r"must be boolean.*Received: \w+\.dtype=float32"):
        call(np.ones((2, 3, 3), "float32"))


def test_integer_masks_read_exactly_as_nonzero():
    query, key, value, key_visible = _padded_inputs()
    as_int = key_visible.astype("int32")[:, None, None, :]
    np.testing.assert_allclose(
        np.asarray(ka.ops.dot_product_attention(query, key, value, mask=as_int)),
        _numpy_attention(query, key, value, key_visible),
        atol=1e-5,
    )


@pytest.mark.parametrize("rank", [2, 3, 4])
def test_attention_mask_ranks_follow_one_rule_in_ops_and_layers(rank):
    length = 4
    causal = np.tril(np.ones((length, length), bool))
    mask = {2: causal, 3: causal[None].repeat(2, 0), 4: causal[None, None].repeat(2, 0)}[rank]
    inputs = RNG.normal(size=(2, length, 8)).astype("float32")
    block = TransformerEncoderBlock(num_heads=2, intermediate_dim=8)
    reference = np.asarray(block(inputs, attention_mask=causal[None].repeat(2, 0)))
    np.testing.assert_allclose(np.asarray(block(inputs, attention_mask=mask)), reference, atol=1e-6)
    layer = MultiHeadAttention(num_heads=2, key_dim=4)
    reference = np.asarray(layer(inputs, inputs, attention_mask=causal[None].repeat(2, 0)))
    np.testing.assert_allclose(
        np.asarray(layer(inputs, inputs, attention_mask=mask)), reference, atol=1e-6
    )


def test_attention_mask_of_rank_five_is_refused_naming_its_shape():
    block = TransformerEncoderBlock(num_heads=2, intermediate_dim=8)
    with pytest.raises(ValueError, match=r"rank 2.*3.*4.*attention_mask.shape=\(1, 2, 1, 4, 4\)"):
        block(np.ones((2, 4, 8)), attention_mask=np.ones((1, 2, 1, 4, 4), bool))


@pytest.mark.parametrize("rank", [2, 3, 4])
def test_grouped_query_blocks_take_masks_of_every_rank_with_one_row_per_query_head(rank):
    length = 4
    causal = np.tril(np.ones((length, length), bool))
    per_head = np.stack([causal, np.ones_like(causal), causal, np.eye(length, dtype=bool)])
    mask = {2: causal, 3: causal[None].repeat(2, 0), 4: per_head[None].repeat(2, 0)}[rank]
    inputs = RNG.normal(size=(2, length, 8)).astype("float32")
    block = TransformerEncoderBlock(num_heads=4, intermediate_dim=8, num_key_value_heads=2)
    _, scores = block(inputs, attention_mask=mask, return_attention_scores=True)
    # Hidden keys get no weight, per query head (a rank-4 mask has a head axis).
    hidden = ~np.broadcast_to(mask if rank == 4 else causal, (2, 4, length, length))
    assert np.all(np.asarray(scores)[hidden] == 0.0)
    np.testing.assert_allclose(np.asarray(scores).sum(-1), 1.0, atol=1e-5)


@pytest.mark.parametrize("block_class", [TransformerEncoderBlock, TransformerDecoderBlock])
def test_num_heads_that_does_not_divide_the_width_is_refused(block_class):
    block = block_class(num_heads=3, intermediate_dim=8)
    with pytest.raises(ValueError, match="multiple of `num_heads`.*hidden_dim=16, num_heads=3"):
        block(np.ones((2, 4, 16), "float32"))


@pytest.mark.parametrize("block_class", [TransformerEncoderBlock, TransformerDecoderBlock])
def test_key_value_heads_that_do_not_divide_the_heads_are_refused(block_class):
    with pytest.raises(
        ValueError,
        match="`num_heads` must be divisible by `num_key_value_heads`.*"
        "Received: num_heads=4, num_key_value_heads=3",
    ):
        block_class(num_heads=4, intermediate_dim=8, num_key_value_heads=3)
