"""Longer inputs than in training: ALiBi against position embeddings.

Usage:

    python -m benchmarks.alibi_extrapolation            # about 3 minutes on a 2-core CPU
    python -m benchmarks.alibi_extrapolation --quick    # a few steps, to check it runs

The task: each sequence repeats a pattern of `period` distinct tokens
(period 3 to 8, tokens and period drawn per sequence), and the model predicts
every next token. Once one period has gone by, the next token is determined:
the token that followed the last occurrence of the current one. Where that
occurrence lies is a matter of relative position, whatever the length.

The same small causal decoder (token embedding, two blocks of
`keras_attention.layers.MultiHeadAttention` and an MLP, pre-norm) is trained
on sequences of 64 tokens with one of three position schemes, then scored on
held-out sequences of 64 and of 256 tokens (next-token accuracy and loss on
the determined tokens, those after the first period):

- "alibi": no position embedding; every attention layer gets
  `attention_bias=AlibiBias().bias(num_heads, T, T)`.
- "learned": a learned table of 64 positions (`PositionEmbedding`); it has
  no row for position 64 and later, so it cannot run on 256 tokens.
- "sinusoidal": `SinusoidalPositionEncoding`, defined at every position.

Results go to benchmarks/results/alibi_extrapolation.json (`--output` to
change it).
"""

import argparse
import json
import os
import sys
import time

import numpy as np

TRAIN_LENGTH = 64
EVAL_LENGTHS = (64, 256)
FULL = {
    "vocabulary": 16,
    "periods": (3, 8),
    "dim": 64,
    "heads": 4,
    "blocks": 2,
    "batch": 32,
    "steps": 1200,
    "learning_rate": 2e-3,
    "eval_sequences": 256,
}
QUICK = {**FULL, "steps": 20, "eval_sequences": 16}
SCHEMES = ("alibi", "learned", "sinusoidal")
RESULTS_PATH = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "results", "alibi_extrapolation.json"
)


def periodic_sequences(rng, count, length, vocabulary, periods):
    """(count, length + 1) int32 token sequences and each sequence's period."""
    low, high = periods
    sequences = np.empty((count, length + 1), "int32")
    period_of = rng.integers(low, high + 1, size=count)
    for row, period in enumerate(period_of):
        pattern = rng.permutation(vocabulary)[:period]
        sequences[row] = np.resize(pattern, length + 1)
    return sequences, period_of


def determined_positions(period_of, length):
    """(count, length) bool: the targets after input `t` that can be told from inputs 0..t.

    Input `t` has an earlier occurrence, `period` tokens back, from `t = period` on.
    """
    return np.arange(length)[None, :] >= period_of[:, None]


def build_model(scheme, settings):
    import keras

    from keras_attention import layers

    class Block(keras.layers.Layer):
        def __init__(self, dim, heads, **kwargs):
            super().__init__(**kwargs)
            self.heads = heads
            self.attention_norm = keras.layers.LayerNormalization()
            self.attention = layers.MultiHeadAttention(num_heads=heads, key_dim=dim // heads)
            self.mlp_norm = keras.layers.LayerNormalization()
            self.hidden = keras.layers.Dense(2 * dim, activation="gelu")
            self.out = keras.layers.Dense(dim)

        def call(self, x, attention_bias=None):
            normed = self.attention_norm(x)
            x = x + self.attention(
                normed, normed, use_causal_mask=True, attention_bias=attention_bias
            )
            return x + self.out(self.hidden(self.mlp_norm(x)))

    class Decoder(keras.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.embedding = keras.layers.Embedding(settings["vocabulary"], settings["dim"])
            self.positions = {
                "alibi": None,
                "learned": layers.PositionEmbedding(max_length=TRAIN_LENGTH, merge="add"),
                "sinusoidal": layers.SinusoidalPositionEncoding(merge="add"),
            }[scheme]
            self.alibi = layers.AlibiBias() if scheme == "alibi" else None
            self.blocks = [
                Block(settings["dim"], settings["heads"]) for _ in range(settings["blocks"])
            ]
            self.final_norm = keras.layers.LayerNormalization()
            self.logits = keras.layers.Dense(settings["vocabulary"])

        def call(self, tokens):
            x = self.embedding(tokens)
            if self.positions is not None:
                x = self.positions(x)
            bias = None
            if self.alibi is not None:
                length = keras.ops.shape(tokens)[1]
                bias = self.alibi.bias(settings["heads"], length, length)  # (1, H, T, T)
            for block in self.blocks:
                x = block(x, attention_bias=bias)
            return self.logits(self.final_norm(x))

    return Decoder()


def train_and_score(scheme, settings, seed=0):
    import keras

    keras.utils.set_random_seed(seed)
    rng = np.random.default_rng(seed)
    model = build_model(scheme, settings)
    model.compile(
        optimizer=keras.optimizers.Adam(settings["learning_rate"]),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        jit_compile=True,
    )
    count = settings["steps"] * settings["batch"]
    train, _ = periodic_sequences(
        rng, count, TRAIN_LENGTH, settings["vocabulary"], settings["periods"]
    )
    model(train[:1, :-1])  # builds the weights
    started = time.process_time()
    history = model.fit(
        train[:, :-1], train[:, 1:], batch_size=settings["batch"], epochs=1, verbose=0
    )
    result = {
        "scheme": scheme,
        "train_cpu_s": round(time.process_time() - started, 1),
        "final_train_loss": round(float(history.history["loss"][-1]), 4),
        "parameters": int(model.count_params()),
    }
    held_out = np.random.default_rng(seed + 1)
    for length in EVAL_LENGTHS:
        sequences, period_of = periodic_sequences(
            held_out,
            settings["eval_sequences"],
            length,
            settings["vocabulary"],
            settings["periods"],
        )
        result[str(length)] = score(model, sequences, period_of)
    return result


def score(model, sequences, period_of):
    """Next-token accuracy and cross-entropy on the determined targets, or why it cannot run."""
    inputs, targets = sequences[:, :-1], sequences[:, 1:]
    try:
        logits = np.asarray(model(inputs), "float64")
    except ValueError:
        why = f"a learned table of {TRAIN_LENGTH} positions has no row for position {TRAIN_LENGTH}"
        return {"ran": False, "why": f"{why} and later (ValueError)"}
    logits = logits - logits.max(-1, keepdims=True)
    log_probabilities = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    chosen = np.take_along_axis(log_probabilities, targets[..., None], axis=-1)[..., 0]
    scored = determined_positions(period_of, inputs.shape[1])
    correct = log_probabilities.argmax(-1) == targets
    return {
        "ran": True,
        "accuracy": round(float(correct[scored].mean()), 4),
        "loss": round(float(-chosen[scored].mean()), 4),
        "scored_tokens": int(scored.sum()),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few steps, to check it runs")
    parser.add_argument("--output", default=None, help=f"JSON file (default: {RESULTS_PATH})")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    settings = QUICK if args.quick else FULL
    results = []
    for scheme in SCHEMES:
        results.append(train_and_score(scheme, settings))
        print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    from benchmarks import timing

    payload = {
        "benchmark": "alibi_extrapolation",
        "title": "Trained on 64 tokens, scored on 64 and 256: ALiBi vs position embeddings",
        "quick": args.quick,
        "machine": timing.machine_description("cpu"),
        "settings": {**settings, "train_length": TRAIN_LENGTH, "eval_lengths": EVAL_LENGTHS},
        "results": results,
    }
    output = args.output or RESULTS_PATH
    os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
    with open(output, "w") as handle:
        json.dump(payload, handle, indent=1)
        handle.write("\n")
    return payload


if __name__ == "__main__":
    main()
