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

from benchmarks import timing

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

    from keras_attention.layers.transformer_encoder_block import TransformerEncoderBlock

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
            loss = tf.reduce_mean(tf.square(output))
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


def _check_agreement(ours, theirs, inputs, padding_mask):
    expected = np.asarray(theirs(inputs, padding_mask=padding_mask, training=False))
    received = np.asarray(ours(inputs, padding_mask=padding_mask, training=False))
    error = float(np.max(np.abs(expected - received)))
    if error > timing.agreement_tolerance():
        raise RuntimeError(f"outputs of ours and keras-hub differ by {error}")
    return error


def run(quick=False, device="cpu"):
    """Time every configuration; returns the JSON payload (see benchmarks/README.md).

    Args:
        quick: tiny sizes and few repetitions (for the smoke test).
        device: "cpu" or "gpu".

    Returns:
        dict, as written to results/encoder_block.json.
    """
    import keras

    settings = QUICK if quick else FULL
    cases = QUICK_CASES if quick else [(v, j) for v in VARIANTS for j in (False, True)]
    results = []
    with timing.tf_device(device):
        for length in settings["lengths"]:
            for variant, jit_compile in cases:
                options = VARIANTS[variant]
                keras.utils.set_random_seed(0)
                ours, theirs = _blocks(settings, options["dropout"])
                inputs, padding_mask = _inputs(settings, length, options["padding"])
                theirs(inputs)
                ours(inputs)
                ours.set_weights(theirs.get_weights())
                error = _check_agreement(ours, theirs, inputs, padding_mask)
                steps = {
                    "ours": _train_step(ours, inputs, padding_mask, jit_compile),
                    "keras_hub": _train_step(theirs, inputs, padding_mask, jit_compile),
                }
                case = f"T={length} {variant} {'xla' if jit_compile else 'graph'}"
                timing.log(f"encoder_block: {case}")
                samples = timing.compare(
                    steps, warmup=settings["warmup"], repeats=settings["repeats"]
                )
                results.append(
                    timing.case_result(
                        case,
                        {
                            "batch": settings["batch"],
                            "length": length,
                            "width": settings["width"],
                            "heads": settings["heads"],
                            "intermediate_dim": settings["intermediate_dim"],
                            "variant": variant,
                            "jit_compile": jit_compile,
                            **options,
                        },
                        samples,
                        ratios={"time ours/keras_hub": samples.ratio("ours", "keras_hub")},
                        max_abs_output_difference=error,
                    )
                )
    return timing.make_payload(
        "encoder_block",
        TITLE,
        results,
        quick=quick,
        device=device,
        settings=settings,
        notes=[
            "ratio < 1 means keras_attention is faster; a step is forward, backward and "
            "an Adam update; median of per-round ratios.",
        ],
    )
