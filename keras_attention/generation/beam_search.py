"""Beam search with the GNMT length penalty, for encoder-decoder models."""

import keras
from keras import ops

from keras_attention.backend_support import require_tensorflow_backend
from keras_attention.generation import search_common as common


def length_penalty(length, alpha):
    """The GNMT length normaliser `((5 + length) / 6) ** alpha`.

    Wu et al., "Google's Neural Machine Translation System"
    (https://arxiv.org/abs/1609.08144), section 7. Scores are divided by it,
    so `alpha > 0` favours longer sequences and `alpha = 0` leaves them as
    they are.

    Args:
        length: number of tokens (int or tensor).
        alpha: the strength of the penalty, >= 0.

    Returns:
        The penalty, float32, of the shape of `length`.

    Example:

    >>> float(length_penalty(7, 0.5))
    1.4142...
    """
    length = ops.cast(length, "float32")
    return ops.power((5.0 + length) / 6.0, alpha)


def beam_search(
    decoder,
    inputs,
    start_id,
    end_id,
    max_length,
    beam_width=4,
    length_penalty=0.6,
    jit_compile=True,
):
    """Decodes the most likely sequences with a beam of `beam_width` hypotheses.

    Every example keeps `beam_width` hypotheses. At each step each live
    hypothesis is extended by every token and each finished one is carried
    as it is; the `beam_width` best candidates under the normalised score

        score(Y) = sum_t log p(y_t | y_<t, x) / ((5 + |Y|) / 6) ** length_penalty

    (|Y| counts the produced tokens, `end_id` included) survive. The encoder
    output and its mask are repeated for every beam, so examples of
    different source lengths in one batch decode as they would alone. The
    search runs as one XLA program (one `keras.ops.while_loop`) traced once
    per input shape, and stops when every hypothesis of every example has
    ended. The padding id 0 is never produced. With `beam_width=1` it is
    greedy search.

    Args:
        decoder, inputs, start_id, end_id, max_length: as for
            `greedy_search` (the model, its encoder input, the first token
            fed, the token that ends a sequence, the most tokens produced).
        beam_width: number of hypotheses kept per example.
        length_penalty: GNMT's `alpha` >= 0; 0 ranks by log-probability.
        jit_compile: compile the search with XLA.

    Returns:
        `(tokens, attention, scores)` for the best hypothesis of each
        example: `tokens` `(B, max_length)` int32 (without `start_id`, with
        `end_id`, then 0s); `attention` `(B, max_length, S...)` float32, the
        attention weights on the encoder output when each token was chosen;
        `scores` `(B,)` float32, the normalised log-probability above.

    Example:

    >>> import numpy as np
    >>> from keras_attention.models.translation.transformer_translator import TransformerTranslator
    >>> model = TransformerTranslator(12, 12, 6, 5, hidden_dim=8, num_layers=1, num_heads=2,
    ...                               intermediate_dim=16)
    >>> tokens, attention, scores = beam_search(
    ...     model, np.array([[4, 5, 6, 0], [7, 0, 0, 0]]), start_id=1,
    ...     end_id=2, max_length=5, beam_width=3)
    >>> tuple(tokens.shape), tuple(attention.shape), tuple(scores.shape)
    ((2, 5), (2, 5, 4), (2,))
    """
    require_tensorflow_backend("beam_search (compiled with tf.function)")
    common.check_search_arguments(decoder, start_id, end_id, max_length)
    common.check_positive_int("beam_width", beam_width)
    alpha = length_penalty
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or alpha < 0:
        raise ValueError(
            f"`length_penalty` must be a number >= 0. Received: length_penalty={alpha!r}"
        )
    settings = (int(start_id), int(end_id), int(max_length), int(beam_width), float(alpha))

    def make_search():
        def search(inputs):
            return _beam_loop(decoder, inputs, *settings)

        return search

    search = common.compiled_search(decoder, ("beam",) + settings, make_search, jit_compile)
    return search(inputs)


def _normalised(log_probs, lengths, alpha):
    """Log-probabilities divided by the length penalty of `lengths`."""
    return log_probs / length_penalty(lengths, alpha)


def _beam_loop(decoder, inputs, start_id, end_id, max_length, beam_width, alpha):
    """The traced search: encode, extend the beams until all end, pick the best.

    Returns `(tokens, attention, scores)` as `beam_search` describes them.
    """
    encoder_state = decoder.encode(inputs)
    batch_size, attention_shape = common.batch_and_positions(common.memory_mask_of(encoder_state))
    # Hypotheses are flattened batch-major: row b * beam_width + k.
    encoder_state = keras.tree.map_structure(
        lambda value: ops.repeat(value, beam_width, axis=0),
        encoder_state,  # (B * K, ...)
    )
    state = _initial_beam_state(
        decoder, encoder_state, batch_size, beam_width, start_id, max_length, attention_shape
    )

    def decode_one(index, state):
        """Extend every hypothesis by one token and keep the `beam_width` best of each example."""
        logits, cache, attention = decoder.step(
            state["previous"], index, state["cache"], encoder_state
        )
        vocabulary_size = logits.shape[-1]
        log_probs = common.next_token_log_probs(logits)  # (B * K, V)
        log_probs = ops.reshape(log_probs, (batch_size, beam_width, vocabulary_size))  # (B, K, V)
        chosen = _choose_candidates(state, log_probs, index, end_id, alpha)
        return index + 1, _follow_parents(
            state, chosen, cache, attention, index, batch_size, beam_width
        )

    state = common.decode_until_finished(decode_one, state, max_length)
    return _best_hypotheses(state, batch_size, beam_width, alpha)


def _initial_beam_state(
    decoder, encoder_state, batch_size, beam_width, start_id, max_length, attention_shape
):
    """The loop state before the first step, with one live hypothesis per example.

    The other hypotheses start dead (finished with an impossible score), so
    the first step does not fill the beam with copies of one sequence.
    """
    first = ops.equal(ops.arange(beam_width), 0)[None, :]  # (1, K)
    state = common.initial_loop_state(
        decoder, encoder_state, batch_size * beam_width, start_id, max_length, attention_shape
    )
    state["log_probs"] = ops.tile(
        ops.cast(ops.where(first, 0.0, common.IMPOSSIBLE), "float32"), (batch_size, 1)
    )
    state["lengths"] = ops.zeros((batch_size, beam_width), "int32")
    state["finished"] = ops.tile(ops.logical_not(first), (batch_size, 1))
    return state


def _choose_candidates(state, log_probs, index, end_id, alpha):
    """The `K` best extensions of each example's beam at step `index`.

    Args:
        state: the loop state (`log_probs`, `lengths`, `finished` are (B, K)).
        log_probs: (B, K, V) log-probabilities of the next token (K and V
            known when tracing).
        index: the step, so a live hypothesis grows to `index + 1` tokens.
        end_id: the token that finishes a hypothesis.
        alpha: the length penalty.

    Returns:
        A dict of (B, K) tensors: `parent` (the beam each one extends),
        `token`, `log_probs`, `lengths`, `finished` and `parent_finished`.
    """
    batch_size = ops.shape(log_probs)[0]
    beam_width, vocabulary_size = log_probs.shape[1:]
    finished, lengths = state["finished"], state["lengths"]
    # A live hypothesis extends by any token; a finished one stays as it
    # is, which the padding slot (token 0) stands for.
    extended = state["log_probs"][..., None] + log_probs  # (B, K, V)
    is_padding = ops.equal(ops.arange(vocabulary_size), common.PADDING_ID)  # (V,)
    kept = ops.where(is_padding, state["log_probs"][..., None], common.IMPOSSIBLE)  # (B, K, V)
    candidates = ops.where(finished[..., None], kept, extended)  # (B, K, V)
    candidate_lengths = ops.where(finished, lengths, index + 1)  # (B, K)
    ranking = _normalised(candidates, candidate_lengths[..., None], alpha)  # (B, K, V)
    flat_shape = (batch_size, beam_width * vocabulary_size)
    # (B, K * V) -> the K best candidates (B, K), as indices parent * V + token
    _, chosen = ops.top_k(ops.reshape(ranking, flat_shape), beam_width)
    parent = chosen // vocabulary_size  # (B, K)
    token = ops.cast(chosen % vocabulary_size, "int32")  # (B, K)
    new_log_probs = ops.take_along_axis(
        ops.reshape(candidates, flat_shape),
        chosen,
        axis=1,  # (B, K * V) -> (B, K)
    )
    parent_finished = ops.take_along_axis(finished, parent, axis=1)  # (B, K)
    new_finished = ops.logical_or(
        ops.logical_or(parent_finished, ops.equal(token, end_id)),
        ops.less(new_log_probs, common.IMPOSSIBLE / 2),  # a dead hypothesis
    )
    return {
        "parent": parent,
        "token": token,
        "log_probs": new_log_probs,
        "lengths": ops.take_along_axis(candidate_lengths, parent, axis=1),  # (B, K)
        "finished": new_finished,
        "parent_finished": parent_finished,
    }


def _follow_parents(state, chosen, cache, attention, index, batch_size, beam_width):
    """The next loop state: each new hypothesis takes its parent's rows, then its token.

    Args:
        state: the loop state before the step.
        chosen: the dict of `_choose_candidates`.
        cache: the decoder cache after the step, (B * K, ...) rows.
        attention: (B * K, S...) attention weights of the step.
        index: the step, where the token and attention are written.
        batch_size, beam_width: B and K.
    """
    beams = batch_size * beam_width
    rows = ops.reshape(
        ops.arange(batch_size)[:, None] * beam_width + chosen["parent"], (beams,)
    )  # (B * K,) parent row of every new hypothesis
    token = ops.reshape(chosen["token"], (beams,))  # (B * K,)
    parent_finished = ops.reshape(chosen["parent_finished"], (beams,))  # (B * K,)
    attention = ops.take(ops.cast(attention, "float32"), rows, axis=0)  # (B * K, S...)
    attention = common.zero_where(parent_finished, attention)

    def reorder(value):
        return ops.take(value, rows, axis=0)  # each new hypothesis gets its parent's row

    return {
        "tokens": common.write_at(reorder(state["tokens"]), index, token),
        "attention": common.write_at(reorder(state["attention"]), index, attention),
        "previous": token,
        "log_probs": chosen["log_probs"],
        "lengths": chosen["lengths"],
        "finished": chosen["finished"],
        "cache": keras.tree.map_structure(reorder, cache),
    }


def _best_hypotheses(state, batch_size, beam_width, alpha):
    """`(tokens, attention, scores)` of the best-scoring hypothesis of each example."""
    scores = _normalised(state["log_probs"], state["lengths"], alpha)  # (B, K)
    best = ops.cast(ops.argmax(scores, axis=1), "int32")  # (B,)
    rows = ops.arange(batch_size, dtype="int32") * beam_width + best  # (B,)
    best_scores = ops.take_along_axis(scores, best[:, None], axis=1)[:, 0]  # (B,)
    return (
        ops.take(state["tokens"], rows, axis=0),
        ops.take(state["attention"], rows, axis=0),
        best_scores,
    )
