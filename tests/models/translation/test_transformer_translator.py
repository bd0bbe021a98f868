import keras
import numpy as np
import pytest
import tensorflow as tf
from full_pass_greedy import greedy_by_full_passes
from model_checks import assert_first_cached_step_matches_the_full_pass
from model_checks import assert_fits_one_step_under_mirrored_strategy
from model_checks import assert_keras_file_round_trip
from model_checks import assert_mixed_precision_forward_is_finite
from model_checks import assert_registered_with_its_constructor_arguments
from model_checks import fit_with_xla
from tiny_models import TRANSFORMER_SIZES
from tiny_models import TRANSLATOR_LENGTHS
from tiny_models import TRANSLATOR_VOCABULARIES
from toy_translation_tasks import START
from toy_translation_tasks import toy_translation_task

from keras_attention.generation.decoding_protocol import decoder_for_model
from keras_attention.generation.greedy_search import greedy_search
from keras_attention.losses.masked_cross_entropy import masked_sparse_categorical_crossentropy
from keras_attention.metrics.masked_accuracy import MaskedSparseCategoricalAccuracy
from keras_attention.models.translation.transformer_translator import TransformerTranslator
from keras_attention.models.translation.transformer_translator import transformer_translator
from keras_attention.serving.translation_export import export_translator
from keras_attention.text.reversible_tokenizer import ReversibleTokenizer

SIZES = {**TRANSLATOR_VOCABULARIES, **TRANSLATOR_LENGTHS, **TRANSFORMER_SIZES}


@pytest.mark.parametrize("policy", ["float32", "mixed_bfloat16"])
def test_forward_shapes_and_float32_logits(policy):
    keras.config.set_dtype_policy(policy)
    model = transformer_translator(**SIZES, norm_first=True)
    inputs, _ = toy_translation_task(3)
    assert tuple(model(inputs).shape) == (3, 7, 12)
    assert_mixed_precision_forward_is_finite(model, inputs)
    names = {layer.name for layer in model.layers}
    assert {
        "source_embedding",
        "encoder_block_0",
        "encoder_final_norm",
        "target_embedding",
        "decoder_block_0",
        "decoder_final_norm",
        "logits",
    } <= names


@pytest.mark.parametrize("norm_first", [False, True])
def test_padding_does_not_change_the_logits(norm_first):
    model = transformer_translator(**SIZES, norm_first=norm_first, dropout=0.0)
    target = np.array([[START, 4, 5], [START, 6, 0]])
    short = np.array([[7, 8, 9, 0], [10, 0, 0, 0]])
    long = np.concatenate([short, np.zeros((2, 4), "int32")], axis=1)  # more padding
    expected = np.asarray(model({"source": short, "target": target}))
    got = np.asarray(model({"source": long, "target": target}))
    np.testing.assert_allclose(got, expected, atol=1e-5)
    # Each example is independent of the others' lengths...
    alone = np.asarray(model({"source": short[1:, :1], "target": target[1:]}))
    np.testing.assert_allclose(alone[0, :2], expected[1, :2], atol=1e-5)
    # ...while a real source token does count.
    changed = np.asarray(model({"source": short + [[0, 0, 1, 0], [0, 0, 0, 0]], "target": target}))
    assert not np.allclose(changed[0], expected[0], atol=1e-4)


def test_fit_with_xla_lowers_the_masked_loss_on_a_copy_task():
    inputs, labels = toy_translation_task(64)
    model = transformer_translator(**SIZES, dropout=0.0)
    history = fit_with_xla(model, inputs, labels, 5e-3, epochs=8, batch_size=16)
    assert history["loss"][-1] < 0.75 * history["loss"][0]
    assert history["masked_accuracy"][-1] > history["masked_accuracy"][0]


def test_keras_file_round_trip(tmp_path):
    model = transformer_translator(**SIZES, norm_first=True)
    model.compile(
        "sgd",
        loss=masked_sparse_categorical_crossentropy,
        metrics=[MaskedSparseCategoricalAccuracy()],
    )
    inputs, labels = toy_translation_task(4)
    reloaded = assert_keras_file_round_trip(model, inputs, tmp_path, TransformerTranslator)
    assert_first_cached_step_matches_the_full_pass(reloaded, inputs)
    np.testing.assert_allclose(
        reloaded.evaluate(inputs, labels, verbose=0),
        model.evaluate(inputs, labels, verbose=0),
        rtol=1e-5,
    )


def test_fits_one_step_under_mirrored_strategy():
    inputs, labels = toy_translation_task(8)
    assert_fits_one_step_under_mirrored_strategy(
        lambda: transformer_translator(**SIZES), inputs, labels
    )


def test_a_registered_class_whose_config_holds_the_constructor_arguments():
    model = transformer_translator(**SIZES)
    assert_registered_with_its_constructor_arguments(TransformerTranslator, model, SIZES)


def test_attention_maps_match_numpy_and_the_cached_decoding_steps():
    model = transformer_translator(**{**SIZES, "num_layers": 2})
    source = np.array([[4, 5, 6, 0], [7, 8, 0, 0]], "int32")
    target = np.array([[START, 9, 10], [START, 11, 0]], "int32")
    maps = model.attention_maps(source, target)
    assert maps["encoder"].shape == (2, 2, 2, 4, 4)
    assert maps["decoder"].shape == (2, 2, 2, 3, 3)
    assert maps["cross"].shape == (2, 2, 2, 3, 4)
    # Layer 0's encoder attention, from its weights in NumPy: softmax(q k^T / sqrt(d)).
    x = np.asarray(model.source_embedding(source), np.float64)  # (B, S, D)
    wq, bq, wk, bk = (np.asarray(w, np.float64) for w in model.encoder_blocks[0].get_weights()[:4])
    q = np.einsum("bsd,dhk->bshk", x, wq) + bq
    k = np.einsum("bsd,dhk->bshk", x, wk) + bk
    logits = np.einsum("bqhk,bshk->bhqs", q, k) / np.sqrt(q.shape[-1])
    logits = np.where((source != 0)[:, None, None, :], logits, -np.inf)
    expected = np.exp(logits - logits.max(-1, keepdims=True))
    expected /= expected.sum(-1, keepdims=True)
    np.testing.assert_allclose(maps["encoder"][:, 0], expected, atol=1e-5)
    # Causal decoder attention and padded source keys get no weight.
    assert np.all(np.triu(maps["decoder"], k=1) == 0.0)
    assert np.all(maps["cross"][1, ..., 2:] == 0.0)
    # The teacher-forced cross-attention is what the cached decoding steps report
    # (last block, mean over heads) when fed the same tokens.
    state = model.encode(source)
    cache = model.initial_cache(state, 2, 3)
    for index in range(3):
        _, cache, step_attention = model.step(target[:, index], index, cache, state)
        np.testing.assert_allclose(
            np.asarray(step_attention)[0], maps["cross"][0, -1, :, index].mean(0), atol=1e-5
        )


# ---------------------------------------------------------------------------
# Grouped-query (`num_key_value_heads`) and multi-query (1) attention.

GROUPED = {**SIZES, "num_heads": 4, "num_key_value_heads": 2}


def test_grouped_query_translator_round_trips_through_a_keras_file(tmp_path):
    model = transformer_translator(**GROUPED, norm_first=True)
    assert model.get_config()["num_key_value_heads"] == 2
    assert_registered_with_its_constructor_arguments(TransformerTranslator, model, GROUPED)
    for block in model.encoder_blocks + model.decoder_blocks:
        assert block.num_key_value_heads == 2
    inputs, _ = toy_translation_task(4)
    reloaded = assert_keras_file_round_trip(model, inputs, tmp_path, TransformerTranslator)
    assert reloaded.get_config()["num_key_value_heads"] == 2
    assert_first_cached_step_matches_the_full_pass(reloaded, inputs)


def _decoding_cache_bytes(model, batch_size):
    """Bytes of every key/value cache decoding allocates: self-attention and cross-attention."""
    source = np.ones((batch_size, model.max_source_length), "int32")
    state = model.encode(source)
    caches = list(model.initial_cache(state, batch_size, model.max_length).values())
    caches += [value for name, value in state.items() if name.startswith("cross_attention")]
    assert len(caches) == 2 * model.num_layers
    return sum(np.asarray(cache).nbytes for cache in caches)


@pytest.mark.parametrize("num_key_value_heads", [2, 1], ids=["grouped", "multi_query"])
def test_grouped_caches_take_key_value_heads_over_heads_of_the_multi_head_bytes(
    num_key_value_heads,
):
    sizes = {**SIZES, "num_heads": 4, "num_layers": 2}
    multi_head = _decoding_cache_bytes(transformer_translator(**sizes), batch_size=3)
    grouped = transformer_translator(**sizes, num_key_value_heads=num_key_value_heads)
    # 2 layers x (self: 3 x 2 x 8 x 4 x 4 + cross: 3 x 2 x 8 x 4 x 4) float32 numbers.
    assert multi_head == 2 * 2 * (3 * 2 * 8 * 4 * 4) * 4
    assert _decoding_cache_bytes(grouped, batch_size=3) * 4 == multi_head * num_key_value_heads
    state = grouped.encode(np.ones((3, 8), "int32"))
    cache = grouped.initial_cache(state, 3, 8)
    assert tuple(cache["self_attention_cache_0"].shape) == (3, 2, 8, num_key_value_heads, 4)
    assert tuple(state["cross_attention_cache_0"].shape) == (3, 2, 8, num_key_value_heads, 4)


def test_a_grouped_query_translator_exported_as_a_saved_model_translates(tmp_path):
    encoder = ReversibleTokenizer.train(["a b c", "c b a", "b b a c"], 300)
    size = encoder.vocabulary_size
    keras.utils.set_random_seed(2)
    model = transformer_translator(
        **{**GROUPED, "source_vocabulary_size": size, "target_vocabulary_size": size},
        dropout=0.0,
    )
    path = export_translator(
        model, tmp_path / "translator", encoder, encoder, max_source_length=8, max_target_length=8
    )
    serve = tf.saved_model.load(path).signatures["serving_default"]
    sentences = ["a b c", "c a", "b"]
    served = serve(text=tf.constant(sentences))
    # The ids the graph decodes are those of greedy search on the model here...
    source_ids = encoder.encode(sentences, 8)
    start, end = encoder.start_id, encoder.end_id
    tokens, attention = greedy_search(decoder_for_model(model), source_ids, start, end, 8)
    expected = [text.decode("utf-8") for text in encoder.decode(tokens).numpy()]
    assert [text.decode("utf-8") for text in served["translation"].numpy()] == expected
    np.testing.assert_allclose(served["attention"].numpy(), np.asarray(attention), atol=1e-5)
    # ...which are those of the whole model re-run on each prefix, without caches.
    full_pass = greedy_by_full_passes(
        model, {"source": np.asarray(source_ids)}, "target", start, end, 8
    )
    np.testing.assert_array_equal(np.asarray(tokens), full_pass)


def test_marian_style_options_are_checked():
    sizes = dict(max_source_length=6, max_target_length=5, hidden_dim=8, num_heads=2)
    with pytest.raises(ValueError, match=r"Received: position_encoding='rotary'"):
        TransformerTranslator(12, 12, position_encoding="rotary", **sizes)
    with pytest.raises(ValueError, match=r"source_vocabulary_size=12, target_vocabulary_size=10"):
        TransformerTranslator(12, 10, tie_embeddings=True, **sizes)
    tied = TransformerTranslator(12, 12, tie_embeddings=True, intermediate_dim=8, **sizes)
    # One table serves both sides and the output: no separate logits layer.
    assert tied.source_embedding is tied.target_embedding is tied.shared_embedding
    assert not any("logits/" in weight.path for weight in tied.weights)
