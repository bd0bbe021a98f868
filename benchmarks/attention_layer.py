"""Multi-head attention, forward and backward: ours against keras.

`keras_attention.layers.MultiHeadAttention` and `keras.layers.MultiHeadAttention`
with the same weights (copied) run the same training step: self-attention on
a (batch, length, width) input, mean-squared output as the loss, gradients
for the weights and the input. Configurations: lengths 256 and 1024, inside
`tf.function` with and without XLA (`jit_compile`), and three call variants:

- "plain" (dropout 0): keras calls `ops.dot_product_attention`, its fast path;
- "dropout 0.1" (training): keras falls back to einsum + its Softmax layer;
- "scores" (`return_attention_scores=True`): the same slow path for keras.

Before timing, the forward outputs of both layers are checked to agree.
"""

import numpy as np

from benchmarks import layer_comparison

TITLE = "MultiHeadAttention forward+backward: keras_attention vs keras"
VARIANTS = {
    "plain": {"dropout": 0.0, "return_attention_scores": False},
    "dropout 0.1": {"dropout": 0.1, "return_attention_scores": False},
    "scores": {"dropout": 0.0, "return_attention_scores": True},
}
FULL = {"batch": 16, "lengths": (256, 1024), "width": 256, "heads": 8, "warmup": 2, "repeats": 9}
QUICK = {"batch": 2, "lengths": (16,), "width": 16, "heads": 2, "warmup": 0, "repeats": 2}
QUICK_CASES = (("plain", False), ("dropout 0.1", True))


def _layers(width, heads, dropout):
    import keras

    from keras_attention.layers.attention.multi_head_attention import MultiHeadAttention

    key_dim = width // heads
    theirs = keras.layers.MultiHeadAttention(heads, key_dim, dropout=dropout, seed=1)
    ours = MultiHeadAttention(heads, key_dim, dropout=dropout, seed=1)
    return ours, theirs


def _train_step(layer, inputs, jit_compile, return_attention_scores):
    """A compiled forward+backward step of `layer` on `inputs`; returns a scalar."""
    import tensorflow as tf

    def step():
        with tf.GradientTape() as tape:
            tape.watch(inputs)
            result = layer(
                inputs, inputs, training=True, return_attention_scores=return_attention_scores
            )
            # float32 loss: under mixed precision (--device gpu) the outputs are bfloat16.
            output = tf.cast(result[0] if return_attention_scores else result, "float32")
            loss = tf.reduce_mean(tf.square(output))
            if return_attention_scores:
                # Use the scores so that their graph is kept.
                loss += 1e-3 * tf.reduce_mean(tf.cast(result[1], "float32"))
        gradients = tape.gradient(loss, [inputs] + layer.trainable_variables)
        return loss + 0.0 * tf.linalg.global_norm(gradients)

    return tf.function(step, jit_compile=jit_compile)


def _prepare(settings, length, options, jit_compile):
    """Both layers with the same weights, their agreement and their compiled steps."""
    import tensorflow as tf

    ours, theirs = _layers(settings["width"], settings["heads"], options["dropout"])
    shape = (settings["batch"], length, settings["width"])
    inputs = tf.constant(np.random.default_rng(0).normal(size=shape).astype("float32"))
    error = layer_comparison.copy_weights_and_compare(ours, theirs, (inputs, inputs), "keras")
    scores = options["return_attention_scores"]
    steps = {
        "ours": _train_step(ours, inputs, jit_compile, scores),
        "keras": _train_step(theirs, inputs, jit_compile, scores),
    }
    return steps, error


run = layer_comparison.comparison_runner(
    "attention_layer",
    TITLE,
    "keras",
    _prepare,
    "median of per-round ratios, rounds alternate the order of the two layers.",
)
