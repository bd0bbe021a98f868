"""Transformer encoder block, one training step: ours against keras-hub.

`keras_attention.layers.TransformerEncoderBlock` and
`keras_hub.layers.TransformerEncoder` with the same weights (copied) each run
a training step (forward, backward, Adam update) on a (batch, length, width)
input inside `tf.function`, with and without XLA (`jit_compile`).
Variants: "plain" (dropout 0), "padding mask" (dropout 0, the last eighth of
every sequence is padding) and "dropout 0.1" (training). The forward outputs
of both blocks (inference mode) are checked to agree before timing.
"""

import numpy as np

from benchmarks import layer_comparison

TITLE = "Transformer encoder block train step: keras_attention vs keras-hub"
VARIANTS = {
    "plain": {"dropout": 0.0, "padding": False},
    "padding mask": {"dropout": 0.0, "padding": True},
    "dropout 0.1": {"dropout": 0.1, "padding": False},
}
FULL = {
    "batch": 16,
    "lengths": (256, 1024),
    "width": 256,
    "heads": 8,
    "intermediate_dim": 1024,
    "warmup": 2,
    "repeats": 9,
}
QUICK = {
    "batch": 2,
    "lengths": (16,),
    "width": 16,
    "heads": 2,
    "intermediate_dim": 32,
    "warmup": 0,
    "repeats": 2,
}
QUICK_CASES = (("padding mask", False), ("dropout 0.1", True))


def _blocks(settings, dropout):
    import keras_hub

    from keras_attention.layers.transformer.transformer_encoder_block import TransformerEncoderBlock

    theirs = keras_hub.layers.TransformerEncoder(
        intermediate_dim=settings["intermediate_dim"], num_heads=settings["heads"], dropout=dropout
    )
    ours = TransformerEncoderBlock(
        num_heads=settings["heads"], intermediate_dim=settings["intermediate_dim"], dropout=dropout
    )
    return ours, theirs


def _train_step(block, inputs, padding_mask, jit_compile):
    """A compiled training step (forward, backward, Adam) of `block`; returns the loss."""
    import keras
    import tensorflow as tf

    optimizer = keras.optimizers.Adam(1e-4)
    optimizer.build(block.trainable_variables)

    def step():
        with tf.GradientTape() as tape:
            output = block(inputs, padding_mask=padding_mask, training=True)
            # float32 loss: under mixed precision (--device gpu) the outputs are bfloat16.
            loss = tf.reduce_mean(tf.square(tf.cast(output, "float32")))
        gradients = tape.gradient(loss, block.trainable_variables)
        optimizer.apply(gradients, block.trainable_variables)
        return loss

    return tf.function(step, jit_compile=jit_compile)


def _inputs(settings, length, padding):
    import tensorflow as tf

    shape = (settings["batch"], length, settings["width"])
    inputs = tf.constant(np.random.default_rng(0).normal(size=shape).astype("float32"))
    if not padding:
        return inputs, None
    real = length - max(1, length // 8)
    mask = np.zeros(shape[:2], bool)
    mask[:, :real] = True
    return inputs, tf.constant(mask)


def _prepare(settings, length, options, jit_compile):
    """Both blocks with the same weights, their agreement and their compiled steps."""
    ours, theirs = _blocks(settings, options["dropout"])
    inputs, padding_mask = _inputs(settings, length, options["padding"])
    error = layer_comparison.copy_weights_and_compare(
        ours, theirs, (inputs,), "keras-hub", padding_mask=padding_mask
    )
    return {
        "ours": _train_step(ours, inputs, padding_mask, jit_compile),
        "keras_hub": _train_step(theirs, inputs, padding_mask, jit_compile),
    }, error


run = layer_comparison.comparison_runner(
    "encoder_block",
    TITLE,
    "keras_hub",
    _prepare,
    "a step is forward, backward and an Adam update; median of per-round ratios.",
)
