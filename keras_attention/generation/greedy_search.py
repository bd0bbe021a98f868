"""Greedy decoding: the most likely next token, one position at a time."""

from keras import ops

from keras_attention.backend_support import require_tensorflow_backend
from keras_attention.generation import search_common as common


def greedy_search(decoder, inputs, start_id, end_id, max_length, jit_compile=True):
    """Decodes by taking the most likely token at every step.

    The whole search (encoding, then one `keras.ops.while_loop` over the
    positions with fixed-shape caches) runs as one XLA program, traced once
    per input shape and reused by later calls with inputs of the same
    shapes. The loop stops as soon as every sequence has produced `end_id`.
    The padding id 0 is never produced.

    Args:
        decoder: a model that implements the decoding protocol (a
            `TransformerTranslator`, an `RNNAttentionTranslator`, or any
            `DecoderAdapter`; `decoder_for_model(model)` for a captioner).
        inputs: the encoder input of a batch (for a translator, source ids
            `(B, S)` with 0 as padding).
        start_id: the token fed at position 0.
        end_id: the token that ends a sequence.
        max_length: the most tokens produced per sequence.
        jit_compile: compile the search with XLA.

    Returns:
        `(tokens, attention)`: `tokens` `(B, max_length)` int32, the produced
        tokens (without `start_id`, with `end_id`, then 0s); `attention`
        `(B, max_length, S...)` float32, the attention weights on the encoder
        output when each token was chosen (0 after the end).

    Example:

    >>> import numpy as np
    >>> import keras_attention as ka
    >>> model = ka.models.rnn_attention_translator(
    ...     source_vocabulary_size=12, target_vocabulary_size=12, embedding_dim=4, units=8)
    >>> tokens, attention = greedy_search(
    ...     model, np.array([[4, 5, 6, 0]]), start_id=1, end_id=2,
    ...     max_length=5)
    >>> tuple(tokens.shape), tuple(attention.shape)
    ((1, 5), (1, 5, 4))
    """
    require_tensorflow_backend("greedy_search (compiled with tf.function)")
    common.check_search_arguments(decoder, start_id, end_id, max_length)

    def make_search():
        def search(inputs):
            return _greedy_loop(decoder, inputs, int(start_id), int(end_id), int(max_length))

        return search

    search = common.compiled_search(
        decoder, ("greedy", int(start_id), int(end_id), int(max_length)), make_search, jit_compile
    )
    return search(inputs)


def _greedy_loop(decoder, inputs, start_id, end_id, max_length):
    encoder_state = decoder.encode(inputs)
    batch_size, attention_shape = common.batch_and_positions(common.memory_mask_of(encoder_state))
    state = common.initial_loop_state(
        decoder, encoder_state, batch_size, start_id, max_length, attention_shape
    )
    state["finished"] = ops.zeros((batch_size,), "bool")

    def decode_one(index, state):
        logits, cache, attention = decoder.step(
            state["previous"], index, state["cache"], encoder_state
        )
        log_probs = common.next_token_log_probs(logits)  # (B, V)
        token = ops.cast(ops.argmax(log_probs, axis=-1), "int32")  # (B,)
        finished = state["finished"]
        token = ops.where(finished, common.PADDING_ID, token)
        attention = common.zero_where(finished, ops.cast(attention, "float32"))  # (B, S...)
        return index + 1, {
            "tokens": common.write_at(state["tokens"], index, token),
            "attention": common.write_at(state["attention"], index, attention),
            "previous": token,
            "finished": ops.logical_or(finished, ops.equal(token, end_id)),
            "cache": cache,
        }

    state = common.decode_until_finished(decode_one, state, max_length)
    return state["tokens"], state["attention"]
