import keras
import numpy as np
import pytest
import tensorflow as tf
from numpy_reference import scaled_dot_product_attention as reference

from keras_attention.ops import attention
from keras_attention.ops.chunked_attention import chunked_attention

IMPLEMENTATIONS = ["xla", "chunked", "fused", "auto"]
rng = np.random.default_rng(0)


def _qkv(batch=2, query_length=5, key_length=7, heads=3, head_dim=4, value_dim=6):
    q = rng.normal(size=(batch, query_length, heads, head_dim)).astype("float32")
    k = rng.normal(size=(batch, key_length, heads, head_dim)).astype("float32")
    v = rng.normal(size=(batch, key_length, heads, value_dim)).astype("float32")
    return q, k, v


MASKS = {
    "none": None,
    "rank2": rng.random((5, 7)) > 0.3,
    "rank3": rng.random((2, 5, 7)) > 0.3,
    "rank4": rng.random((2, 3, 5, 7)) > 0.3,
    "key_padding": np.array([[1] * 7, [1] * 4 + [0] * 3], bool)[:, None, None, :],
}


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
@pytest.mark.parametrize("mask_name", list(MASKS))
@pytest.mark.parametrize("is_causal", [False, True])
def test_matches_numpy_reference(implementation, mask_name, is_causal):
    q, k, v = _qkv()
    mask = MASKS[mask_name]
    expected, expected_weights = reference(q, k, v, mask, is_causal)
    output = attention.dot_product_attention(
        q, k, v, mask=mask, is_causal=is_causal, implementation=implementation
    )
    np.testing.assert_allclose(np.asarray(output), expected, atol=2e-6)
    if implementation != "fused":
        _, weights = attention.dot_product_attention(
            q,
            k,
            v,
            mask=mask,
            is_causal=is_causal,
            implementation=implementation,
            return_weights=True,
        )
        np.testing.assert_allclose(np.asarray(weights), expected_weights, atol=2e-6)


def test_custom_scale():
    q, k, v = _qkv()
    expected, _ = reference(q, k, v, scale=0.3)
    for implementation in ("xla", "chunked", "fused"):
        got = attention.dot_product_attention(q, k, v, scale=0.3, implementation=implementation)
        np.testing.assert_allclose(np.asarray(got), expected, atol=2e-6)


@pytest.mark.parametrize("block_size", [1, 3, 4, 7, 16])
@pytest.mark.parametrize("is_causal", [False, True])
def test_chunked_over_many_blocks_matches_reference(block_size, is_causal):
    # key length 10 is not a multiple of most block sizes: the last block is padded.
    q, k, v = _qkv(query_length=10, key_length=10)
    mask = MASKS["rank3"][:, :1, :1].repeat(10, 1).repeat(10, 2)  # (2, 10, 10)
    mask = np.asarray(attention.normalize_mask(mask, q, k))
    expected, _ = reference(q, k, v, mask, is_causal)
    got = chunked_attention(q, k, v, mask, is_causal, 0.5, block_size=block_size)
    expected, _ = reference(q, k, v, mask, is_causal, scale=0.5)
    np.testing.assert_allclose(np.asarray(got), expected, atol=2e-6)


def _fully_masked_mask():
    mask = np.ones((2, 1, 5, 7), bool)
    mask[0, 0, 1] = False  # query 1 of example 0 sees nothing
    mask[1, 0, 4] = False
    return mask


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_fully_masked_rows_give_zeros_and_finite_gradients(implementation, dtype):
    q, k, v = (keras.ops.cast(t, dtype) for t in _qkv())
    mask = _fully_masked_mask()
    output = attention.dot_product_attention(q, k, v, mask=mask, implementation=implementation)
    output = np.asarray(keras.ops.cast(output, "float32"))
    assert np.all(np.isfinite(output))
    np.testing.assert_array_equal(output[0, 1], 0.0)
    np.testing.assert_array_equal(output[1, 4], 0.0)
    assert np.abs(output[0, 0]).sum() > 0
    if implementation != "fused":
        _, weights = attention.dot_product_attention(
            q, k, v, mask=mask, implementation=implementation, return_weights=True
        )
        weights = np.asarray(keras.ops.cast(weights, "float32"))
        np.testing.assert_array_equal(weights[0, :, 1], 0.0)
        np.testing.assert_allclose(weights[0, :, 0].sum(-1), 1.0, atol=1e-2)

    q, k, v = (tf.Variable(t) for t in (q, k, v))
    with tf.GradientTape() as tape:
        out = attention.dot_product_attention(q, k, v, mask=mask, implementation=implementation)
        loss = tf.reduce_sum(tf.cast(out, "float32") ** 2)
    for gradient in tape.gradient(loss, [q, k, v]):
        assert np.all(np.isfinite(np.asarray(tf.cast(gradient, "float32"))))


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
def test_float16_logits_near_one_thousand_do_not_overflow(implementation):
    # q.k / sqrt(d) = 1000 on the first key and 990 on the others: softmax
    # must pick the first key, not produce inf or NaN.
    head_dim = 16
    q = np.zeros((1, 2, 1, head_dim), "float32")
    q[..., 0] = 1000.0 * np.sqrt(head_dim) / 40.0
    k = np.zeros((1, 3, 1, head_dim), "float32")
    k[0, :, 0, 0] = [40.0, 39.6, 39.6]
    v = rng.normal(size=(1, 3, 1, 5)).astype("float32")
    expected, _ = reference(q, k, v)
    got = attention.dot_product_attention(
        *(keras.ops.cast(t, "float16") for t in (q, k, v)), implementation=implementation
    )
    got = np.asarray(keras.ops.cast(got, "float32"))
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, expected, atol=2e-2)


def _loss_and_gradients(q, k, v, mask, is_causal, implementation, block_size=None):
    q, k, v = (tf.Variable(t) for t in (q, k, v))
    with tf.GradientTape() as tape:
        if block_size is None:
            out = attention.dot_product_attention(
                q, k, v, mask=mask, is_causal=is_causal, implementation=implementation
            )
        else:
            out = chunked_attention(q, k, v, mask, is_causal, 0.5, block_size=block_size)
        weights = tf.constant(np.linspace(-1, 1, np.prod(out.shape)).reshape(out.shape), out.dtype)
        loss = tf.reduce_sum(out * weights)
    return loss, [np.asarray(g) for g in tape.gradient(loss, [q, k, v])]


@pytest.mark.parametrize("is_causal", [False, True])
def test_chunked_gradients_equal_materialised_gradients(is_causal):
    q, k, v = _qkv(query_length=6, key_length=6)
    mask = np.asarray(attention.normalize_mask(MASKS["key_padding"][:, :, :, :6], q, k))
    _, expected = _loss_and_gradients(q, k, v, mask, is_causal, "xla")
    _, got = _loss_and_gradients(q, k, v, mask, is_causal, "chunked")
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, atol=1e-5)


def test_chunked_gradients_match_finite_differences():
    q, k, v = (t.astype("float64") for t in _qkv(batch=1, query_length=4, key_length=5, heads=2))
    mask = np.ones((1, 1, 4, 5), bool)
    mask[0, 0, 2, 1:] = False
    _, gradients = _loss_and_gradients(q, k, v, mask, True, None, block_size=2)

    def loss_of(q, k, v):
        out, _ = reference(q, k, v, mask, True, scale=0.5)
        return np.sum(out * np.linspace(-1, 1, out.size).reshape(out.shape))

    epsilon = 1e-6
    for index, tensor in enumerate((q, k, v)):
        numeric = np.zeros_like(tensor)
        for position in np.ndindex(tensor.shape):
            plus, minus = [t.copy() for t in (q, k, v)], [t.copy() for t in (q, k, v)]
            plus[index][position] += epsilon
            minus[index][position] -= epsilon
            numeric[position] = (loss_of(*plus) - loss_of(*minus)) / (2 * epsilon)
        np.testing.assert_allclose(gradients[index], numeric, atol=1e-6)


def test_chunked_under_xla_with_unknown_lengths():
    q, k, v = _qkv(query_length=9, key_length=11)
    expected, _ = reference(q, k, v, is_causal=True, scale=0.5)
    spec = tf.TensorSpec((None, None, 3, None), tf.float32)

    @tf.function(jit_compile=True, input_signature=[spec, spec, spec])
    def run(q, k, v):
        return chunked_attention(q, k, v, None, True, 0.5, block_size=4)

    np.testing.assert_allclose(np.asarray(run(q, k, v)), expected, atol=2e-6)


def _choose(
    query, key=None, value=None, mask=None, bias=None, window=None, dropout=False, weights=False
):
    key = query if key is None else key
    value = key if value is None else value
    return attention._choose_implementation(query, key, value, mask, bias, window, dropout, weights)


def test_auto_picks_chunked_for_long_sequences_only():
    q = keras.KerasTensor((1, 4096, 1, 8))
    assert _choose(q) == "chunked"
    assert _choose(q, dropout=True) == "xla"
    short = keras.KerasTensor((1, 128, 1, 8))
    assert _choose(short) == "xla"


def test_auto_never_picks_fused_off_a_jax_gpu():
    assert not attention._on_jax_gpu()  # this suite runs on TensorFlow, on the CPU
    q = keras.KerasTensor((1, 512, 2, 64), dtype="bfloat16")
    assert _choose(q) == "xla"


def _bf16(shape):
    return keras.KerasTensor(shape, dtype="bfloat16")


@pytest.mark.parametrize(
    "arguments, expected",
    [
        (dict(query=_bf16((2, 512, 4, 64))), "fused"),
        (dict(query=keras.KerasTensor((2, 512, 4, 64), dtype="float16")), "fused"),
        (dict(query=_bf16((2, 8192, 4, 64))), "fused"),  # before the chunked threshold
        (dict(query=keras.KerasTensor((2, 512, 4, 64))), "xla"),  # float32: no cuDNN
        (dict(query=_bf16((2, 197, 4, 64))), "xla"),  # odd length (a ViT's 196 + 1)
        (dict(query=_bf16((2, 512, 4, 12))), "xla"),  # head size not a multiple of 8
        (dict(query=_bf16((2, 512, 4, 256))), "xla"),  # head size over 128
        (dict(query=_bf16((2, 512, 4, 64)), key=_bf16((2, 512, 2, 64))), "xla"),  # grouped
        (dict(query=_bf16((2, 512, 4, 64)), value=_bf16((2, 512, 4, 32))), "xla"),
        (dict(query=_bf16((2, 512, 4, 64)), mask=np.ones((512, 512), bool)), "xla"),
        (dict(query=_bf16((2, 512, 4, 64)), bias=np.zeros((512, 512), "float32")), "xla"),
        (dict(query=_bf16((2, 8192, 4, 64)), window=256), "chunked"),
        (dict(query=_bf16((2, 512, 4, 64)), dropout=True), "xla"),
        (dict(query=_bf16((2, 512, 4, 64)), weights=True), "xla"),
    ],
)
def test_auto_picks_fused_where_cudnn_flash_attention_runs(monkeypatch, arguments, expected):
    # The rule as it would apply on JAX with a GPU; the kernels themselves are
    # compared with NumPy in the tests above, "fused" included.
    monkeypatch.setattr(attention, "_on_jax_gpu", lambda: True)
    assert _choose(**arguments) == expected


def test_auto_runs_the_fused_kernel_when_the_rule_says_so(monkeypatch):
    monkeypatch.setattr(attention, "_on_jax_gpu", lambda: True)
    calls = []
    fused = attention._fused_attention

    def counting_fused(*args, **kwargs):
        calls.append(args[0].shape)
        return fused(*args, **kwargs)

    monkeypatch.setattr(attention, "_fused_attention", counting_fused)
    local = np.random.default_rng(7)  # leaves the module's generator to the other tests
    q, k, v = (local.normal(size=(1, 6, 2, 8)).astype("float16") for _ in range(3))
    output = attention.dot_product_attention(q, k, v, is_causal=True)
    expected, _ = reference(*(x.astype("float32") for x in (q, k, v)), None, True)
    np.testing.assert_allclose(np.asarray(output, "float32"), expected, atol=5e-3)
    assert calls == [(1, 6, 2, 8)]
    attention.dot_product_attention(q, k, v, mask=np.tril(np.ones((6, 6), bool)))
    assert len(calls) == 1  # a mask keeps the call with our kernels


def test_dropout_only_in_training():
    q, k, v = _qkv()
    seed = keras.random.SeedGenerator(1)
    inference = attention.dot_product_attention(q, k, v, dropout_rate=0.5, seed=seed)
    trained = attention.dot_product_attention(q, k, v, dropout_rate=0.5, training=True, seed=seed)
    expected, _ = reference(q, k, v)
    np.testing.assert_allclose(np.asarray(inference), expected, atol=2e-6)
    assert not np.allclose(np.asarray(trained), expected, atol=1e-3)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"implementation": "flash"}, "implementation.*Received: implementation='flash'"),
        ({"dropout_rate": 1.5}, "dropout_rate.*Received: dropout_rate=1.5"),
        ({"mask": np.ones((1, 1, 1, 5, 7), bool)}, "mask.*rank.*Received: mask.shape"),
        ({"mask": np.ones((2, 4, 7), bool)}, "broadcast.*Received: mask.shape=\\(2, 4, 7\\)"),
        (
            {"implementation": "fused", "return_weights": True},
            "fused.*Received.*return_weights=True",
        ),
        (
            {"implementation": "chunked", "dropout_rate": 0.1, "training": True},
            "chunked.*dropout.*Received: dropout_rate=0.1",
        ),
    ],
)
def test_bad_arguments_raise(kwargs, match):
    q, k, v = _qkv()
    with pytest.raises(ValueError, match=match):
        attention.dot_product_attention(q, k, v, **kwargs)


@pytest.mark.parametrize(
    "shapes, match",
    [
        (((2, 5, 4), (2, 7, 3, 4), (2, 7, 3, 6)), "query.*4D.*Received: query.shape=\\(2, 5, 4\\)"),
        (((2, 5, 3, 4), (2, 7, 3, 5), (2, 7, 3, 6)), "head_dim.*Received: query.shape"),
        (((2, 5, 3, 4), (2, 7, 3, 4), (2, 8, 3, 6)), "same length.*Received: key.shape"),
        (((2, 5, 3, 4), (2, 7, 2, 4), (2, 7, 2, 6)), "heads size.*Received"),
    ],
)
def test_bad_shapes_raise(shapes, match):
    q, k, v = (np.zeros(s, "float32") for s in shapes)
    with pytest.raises(ValueError, match=match):
        attention.dot_product_attention(q, k, v)


@pytest.mark.parametrize("block_size", [1, 3, 4, 16])
@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("mask_name", ["none", "rank3"])
@pytest.mark.parametrize("lengths", [(10, 10), (6, 10)])
def test_chunked_gradients_over_tiles_equal_materialised(block_size, is_causal, mask_name, lengths):
    # Causal attention with known lengths is cut into query blocks as well as
    # key blocks, and skips the tiles the mask hides; lengths that are not
    # multiples of the block size leave padded rows in the last tiles.
    query_length, key_length = lengths
    q, k, v = _qkv(query_length=query_length, key_length=key_length)
    mask = None
    if mask_name == "rank3":
        mask = np.asarray(
            attention.normalize_mask(rng.random((2, query_length, key_length)) > 0.3, q, k)
        )
    expected_loss, expected = _loss_and_gradients(q, k, v, mask, is_causal, "xla")
    loss, got = _loss_and_gradients(q, k, v, mask, is_causal, None, block_size=block_size)
    np.testing.assert_allclose(float(loss), float(expected_loss), rtol=1e-5)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, atol=1e-5)


@pytest.mark.parametrize(
    "dtype, tolerance", [("float32", 2e-6), ("float16", 5e-3), ("bfloat16", 3e-2)]
)
@pytest.mark.parametrize("is_causal", [False, True])
def test_xla_compiled_attention_matches_reference_with_empty_rows(dtype, tolerance, is_causal):
    # Under XLA the "xla" kernel divides the output by the row sums instead of
    # normalising the weights; the result, the zero rows and the gradients
    # must not change.
    q, k, v = _qkv(query_length=5, key_length=7)
    mask = _fully_masked_mask()
    expected, _ = reference(q, k, v, mask, is_causal)
    expected_loss = np.sum(expected**2)
    variables = [tf.Variable(keras.ops.cast(t, dtype)) for t in (q, k, v)]

    @tf.function(jit_compile=True)
    def run():
        with tf.GradientTape() as tape:
            out = attention.dot_product_attention(
                *variables, mask=mask, is_causal=is_causal, implementation="xla"
            )
            loss = tf.reduce_sum(tf.cast(out, "float32") ** 2)
        return out, loss, tape.gradient(loss, variables)

    output, loss, gradients = run()
    output = np.asarray(tf.cast(output, "float32"))
    np.testing.assert_allclose(output, expected, atol=tolerance * 10, rtol=tolerance * 10)
    np.testing.assert_array_equal(output[0, 1], 0.0)
    np.testing.assert_array_equal(output[1, 4], 0.0)
    np.testing.assert_allclose(float(loss), expected_loss, rtol=tolerance * 10)
    for gradient in gradients:
        assert np.all(np.isfinite(np.asarray(tf.cast(gradient, "float32"))))


def test_xla_compiled_gradients_equal_the_eager_softmax_gradients():
    # Eager attention normalises the weights with softmax; compiled, it divides
    # the output by the row sums instead.
    q, k, v = _qkv(query_length=6, key_length=6)
    mask = np.asarray(attention.normalize_mask(MASKS["key_padding"][:, :, :, :6], q, k))
    expected_loss, expected = _loss_and_gradients(q, k, v, mask, True, "xla")
    compiled = tf.function(_loss_and_gradients_in_graph, jit_compile=True)
    loss, gradients = compiled(q, k, v, mask)
    # float32 sums in another order: a few units in the last place apart.
    np.testing.assert_allclose(float(loss), float(expected_loss), rtol=1e-5)
    for gradient, eager in zip(gradients, expected):
        np.testing.assert_allclose(np.asarray(gradient), eager, atol=1e-5)


def _loss_and_gradients_in_graph(q, k, v, mask):
    with tf.GradientTape() as tape:
        tape.watch([q, k, v])
        out = attention.dot_product_attention(
            q, k, v, mask=mask, is_causal=True, implementation="xla"
        )
        weights = tf.constant(np.linspace(-1, 1, np.prod(out.shape)).reshape(out.shape), out.dtype)
        loss = tf.reduce_sum(out * weights)
    return loss, tape.gradient(loss, [q, k, v])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_compiled_attention_does_not_overflow_over_many_keys(dtype):
    # Uniform attention over 4096 keys that all hold 20: the output is 20, but
    # an unnormalised sum over the keys (81920) would overflow float16.
    q = np.zeros((1, 2, 1, 8), "float32")
    k = np.zeros((1, 4096, 1, 8), "float32")
    v = np.full((1, 4096, 1, 8), 20.0, "float32")
    q, k, v = (keras.ops.cast(t, dtype) for t in (q, k, v))
    run = tf.function(
        lambda q, k, v: attention.dot_product_attention(q, k, v, implementation="xla"),
        jit_compile=True,
    )
    np.testing.assert_allclose(np.asarray(tf.cast(run(q, k, v), "float32")), 20.0, rtol=1e-2)
