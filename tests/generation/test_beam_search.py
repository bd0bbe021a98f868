import keras
import numpy as np
import pytest
from tiny_models import tiny_rnn_attention_translator
from tiny_models import tiny_transformer_translator
from toy_decoders import END
from toy_decoders import START
from toy_decoders import TableDecoder
from toy_decoders import brute_force_best
from toy_decoders import expected_attention
from toy_decoders import gnmt_penalty
from toy_decoders import padded
from toy_decoders import sequence_log_prob

from keras_attention.generation.beam_search import beam_search
from keras_attention.generation.beam_search import length_penalty
from keras_attention.generation.decoding_protocol import decoder_for_model
from keras_attention.generation.greedy_search import greedy_search

# Two kinds of example (inputs[:, 0] = 1 or 2), the second with a padded source.
TOY_INPUTS = np.array([[1, 5, 5, 5], [2, 7, 0, 0]])
TOY_MASK = TOY_INPUTS != 0


def _random_tables(seed, max_length=4, vocabulary=5):
    rng = np.random.default_rng(seed)
    return rng.normal(scale=2.0, size=(2, max_length) + (vocabulary,) * 3).astype("float32")


@pytest.mark.parametrize("seed, alpha", [(0, 0.0), (1, 0.6), (2, 2.0)])
def test_exhaustive_beam_finds_the_brute_force_best(seed, alpha):
    # 121 hypotheses exist for 3 non-end tokens and 4 steps; 128 beams keep them all.
    tables = _random_tables(seed)
    tokens, attention, scores = beam_search(
        TableDecoder(tables),
        TOY_INPUTS,
        START,
        END,
        max_length=4,
        beam_width=128,
        length_penalty=alpha,
        jit_compile=False,
    )
    for example in range(2):
        best, best_score = brute_force_best(tables, example, 4, alpha)
        assert np.asarray(tokens[example]).tolist() == padded(best, 4)
        np.testing.assert_allclose(float(scores[example]), best_score, rtol=1e-5)
        expected = np.zeros((4, 4), "float32")
        expected[: len(best)] = expected_attention(best, 4, TOY_MASK[example])
        np.testing.assert_array_equal(np.asarray(attention[example]), expected)


def _two_step_tables(first_probabilities, after_token):
    """Tables of probabilities: the first token, then the next one after each first token."""
    probabilities = np.full((2, 3, 5, 5, 5), 0.2)
    probabilities[:, 0, 0, START] = first_probabilities
    for token, following in after_token.items():
        probabilities[:, 1, START, token] = following
    probabilities[:, 2] = [1e-4, 1e-4, 1.0, 1e-4, 1e-4]  # always end by the third token
    return np.log(probabilities).astype("float32")


def test_a_wider_beam_finds_what_greedy_misses():
    # Token 3 is likelier first, but everything after it is uncertain; after 4
    # the end is near-certain, so [4, END] beats every sequence starting with 3.
    tables = _two_step_tables(
        first_probabilities=[0.01, 0.01, 0.03, 0.5, 0.45],
        after_token={3: [0.01, 0.01, 0.33, 0.32, 0.33], 4: [0.01, 0.01, 0.96, 0.01, 0.01]},
    )
    decoder = TableDecoder(tables)
    greedy, _ = greedy_search(decoder, TOY_INPUTS, START, END, 3, jit_compile=False)
    beam, _, scores = beam_search(
        decoder, TOY_INPUTS, START, END, 3, beam_width=2, length_penalty=0.0, jit_compile=False
    )
    best, best_score = brute_force_best(tables, 0, 3, alpha=0.0)
    assert best == [4, END]
    assert np.asarray(beam[0]).tolist() == padded(best, 3)
    assert np.asarray(greedy[0]).tolist()[0] == 3  # greedy commits to the likelier first token
    np.testing.assert_allclose(float(scores[0]), best_score, rtol=1e-5)


def test_the_length_penalty_decides_between_short_and_long():
    # [END] at once (p ~ 0.54) against [3, 3, END] (p ~ 0.46 * 0.89 * 0.99 ~ 0.41): the
    # first wins on probability, the second once longer sequences are favoured.
    probabilities = np.full((2, 3, 5, 5, 5), 1e-3)
    probabilities[:, 0, 0, START, [END, 3]] = [0.35, 0.3]
    probabilities[:, 1, START, 3, [END, 3]] = [0.1, 0.85]
    probabilities[:, 2, 3, 3, END] = 0.9
    tables = np.log(probabilities).astype("float32")
    for alpha in (0.0, 3.0):
        expected, expected_score = brute_force_best(tables, 0, 3, alpha)
        tokens, _, scores = beam_search(
            TableDecoder(tables),
            TOY_INPUTS,
            START,
            END,
            3,
            beam_width=3,
            length_penalty=alpha,
            jit_compile=False,
        )
        assert np.asarray(tokens[0]).tolist() == padded(expected, 3)
        np.testing.assert_allclose(float(scores[0]), expected_score, rtol=1e-5)
    # The two settings must disagree, or the test shows nothing about the penalty.
    assert brute_force_best(tables, 0, 3, 0.0)[0] != brute_force_best(tables, 0, 3, 3.0)[0]


def test_length_penalty_formula():
    lengths = np.array([1, 4, 9])
    np.testing.assert_allclose(
        np.asarray(length_penalty(lengths, 0.6)), gnmt_penalty(lengths, 0.6), rtol=1e-6
    )


def test_beam_width_one_is_greedy_on_the_toy():
    tables = _random_tables(3)
    decoder = TableDecoder(tables)
    greedy_tokens, greedy_attention = greedy_search(
        decoder, TOY_INPUTS, START, END, 4, jit_compile=False
    )
    tokens, attention, scores = beam_search(
        decoder, TOY_INPUTS, START, END, 4, beam_width=1, length_penalty=0.6, jit_compile=False
    )
    np.testing.assert_array_equal(np.asarray(tokens), np.asarray(greedy_tokens))
    np.testing.assert_array_equal(np.asarray(attention), np.asarray(greedy_attention))
    for example in range(2):
        sequence = [t for t in np.asarray(tokens[example]).tolist() if t != 0]
        expected = sequence_log_prob(tables, example, sequence) / gnmt_penalty(len(sequence), 0.6)
        np.testing.assert_allclose(float(scores[example]), expected, rtol=1e-5)


def test_stops_when_every_hypothesis_has_ended_and_does_not_retrace():
    # Whatever the first token, the second is the end: two steps, not six.
    probabilities = np.full((2, 6, 5, 5, 5), 1e-4)
    probabilities[:, 0, 0, START, [END, 3, 4]] = [0.2, 0.5, 0.3]
    probabilities[:, 1, :, :, END] = 1.0
    decoder = TableDecoder(np.log(probabilities), count_steps=True)
    tokens, _, _ = beam_search(decoder, TOY_INPUTS, START, END, 6, beam_width=2)
    assert decoder.steps.numpy() == 2
    assert np.asarray(tokens).tolist() == [[3, END, 0, 0, 0, 0]] * 2
    beam_search(decoder, TOY_INPUTS + 0, START, END, 6, beam_width=2)
    assert decoder.traces == 1
    beam_search(decoder, TOY_INPUTS[:1], START, END, 6, beam_width=2)
    assert decoder.traces == 2  # a new batch size is a new program


def _score_with_full_model(model, source, sequence, alpha):
    """sum_t log p(y_t | y_<t) from full passes of the model, over the penalty."""
    target = np.array([[START] + sequence[:-1]])
    logits = np.asarray(model({"source": source[None], "target": target}))[0].astype("float64")
    logits[:, 0] = -np.inf  # the padding id is never produced
    shifted = logits - logits.max(-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    total = sum(log_probs[index, token] for index, token in enumerate(sequence))
    return total / gnmt_penalty(len(sequence), alpha)


# Beam search's batch and padding checks run on both kinds of translator.
SMALL = dict(source_vocabulary_size=11, target_vocabulary_size=9, dropout=0.0)


def _tiny_transformer():
    lengths = dict(max_source_length=5, max_target_length=5)
    return tiny_transformer_translator(**SMALL, **lengths, hidden_dim=8, intermediate_dim=8)


def _tiny_multi_query_transformer():
    lengths = dict(max_source_length=5, max_target_length=5)
    sizes = dict(hidden_dim=8, intermediate_dim=8, num_key_value_heads=1)
    return tiny_transformer_translator(**SMALL, **lengths, **sizes)


def _tiny_rnn():
    luong = dict(cell="lstm", attention="additive", attention_style="luong", input_feeding=True)
    return tiny_rnn_attention_translator(**SMALL, **luong, embedding_dim=4, units=8)


SOURCES = np.array([[3, 4, 5, 6, 7], [8, 9, 0, 0, 0], [10, 3, 4, 0, 0]])


@pytest.mark.parametrize(
    "build",
    [_tiny_transformer, _tiny_multi_query_transformer, _tiny_rnn],
    ids=["transformer", "multi_query_transformer", "rnn"],
)
def test_batch_of_different_source_lengths_decodes_as_each_alone(build):
    # The encoder output and its mask must be repeated beam by beam; tiling
    # them the other way round would mix up the examples' sources.
    model = build()
    decoder = decoder_for_model(model)
    arguments = dict(start_id=START, end_id=END, max_length=5, beam_width=3, jit_compile=False)
    tokens, attention, scores = beam_search(decoder, SOURCES, **arguments)
    for example, source in enumerate(SOURCES):
        alone_tokens, alone_attention, alone_scores = beam_search(
            decoder, source[None], **arguments
        )
        np.testing.assert_array_equal(np.asarray(tokens[example]), np.asarray(alone_tokens[0]))
        np.testing.assert_allclose(
            np.asarray(attention[example]), np.asarray(alone_attention[0]), atol=1e-5
        )
        np.testing.assert_allclose(float(scores[example]), float(alone_scores[0]), rtol=1e-4)
        # No attention on padding, and the score is the full model's.
        assert np.all(np.asarray(attention[example])[:, source == 0] == 0)
        sequence = [t for t in np.asarray(tokens[example]).tolist() if t != 0]
        expected = _score_with_full_model(model, source, sequence, 0.6)
        np.testing.assert_allclose(float(scores[example]), expected, rtol=1e-4)


def test_beam_width_one_is_greedy_on_a_translator():
    decoder = decoder_for_model(_tiny_transformer())
    arguments = dict(start_id=START, end_id=END, max_length=5, jit_compile=False)
    greedy_tokens, greedy_attention = greedy_search(decoder, SOURCES, **arguments)
    tokens, attention, _ = beam_search(decoder, SOURCES, beam_width=1, **arguments)
    np.testing.assert_array_equal(np.asarray(tokens), np.asarray(greedy_tokens))
    np.testing.assert_allclose(np.asarray(attention), np.asarray(greedy_attention), atol=1e-6)


@pytest.mark.parametrize("build", [_tiny_transformer, _tiny_rnn], ids=["transformer", "rnn"])
def test_mixed_bfloat16_decoding_under_xla(build):
    keras.config.set_dtype_policy("mixed_bfloat16")
    model = build()
    tokens, attention, scores = beam_search(
        decoder_for_model(model), SOURCES, START, END, 5, beam_width=2
    )
    tokens, attention, scores = np.asarray(tokens), np.asarray(attention), np.asarray(scores)
    assert scores.dtype == np.float32 and np.all(np.isfinite(scores)) and np.all(scores < 0)
    assert np.all((tokens >= 0) & (tokens < 9))
    live = tokens != 0
    np.testing.assert_allclose(attention.sum(-1)[live], 1.0, atol=2e-2)  # bfloat16 weights


def test_bad_arguments():
    decoder = TableDecoder(_random_tables(0))
    with pytest.raises(ValueError, match="beam_width.*Received: beam_width=0"):
        beam_search(decoder, TOY_INPUTS, START, END, 4, beam_width=0)
    with pytest.raises(ValueError, match="length_penalty.*Received: length_penalty=-1"):
        beam_search(decoder, TOY_INPUTS, START, END, 4, length_penalty=-1)
    with pytest.raises(ValueError, match="end_id.*Received: end_id=5"):
        beam_search(decoder, TOY_INPUTS, START, 5, 4)
    with pytest.raises(ValueError, match="at most 4.*Received: max_length=5"):
        beam_search(decoder, TOY_INPUTS, START, END, 5)
