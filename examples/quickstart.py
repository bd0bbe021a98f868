"""Quickstart: a Transformer learns to reverse sequences, and shows where it looks.

A decoder-only Transformer (token and position embeddings, two masked
self-attention blocks) reads `a b c d | ` and must write `d c b a`: every output
token has to be found by attention at a mirrored position, which the plotted
attention map shows as an anti-diagonal. Trains in about a minute on 2 CPU cores.

    python examples/quickstart.py [--output-dir runs/quickstart]
"""

import argparse
import os
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402

import keras_attention as ka  # noqa: E402

SEPARATOR, VOCABULARY, LENGTH = 1, 12, 6  # tokens 2..11 are symbols, 0 is padding


def make_reversal_data(count, seed):
    rng = np.random.default_rng(seed)
    symbols = rng.integers(2, VOCABULARY, size=(count, LENGTH))
    # input: s_1..s_L | r_1..r_{L-1}; target at each position: the next token.
    sequence = np.concatenate(
        [symbols, np.full((count, 1), SEPARATOR), symbols[:, ::-1]], axis=1
    )
    return sequence[:, :-1], sequence[:, 1:]


def build_model():
    tokens = keras.Input((2 * LENGTH,), dtype="int32", name="tokens")
    x = ka.layers.TokenAndPositionEmbedding(VOCABULARY, 2 * LENGTH, 64)(tokens)
    scores = []
    for index in range(2):
        block = ka.layers.TransformerDecoderBlock(
            num_heads=4, intermediate_dim=128, name=f"block_{index}"
        )
        x, block_scores = block(x, return_attention_scores=True)
        scores.append(block_scores)
    logits = keras.layers.Dense(VOCABULARY, name="logits")(x)
    return keras.Model(tokens, logits), keras.Model(tokens, scores[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output-dir", default="runs/quickstart")
    parser.add_argument("--epochs", type=int, default=12)
    args = parser.parse_args(argv)
    os.makedirs(args.output_dir, exist_ok=True)
    keras.utils.set_random_seed(0)

    train_x, train_y = make_reversal_data(12000, seed=0)
    test_x, test_y = make_reversal_data(1000, seed=1)
    model, attention_model = build_model()
    model.compile(
        optimizer=keras.optimizers.Adam(2e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        jit_compile=True,
    )
    start = time.time()
    model.fit(train_x, train_y, batch_size=64, epochs=args.epochs, verbose=2)
    predictions = np.argmax(model.predict(test_x, verbose=0), axis=-1)
    # Only the reversed half is predictable; the first half is random symbols.
    reversed_part = slice(LENGTH, None)
    accuracy = np.mean(np.all(predictions[:, reversed_part] == test_y[:, reversed_part], axis=1))
    print(f"trained in {time.time() - start:.0f}s; "
          f"held-out sequences reversed exactly: {accuracy:.1%}")

    example = test_x[:1]
    print("input   :", example[0, :LENGTH].tolist())
    print("reversed:", predictions[0, reversed_part].tolist())
    weights = np.asarray(attention_model(example))[0].mean(axis=0)  # (T, T) averaged over heads
    figure = ka.visualization.plot_alignment(
        weights[LENGTH:, :],
        source_tokens=[str(t) for t in example[0]],
        target_tokens=[str(t) for t in predictions[0, reversed_part]],
        title="where each output position looks",
    )
    path = ka.visualization.save_figure(figure, os.path.join(args.output_dir, "attention.png"))
    print("attention plot:", path)
    return accuracy


if __name__ == "__main__":
    main()
