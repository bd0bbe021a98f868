import keras
import keras_hub
import numpy as np
import pytest
import tensorflow as tf
from layer_harness import LayerSpec
from layer_harness import harness_test
from transformer_block_inputs import CONTEXT
from transformer_block_inputs import CONTEXT_PADDING
from transformer_block_inputs import PADDING
from transformer_block_inputs import X

from keras_attention.layers.transformer.transformer_decoder_block import TransformerDecoderBlock

SPECS = [
    LayerSpec(
        "cross_attention",
        TransformerDecoderBlock,
        {"num_heads": 2, "intermediate_dim": 24},
        inputs=[X, CONTEXT],
        tensor_kwargs={"padding_mask": PADDING, "context_padding_mask": CONTEXT_PADDING},
        call_kwargs={"return_attention_scores": True},
    ),
    LayerSpec(
        "decoder_only_pre_norm",
        TransformerDecoderBlock,
        {"num_heads": 4, "intermediate_dim": 8, "norm_first": True, "dropout": 0.1},
        inputs=[X],
    ),
    LayerSpec(
        "grouped_query_cross_attention",
        TransformerDecoderBlock,
        {"num_heads": 4, "intermediate_dim": 8, "num_key_value_heads": 2},
        inputs=[X, CONTEXT],
        tensor_kwargs={"padding_mask": PADDING, "context_padding_mask": CONTEXT_PADDING},
        call_kwargs={"return_attention_scores": True},
    ),
]


test_harness = harness_test(SPECS)


@pytest.mark.parametrize("norm_first", [False, True])
def test_matches_keras_hub_decoder_with_copied_weights(norm_first):
    theirs = keras_hub.layers.TransformerDecoder(
        intermediate_dim=24, num_heads=2, normalize_first=norm_first
    )
    expected = np.asarray(
        theirs(X, CONTEXT, decoder_padding_mask=PADDING, encoder_padding_mask=CONTEXT_PADDING)
    )
    ours = TransformerDecoderBlock(num_heads=2, intermediate_dim=24, norm_first=norm_first)
    ours(X, CONTEXT)
    assert [w.shape for w in ours.get_weights()] == [w.shape for w in theirs.get_weights()]
    ours.set_weights(theirs.get_weights())
    got = ours(X, CONTEXT, padding_mask=PADDING, context_padding_mask=CONTEXT_PADDING)
    # keras-hub spreads fully masked rows uniformly; with these masks no row is.
    np.testing.assert_allclose(np.asarray(got), expected, atol=1e-5)


def test_scores_are_causal_and_hide_padding():
    block = TransformerDecoderBlock(num_heads=2, intermediate_dim=8)
    _, self_scores, cross_scores = block(
        X, CONTEXT, context_padding_mask=CONTEXT_PADDING, return_attention_scores=True
    )
    self_scores, cross_scores = np.asarray(self_scores), np.asarray(cross_scores)
    upper = np.triu(np.ones((6, 6), bool), k=1)
    assert np.all(self_scores[:, :, upper] == 0.0)
    np.testing.assert_allclose(self_scores.sum(-1), 1.0, atol=1e-5)
    assert np.all(cross_scores[1, :, :, 3:] == 0.0)


def _decode_one_token_at_a_time(block, inputs, context, padding_mask):
    batch, length, _ = inputs.shape
    cache = tf.zeros(block.cache_shape(batch, length))
    cross_cache = block.compute_cross_attention_cache(context) if context is not None else None

    @tf.function(jit_compile=True)
    def step(token, cache, index, cross_cache):
        arguments = {
            "padding_mask": padding_mask,
            "self_attention_cache": cache,
            "self_attention_cache_update_index": index,
            "return_attention_scores": True,
        }
        if context is None:
            output, scores, cache = block(token, **arguments)
            return output, scores, cache
        output, scores, _, cache, _ = block(
            token, context, cross_attention_cache=cross_cache, **arguments
        )
        return output, scores, cache

    outputs, all_scores = [], []
    for index in range(length):
        output, scores, cache = step(
            inputs[:, index : index + 1], cache, tf.constant(index), cross_cache
        )
        outputs.append(np.asarray(output))
        all_scores.append(np.asarray(scores))
    return np.concatenate(outputs, axis=1), np.concatenate(all_scores, axis=2)


@pytest.mark.parametrize("with_context", [True, False])
@pytest.mark.parametrize("norm_first", [False, True])
def test_cached_decoding_equals_full_causal_pass(with_context, norm_first):
    block = TransformerDecoderBlock(num_heads=2, intermediate_dim=24, norm_first=norm_first)
    context = CONTEXT if with_context else None
    arguments = (X, context) if with_context else (X,)
    full, full_scores = block(*arguments, return_attention_scores=True)[:2]
    stepped, stepped_scores = _decode_one_token_at_a_time(block, X, context, None)
    np.testing.assert_allclose(stepped, np.asarray(full), atol=1e-5)
    np.testing.assert_allclose(stepped_scores, np.asarray(full_scores), atol=1e-5)


def test_cached_decoding_with_left_padded_prompts():
    # Example 1 starts with two padding tokens, as a batch of left-padded prompts.
    padding = np.array([[1] * 6, [0, 0] + [1] * 4], bool)
    block = TransformerDecoderBlock(num_heads=2, intermediate_dim=24)
    full = np.asarray(block(X, CONTEXT, padding_mask=padding))
    stepped, _ = _decode_one_token_at_a_time(block, X, CONTEXT, padding)
    np.testing.assert_allclose(stepped, full, atol=1e-5)


def test_bad_calls():
    block = TransformerDecoderBlock(num_heads=2, intermediate_dim=8)
    block(X, CONTEXT)
    with pytest.raises(ValueError, match="needs a `context`. Received: context=None"):
        block(X)
    with pytest.raises(
        ValueError, match="context.*12 features.*Received: context.shape=\\(2, 5, 7\\)"
    ):
        block(X, CONTEXT[..., :7])
    with pytest.raises(ValueError, match="go together.*self_attention_cache_update_index=3"):
        block(X, CONTEXT, self_attention_cache_update_index=3)
    decoder_only = TransformerDecoderBlock(num_heads=2, intermediate_dim=8)
    decoder_only(X)
    with pytest.raises(ValueError, match="without cross-attention.*Received: context"):
        decoder_only(X, CONTEXT)
    with pytest.raises(ValueError, match="no cross-attention"):
        decoder_only.compute_cross_attention_cache(CONTEXT)
    with pytest.raises(ValueError, match="num_heads.*Received: num_heads=-1"):
        TransformerDecoderBlock(num_heads=-1, intermediate_dim=8)


def test_trains_as_a_decoder_only_language_model_layer():
    # Next-token prediction on a counting sequence mod 5: learnable only causally.
    tokens = (np.arange(9)[None, :] + np.arange(16)[:, None]) % 5
    inputs = keras.Input((8,), dtype="int32")
    x = keras.layers.Embedding(5, 16)(inputs)
    x = TransformerDecoderBlock(num_heads=2, intermediate_dim=32)(x)
    model = keras.Model(inputs, keras.layers.Dense(5)(x))
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    model.compile(keras.optimizers.Adam(1e-2), loss, jit_compile=True)
    history = model.fit(tokens[:, :-1], tokens[:, 1:], epochs=20, verbose=0)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]


# ---------------------------------------------------------------------------
# keras-hub's argument names and decoding protocol.


def test_keras_hub_call_names_give_the_same_outputs_as_ours():
    block = TransformerDecoderBlock(num_heads=2, intermediate_dim=24, normalize_first=True)
    assert block.norm_first and block.get_config()["normalize_first"] is True
    cross_mask = np.ones((2, 6, 5), bool)
    cross_mask[:, :, 0] = False
    ours = block(
        X,
        CONTEXT,
        padding_mask=PADDING,
        context_padding_mask=CONTEXT_PADDING,
        context_attention_mask=cross_mask,
    )
    theirs = block(
        decoder_sequence=X,
        encoder_sequence=CONTEXT,
        decoder_padding_mask=PADDING,
        encoder_padding_mask=CONTEXT_PADDING,
        encoder_attention_mask=cross_mask,
    )
    np.testing.assert_allclose(theirs, ours, atol=1e-6)
    without_cross_mask = block(
        X, CONTEXT, padding_mask=PADDING, context_padding_mask=CONTEXT_PADDING
    )
    assert not np.allclose(without_cross_mask, ours)
    with pytest.raises(ValueError, match="`decoder_sequence` is another name for `inputs`"):
        block(X, CONTEXT, decoder_sequence=X)


def test_keras_hub_names_build_the_block_from_a_functional_model():
    decoder_sequence, encoder_sequence = keras.Input((6, 16)), keras.Input((5, 12))
    block = TransformerDecoderBlock(num_heads=2, intermediate_dim=8)
    outputs = block(decoder_sequence=decoder_sequence, encoder_sequence=encoder_sequence)
    assert tuple(outputs.shape) == (None, 6, 16) and block.has_cross_attention


def test_the_embedding_mask_leaves_the_block():
    # keras hands `compute_mask` the padding mask positionally.
    embedding = keras.layers.Embedding(10, 16, mask_zero=True)
    block = TransformerDecoderBlock(num_heads=2, intermediate_dim=8)
    outputs = block(embedding(np.array([[3, 4, 5, 0, 0, 0]])))
    np.testing.assert_array_equal(np.asarray(outputs._keras_mask), [[True] * 3 + [False] * 3])
    symbolic = block(embedding(keras.Input((6,), dtype="int32")))
    assert symbolic._keras_mask is not None


def test_cross_attention_cache_update_index_fills_the_cache_once():
    block = TransformerDecoderBlock(num_heads=2, intermediate_dim=8)
    full = np.asarray(block(X, CONTEXT))
    empty = np.zeros((2, 2, 6, 2, 8), "float32")
    cross_empty = np.zeros((2, 2, 5, 2, 8), "float32")
    first, self_cache, cross_cache = block(
        X[:, :1],
        CONTEXT,
        self_attention_cache=empty,
        self_attention_cache_update_index=0,
        cross_attention_cache=cross_empty,
        cross_attention_cache_update_index=0,
    )
    np.testing.assert_allclose(cross_cache, block.compute_cross_attention_cache(CONTEXT), atol=1e-6)
    steps = [np.asarray(first)]
    for i in range(1, 6):
        step, self_cache, cross_cache = block(
            X[:, i : i + 1],
            CONTEXT,
            self_attention_cache=self_cache,
            self_attention_cache_update_index=i,
            cross_attention_cache=cross_cache,
        )
        steps.append(np.asarray(step))
    np.testing.assert_allclose(np.concatenate(steps, axis=1), full, atol=1e-5)
    with pytest.raises(ValueError, match="needs a `cross_attention_cache`.*index=0"):
        block(X, CONTEXT, cross_attention_cache_update_index=0)


def test_norm_first_and_normalize_first_must_agree():
    with pytest.raises(ValueError, match="norm_first=True, normalize_first=False"):
        TransformerDecoderBlock(
            num_heads=2, intermediate_dim=8, norm_first=True, normalize_first=False
        )
    with pytest.raises(ValueError, match="normalize_first.*Received: normalize_first='yes'"):
        TransformerDecoderBlock(num_heads=2, intermediate_dim=8, normalize_first="yes")
    config = TransformerDecoderBlock(num_heads=2, intermediate_dim=8, norm_first=True).get_config()
    assert TransformerDecoderBlock.from_config(config).normalize_first is True


# ---------------------------------------------------------------------------
# Grouped-query (`num_key_value_heads`) and multi-query (1) attention.


@pytest.mark.parametrize("num_key_value_heads", [2, 1], ids=["grouped", "multi_query"])
@pytest.mark.parametrize("with_context", [True, False])
def test_grouped_cached_decoding_equals_full_causal_pass(with_context, num_key_value_heads):
    block = TransformerDecoderBlock(
        num_heads=4, intermediate_dim=24, num_key_value_heads=num_key_value_heads
    )
    context = CONTEXT if with_context else None
    arguments = (X, context) if with_context else (X,)
    full, full_scores = block(*arguments, return_attention_scores=True)[:2]
    assert block.cache_shape(2, 6) == (2, 2, 6, num_key_value_heads, 4)
    stepped, stepped_scores = _decode_one_token_at_a_time(block, X, context, None)
    np.testing.assert_allclose(stepped, np.asarray(full), atol=1e-5)
    np.testing.assert_allclose(stepped_scores, np.asarray(full_scores), atol=1e-5)
    if with_context:
        cross_cache = block.compute_cross_attention_cache(CONTEXT)
        assert (
            tuple(cross_cache.shape) == block.cache_shape(2, 5) == (2, 2, 5, num_key_value_heads, 4)
        )


def test_as_many_key_value_heads_as_heads_is_the_multi_head_block():
    multi_head = TransformerDecoderBlock(num_heads=2, intermediate_dim=24)
    grouped = TransformerDecoderBlock(num_heads=2, intermediate_dim=24, num_key_value_heads=2)
    multi_head(X, CONTEXT)
    grouped(X, CONTEXT)
    assert [w.path.split("/", 1)[1] for w in grouped.weights] == [
        w.path.split("/", 1)[1] for w in multi_head.weights
    ]
    grouped.set_weights(multi_head.get_weights())
    arguments = dict(
        padding_mask=PADDING, context_padding_mask=CONTEXT_PADDING, return_attention_scores=True
    )
    got = grouped(X, CONTEXT, **arguments)
    expected = multi_head(X, CONTEXT, **arguments)
    for a, b in zip(got, expected):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), atol=1e-6)


def test_grouped_caches_in_a_functional_model():
    block = TransformerDecoderBlock(num_heads=4, intermediate_dim=8, num_key_value_heads=2)
    token, context = keras.Input((1, 16)), keras.Input((5, 12))
    cache = keras.Input((2, 6, 2, 4))
    outputs = block(
        token,
        context,
        self_attention_cache=cache,
        self_attention_cache_update_index=0,
        return_attention_scores=True,
    )
    shapes = [tuple(output.shape) for output in outputs]
    assert shapes == [
        (None, 1, 16),
        (None, 4, 1, 6),  # self-attention weights: one row per query head
        (None, 4, 1, 5),
        (None, 2, 6, 2, 4),  # the caches hold the 2 key/value heads
        (None, 2, 5, 2, 4),
    ]
    model = keras.Model([token, context, cache], outputs)
    results = model([X[:, :1], CONTEXT, np.zeros((2, 2, 6, 2, 4), "float32")])
    assert [tuple(np.shape(result)) for result in results] == [(2,) + s[1:] for s in shapes]


def test_a_multi_head_sized_cache_is_refused_by_a_grouped_block():
    block = TransformerDecoderBlock(num_heads=4, intermediate_dim=8, num_key_value_heads=2)
    block(X)
    with pytest.raises(
        ValueError, match=r"num_key_value_heads.*Received: cache.shape=\(2, 2, 6, 4, 4\)"
    ):
        block(
            X[:, :1],
            self_attention_cache=np.zeros((2, 2, 6, 4, 4), "float32"),
            self_attention_cache_update_index=0,
        )


def test_key_value_heads_must_divide_the_heads():
    with pytest.raises(ValueError, match="num_heads=6, num_key_value_heads=4"):
        TransformerDecoderBlock(num_heads=6, intermediate_dim=8, num_key_value_heads=4)
