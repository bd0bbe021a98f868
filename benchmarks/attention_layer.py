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

from benchmarks import timing

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

    from keras_attention.layers.multi_head_attention import MultiHeadAttention

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
            output = result[0] if return_attention_scores else result
            loss = tf.reduce_mean(tf.square(output))
            if return_attention_scores:
                # Use the scores so that their graph is kept.
                loss += 1e-3 * tf.reduce_mean(result[1])
        gradients = tape.gradient(loss, [inputs] + layer.trainable_variables)
        return loss + 0.0 * tf.linalg.global_norm(gradients)

    return tf.function(step, jit_compile=jit_compile)


def _check_agreement(ours, theirs, inputs):
    expected = np.asarray(theirs(inputs, inputs, training=False))
    received = np.asarray(ours(inputs, inputs, training=False))
    error = float(np.max(np.abs(expected - received)))
    if error > timing.agreement_tolerance():
        raise RuntimeError(f"outputs of ours and keras differ by {error}")
    return error


def run(quick=False, device="cpu"):
    """Time every configuration; returns the JSON payload (see benchmarks/README.md).

    Args:
        quick: tiny sizes and few repetitions (for the smoke test).
        device: "cpu" or "gpu".

    Returns:
        dict, as written to results/attention_layer.json.
    """
    import keras
    import tensorflow as tf

    settings = QUICK if quick else FULL
    cases = QUICK_CASES if quick else [(v, j) for v in VARIANTS for j in (False, True)]
    results = []
    with timing.tf_device(device):
        for length in settings["lengths"]:
            for variant, jit_compile in cases:
                options = VARIANTS[variant]
                keras.utils.set_random_seed(0)
                ours, theirs = _layers(settings["width"], settings["heads"], options["dropout"])
                inputs = tf.constant(
                    np.random.default_rng(0)
                    .normal(size=(settings["batch"], length, settings["width"]))
                    .astype("float32")
                )
                theirs(inputs, inputs)
                ours(inputs, inputs)
                ours.set_weights(theirs.get_weights())
                error = _check_agreement(ours, theirs, inputs)
                scores = options["return_attention_scores"]
                steps = {
                    "ours": _train_step(ours, inputs, jit_compile, scores),
                    "keras": _train_step(theirs, inputs, jit_compile, scores),
                }
                case = f"T={length} {variant} {'xla' if jit_compile else 'graph'}"
                timing.log(f"attention_layer: {case}")
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
                            "variant": variant,
                            "jit_compile": jit_compile,
                            **options,
                        },
                        samples,
                        ratios={"time ours/keras": samples.ratio("ours", "keras")},
                        max_abs_output_difference=error,
                    )
                )
    return timing.make_payload(
        "attention_layer",
        TITLE,
        results,
        quick=quick,
        device=device,
        settings=settings,
        notes=[
            "ratio < 1 means keras_attention is faster; median of per-round ratios, "
            "rounds alternate the order of the two layers.",
        ],
    )
