"""The decoding benchmarks' translator, sources and re-running loop (any Keras backend).

`decoding.py` compiles the loop with `tf.function`, `gpu_jax.py` with `jax.jit`.
"""

import keras
import numpy as np
from keras import ops

START_ID, END_ID = 1, 2
# Decoding sizes: the CPU benchmark's translator and the smoke tests' tiny one.
SMALL_TRANSLATOR = {
    "batch": 8,
    "tokens": 64,
    "source_length": 32,
    "vocabulary": 1000,
    "hidden_dim": 256,
    "num_layers": 2,
    "num_heads": 4,
    "intermediate_dim": 1024,
}
TINY_TRANSLATOR = {
    "batch": 2,
    "tokens": 6,
    "source_length": 5,
    "vocabulary": 20,
    "hidden_dim": 16,
    "num_layers": 1,
    "num_heads": 2,
    "intermediate_dim": 32,
}


def translator_that_never_ends(sizes):
    """A `transformer_translator` (random weights, no dropout) whose end token never wins.

    Every method then decodes all `sizes["tokens"]` steps. `sizes` is a dict
    such as `SMALL_TRANSLATOR`: `vocabulary`, `source_length`, `tokens`,
    `hidden_dim`, `num_layers`, `num_heads`, `intermediate_dim` (other keys
    are ignored).
    """
    from keras_attention.models.translation.transformer_translator import transformer_translator

    keras.utils.set_random_seed(0)
    model = transformer_translator(
        source_vocabulary_size=sizes["vocabulary"],
        target_vocabulary_size=sizes["vocabulary"],
        max_source_length=sizes["source_length"],
        max_target_length=sizes["tokens"],
        hidden_dim=sizes["hidden_dim"],
        num_layers=sizes["num_layers"],
        num_heads=sizes["num_heads"],
        intermediate_dim=sizes["intermediate_dim"],
        dropout=0.0,
    )
    bias = np.asarray(model.logits_layer.bias).copy()
    bias[END_ID] = -1e4
    model.logits_layer.bias.assign(bias)
    return model


def decoding_sources(sizes, seed):
    """Random source ids `(batch, source_length)` int32 of `sizes`, the last quarter padding."""
    rng = np.random.default_rng(seed)
    shape = (sizes["batch"], sizes["source_length"])
    sources = rng.integers(3, sizes["vocabulary"], size=shape).astype("int32")
    sources[:, -max(1, shape[1] // 4) :] = 0
    return sources


def rerun_greedy(model, tokens_to_produce):
    """Greedy decoding that runs the whole model on the padded prefix at every step.

    Returns the uncompiled function `source (B, S) -> tokens (B, steps)`.
    """

    def decode(source):
        batch = ops.shape(source)[0]
        tokens = ops.concatenate(
            [
                ops.full((batch, 1), START_ID, "int32"),
                ops.zeros((batch, tokens_to_produce), "int32"),
            ],
            axis=1,
        )  # (B, 1 + steps)

        def step(position, tokens):
            logits = model(
                {"source": source, "target": tokens[:, :tokens_to_produce]}, training=False
            )  # (B, steps, V)
            newest = ops.take(logits, position, axis=1)  # (B, V)
            # As the searches do, never produce the padding id 0.
            best = ops.cast(ops.argmax(newest[:, 1:], axis=-1), "int32") + 1  # (B,)
            return ops.slice_update(tokens, [0, position + 1], best[:, None])

        return ops.fori_loop(0, tokens_to_produce, step, tokens)[:, 1:]

    return decode
