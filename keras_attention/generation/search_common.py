"""Argument checks, XLA compilation and tensor plumbing shared by the searches."""

import numpy as np
from keras import ops

from keras_attention.generation.decoding_protocol import MEMORY_MASK
from keras_attention.ops.masks import PADDING_ID

# Score of an impossible choice: finite, so that sums and ratios stay finite.
IMPOSSIBLE = -1e9


def check_positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"`{name}` must be a positive integer. Received: {name}={value!r}")


def check_search_arguments(decoder, start_id, end_id, max_length):
    for method in ("encode", "initial_cache", "step"):
        if not callable(getattr(decoder, method, None)):
            raise ValueError(
                "`decoder` must implement the decoding protocol with `encode`, `initial_cache` "
                "and `step` methods (a translator model, or "
                "`keras_attention.generation.decoding_protocol(model)`). "
                f"Received: decoder={decoder!r}"
            )
    vocabulary_size = getattr(decoder, "vocabulary_size", None)
    for name, value in (("start_id", start_id), ("end_id", end_id)):
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, np.integer))
            or value < 0
            or (vocabulary_size is not None and value >= vocabulary_size)
        ):
            raise ValueError(
                f"`{name}` must be a token id in [0, {vocabulary_size}). Received: {name}={value!r}"
            )
    check_positive_int("max_length", max_length)
    limit = getattr(decoder, "max_length", None)
    if limit is not None and max_length > limit:
        raise ValueError(
            f"`max_length` must be at most {limit}, the longest sequence the model's "
            f"decoder supports. Received: max_length={max_length}"
        )


def compiled_search(decoder, key, make_search, jit_compile):
    """The search function for `key`, traced once per input shape.

    The functions live on the decoder (a model or an adapter), in its
    instance dict where Keras does not track them, so that decoding again
    with inputs of the same shapes reuses the compiled XLA program.
    """
    import tensorflow as tf  # here: models import this module on every backend

    functions = vars(decoder).setdefault("_compiled_searches", {})
    key = key + (bool(jit_compile),)
    if key not in functions:
        # The loop is written with keras.ops control flow: no autograph needed.
        functions[key] = tf.function(make_search(), jit_compile=bool(jit_compile), autograph=False)
    return functions[key]


def memory_mask_of(encoder_state):
    if not isinstance(encoder_state, dict) or MEMORY_MASK not in encoder_state:
        keys = sorted(encoder_state) if isinstance(encoder_state, dict) else encoder_state
        raise ValueError(
            f"The decoder's `encode` must return a dict with a {MEMORY_MASK!r} entry "
            f"(bool, batch first). Received: {keys!r}"
        )
    return encoder_state[MEMORY_MASK]


def batch_and_positions(memory_mask):
    """The batch size and the memory's positions `(S...)`: ints, or scalar
    tensors where the size is known only at run time (e.g. in a serving
    signature)."""
    shape = ops.shape(memory_mask)
    return shape[0], tuple(shape[1:])


def next_token_log_probs(logits):
    """log softmax in float32 over the tokens that may be produced (not padding)."""
    logits = ops.cast(logits, "float32")  # (B, V)
    is_padding = ops.equal(ops.arange(ops.shape(logits)[-1]), PADDING_ID)  # (V,)
    return ops.log_softmax(ops.where(is_padding, IMPOSSIBLE, logits), axis=-1)


def write_at(buffer, index, values):
    """`buffer[:, index] = values` for a (B, L, ...) buffer and (B, ...) values."""
    start = [0, index] + [0] * (len(buffer.shape) - 2)
    return ops.slice_update(buffer, start, ops.expand_dims(values, 1))  # (B, 1, ...)


def zero_where(condition, values):
    """Zeroes the rows of `values` (B, ...) where `condition` (B,) is True."""
    condition = ops.reshape(condition, (-1,) + (1,) * (len(values.shape) - 1))  # (B, 1, ...)
    return ops.where(condition, ops.zeros_like(values), values)


def initial_loop_state(decoder, encoder_state, rows, start_id, max_length, attention_shape):
    """What both searches carry from step to step, before the first step.

    `rows` hypotheses `(R, ...)`: no tokens or attention written yet, the
    start token to feed, and the decoder's initial cache.
    """
    return {
        "tokens": ops.zeros((rows, max_length), "int32"),
        "attention": ops.zeros((rows, max_length) + attention_shape, "float32"),
        "previous": ops.full((rows,), start_id, "int32"),
        "cache": decoder.initial_cache(encoder_state, rows, max_length),
    }


def decode_until_finished(decode_one, state, max_length):
    """Runs `decode_one(index, state) -> (index + 1, state)` from index 0 until
    `max_length` steps or until every `state["finished"]` is True; returns the state."""

    def not_done(index, state):
        return ops.logical_and(
            ops.less(index, max_length), ops.logical_not(ops.all(state["finished"]))
        )

    index = ops.convert_to_tensor(0, "int32")
    _, state = ops.while_loop(not_done, decode_one, (index, state), maximum_iterations=max_length)
    return state
