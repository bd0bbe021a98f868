"""Quickstart: train a Transformer translator in a few minutes, then serve it.

A small encoder-decoder Transformer learns the built-in English -> Spanish corpus (made in
code, no download) on the CPU: (1) sentence pairs and a reversible vocabulary per language;
(2) teacher-forcing batches with `tf.data`; (3) `model.fit`, XLA-compiled; (4) a `.keras`
file of the model and its tokenizers, and a SavedModel with tokenizer, greedy search and
detokenizer inside; (5) the SavedModel, reloaded with TensorFlow and tensorflow-text alone,
translates held-out sentences (scored) and new ones; (6) an alignment plot; (7) what next.

    python examples/quickstart.py [--output-dir runs/quickstart] [--epochs 3]
"""

import argparse
import os
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
from keras_attention.training.command_line import whole_number  # noqa: E402  (no TensorFlow)

NEXT_STEPS = (  # what to try with what it wrote
    'next: python -c "import keras, keras_attention; print(keras.models.load_model({keras!r})'
    ".generate('the cat sleeps'))\"\n      serve {export} (tf.saved_model.load after `import "
    "tensorflow_text`)\n      your pairs: train_nmt.py --dataset tsv:FILE (docs/data_layouts.md)"
)
MAX_LENGTH = 20  # tokens per sentence; the corpus has at most 16 words
VOCABULARY_SIZE = 1000  # 260 byte and special tokens, then characters and words
BATCH_SIZE = 64
NEW_SENTENCES = ["the old dog sleeps in my garden", "does the girl see the white cats"]


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--output-dir", default="runs/quickstart")
    parser.add_argument("--epochs", type=whole_number(), default=3)
    parser.add_argument("--num-pairs", type=whole_number(100), default=20000, help="built-in pairs")
    parser.add_argument("--hidden-dim", type=whole_number(4, 4), default=64, help="model width")
    parser.add_argument("--num-layers", type=whole_number(), default=2, help="blocks per side")
    return parser.parse_args(argv)


if __name__ == "__main__":
    parse_args()  # answer --help and bad flags before TensorFlow loads

from keras_attention.native_start_up_lines import import_tensorflow_quietly  # noqa: E402
from keras_attention.native_start_up_lines import native_start_up_lines_dropped  # noqa: E402

tf = import_tensorflow_quietly()  # without its start-up lines about a missing GPU
import keras  # noqa: E402

import keras_attention as ka  # noqa: E402
from keras_attention.backend_support import require_tensorflow_backend  # noqa: E402
from keras_attention.tasks import translation  # noqa: E402  (the built-in corpus, batches, scores)


def main(argv=None):
    """The whole tour in one function on purpose: it reads top to bottom, step by step."""
    args = parse_args(argv)
    require_tensorflow_backend("examples/quickstart.py")
    folder = os.path.abspath(os.path.join(args.output_dir, "translator"))
    try:  # refused before training: a folder of other files (its own from a run before are fine)
        ka.training.claim_output_folder(args.output_dir, "examples/quickstart.py")
        ka.training.check_export_path(folder, name="the translator folder in --output-dir")
    except ka.training.RunFolderError as error:
        raise SystemExit(f"error: {error}") from None
    keras.utils.set_random_seed(0)
    start = time.time()

    # 1. Pairs of (English, Spanish) strings, and a vocabulary per language.
    splits = translation.load_translation_pairs("builtin", num_pairs=args.num_pairs)
    encoders = [  # (source, target), each learned from its side of the training pairs
        ka.text.ReversibleTokenizer.train([pair[side] for pair in splits.sample], VOCABULARY_SIZE)
        for side in (0, 1)
    ]

    # 2. ({"source", "target"}, labels) batches: the decoder reads the target
    # shifted right ([START] ...) and learns to predict the next token.
    train = translation.make_translation_batches(
        splits["train"], *encoders, BATCH_SIZE, MAX_LENGTH, MAX_LENGTH, drop_remainder=True
    )

    # 3. The Transformer of "Attention Is All You Need", small enough for a CPU.
    model = ka.models.transformer_translator(
        source_vocabulary_size=encoders[0].vocabulary_size,
        target_vocabulary_size=encoders[1].vocabulary_size,
        max_source_length=MAX_LENGTH,
        max_target_length=MAX_LENGTH,
        hidden_dim=args.hidden_dim,
        num_layers=args.num_layers,
        num_heads=4,
        intermediate_dim=2 * args.hidden_dim,
    )
    total_steps = max(1, args.epochs * int(train.cardinality()))
    learning_rate = keras.optimizers.schedules.CosineDecay(
        0.0, total_steps, warmup_target=2e-3, warmup_steps=max(1, total_steps // 10)
    )
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate),
        loss=ka.losses.masked_sparse_categorical_crossentropy,  # padding does not count
        metrics=[ka.metrics.MaskedSparseCategoricalAccuracy()],
        jit_compile=True,
    )
    model.fit(train, epochs=args.epochs, verbose=2, shuffle=False)  # batches shuffle themselves
    print(f"trained in {time.time() - start:.0f} s")

    # 4. The model with its tokenizers, as one .keras file (`load_model(...).generate`) ...
    keras_path = os.path.abspath(os.path.join(args.output_dir, "translator.keras"))
    model.attach_tokenizers(*encoders).save(keras_path)
    # ... and the export (strings in, translations and attention out), swapped in whole.
    ka.training.replace_folder(
        folder,
        lambda staging: ka.serving.export_translator(
            model, staging, *encoders, MAX_LENGTH, MAX_LENGTH, decode_batch_size=BATCH_SIZE
        ),
    )
    print(f"Keras model: {keras_path}\nSavedModel: {folder}")

    # 5. Reload it with TensorFlow alone, translate the held-out sentences, score them.
    import tensorflow_text  # noqa: F401  the tokenizers' SentencePiece op

    translate = tf.saved_model.load(folder).signatures["serving_default"]
    with native_start_up_lines_dropped():  # the op reads its models again: a line each, dropped
        sources, references, hypotheses, outputs = translation.translate_pairs(
            lambda text: translate(text=text), splits["test"], batch_size=BATCH_SIZE
        )
    scores = translation.score_translations(hypotheses, references)
    print(
        f"held-out BLEU {scores['bleu']:.1f}, chrF {scores['chrf']:.1f} on {len(hypotheses)} "
        f"sentences, {100 * scores['exact_match']:.1f}% exactly right"
    )
    for source, reference, hypothesis in list(zip(sources, references, hypotheses))[:3]:
        print(f"  {source}\n    -> {hypothesis}\n    (reference: {reference})")
    served = translate(text=tf.constant(NEW_SENTENCES))
    new_translations = [text.decode() for text in served["translation"].numpy()]
    print("\n".join(f"  {new} -> {out}" for new, out in zip(NEW_SENTENCES, new_translations)))

    # 6. Where the decoder looked: attention (target pieces x source pieces).
    source_pieces = [t.decode() for t in outputs["source_tokens"][0] if t]
    target_pieces = [t.decode() for t in outputs["translation_tokens"][0] if t]
    weights = outputs["attention"][0, : len(target_pieces), : len(source_pieces)]  # (T, S)
    plot = ka.visualization.plot_alignment(weights, source_pieces, target_pieces, title=sources[0])
    plot_path = ka.visualization.save_figure(plot, os.path.join(args.output_dir, "alignment.png"))
    print(f"alignment plot: {plot_path}\ndone in {time.time() - start:.0f} s")
    print(NEXT_STEPS.format(keras=keras_path, export=folder))  # 7. Next steps.
    paths = {"alignment_plot": str(plot_path), "export_dir": folder, "keras_model": keras_path}
    return {**scores, **paths, "new_translations": new_translations}


if __name__ == "__main__":
    main()
