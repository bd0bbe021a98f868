"""Train a Transformer or an RNN-with-attention translator, score it and export it.

With no argument a small Transformer learns the built-in English -> Spanish
corpus on the CPU in a few minutes. The run learns a reversible vocabulary per
language on the training split (translations come back with the spacing and
punctuation people write), derives the sequence length, batch size, epochs
and warm-up from the data where they are not given (and prints why), trains
with teacher forcing, warns when the validation loss does not fall below the
unigram loss (a model that ignores the source), then translates the held-out
split with XLA-compiled greedy (or beam) search and reports BLEU, chrF
(sacrebleu) and the fraction of exactly right translations. Under
`--output-dir` it leaves the vocabularies
(`vocabulary/source`, `vocabulary/target`), per-epoch checkpoints, a backup
that an interrupted run resumes from when started again with the same
command, TensorBoard logs, `metrics.json`, and alignment plots of a few
held-out sentences (`alignment_N.png`). `--export DIR` writes a SavedModel
that maps strings to translations and attention weights.

    python examples/train_nmt.py
    python examples/train_nmt.py --model rnn
    python examples/train_nmt.py --dataset tsv:~/spa.tsv --vocabulary-size 8000 \\
        --max-length 40 --epochs 20 --export runs/nmt/served
    python examples/train_nmt.py --dataset ted_hrlr_translate/pt_to_en --max-length 64 \\
        --vocabulary-size 8000 --hidden-dim 256 --num-layers 4 --epochs 20 --strategy mirrored
"""

import argparse
import os
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from keras_attention.training import command_line as cli  # noqa: E402  (no TensorFlow)
from keras_attention.training import run_setup as run  # noqa: E402  (TensorFlow when called)

# Defaults per model that reach BLEU > 90 on the built-in corpus on a CPU; the
# sequence length, batch size and epochs come from the data (see
# `translation_training_recipe`).
MODEL_DEFAULTS = {
    "transformer": dict(hidden_dim=64, learning_rate=2e-3),
    "rnn": dict(hidden_dim=64, learning_rate=3e-3),
}
# Sentences tokenized at once while measuring the training set.
TOKENIZE_BATCH_SIZE = 1024
EVALUATION_BATCH_SIZE = 64


positive_int = cli.positive_int
non_negative_int = cli.non_negative_int

DATASET_FORMATS = (
    "'builtin' (an offline English -> Spanish corpus); 'tsv:PATH', a UTF-8 file of "
    "source<TAB>target lines (a third column, such as Tatoeba's attribution, is ignored; "
    "malformed lines are skipped with a warning naming them, or stop the run with --strict; "
    "~ and $VARIABLES are expanded); or a tensorflow-datasets name such as "
    "'ted_hrlr_translate/pt_to_en'"
)


def build_parser():
    """The command line; building it imports no TensorFlow, so `--help` is instant."""
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    cli.add_common_arguments(
        parser,
        epochs=None,
        batch_size=None,
        output_dir="runs/nmt",
        dataset_formats=DATASET_FORMATS,
    )
    parser.add_argument("--model", choices=sorted(MODEL_DEFAULTS), default="transformer")
    add = parser.add_argument
    add(
        "--vocabulary-size",
        type=positive_int,
        default=1000,
        help="most tokens per language, the 260 byte and special tokens included",
    )
    add(
        "--max-length",
        type=positive_int,
        help="tokens per source and per target sentence (default: fits the longest "
        "training sentence)",
    )
    add(
        "--hidden-dim",
        type=positive_int,
        help="Transformer width or RNN units (default: "
        + ", ".join(f"{name} {d['hidden_dim']}" for name, d in MODEL_DEFAULTS.items())
        + ")",
    )
    add("--num-layers", type=positive_int, default=2, help="Transformer blocks per side")
    add("--num-heads", type=positive_int, default=4, help="Transformer attention heads")
    add("--cell", choices=("gru", "lstm"), default="gru", help="RNN cell of the rnn model")
    add(
        "--attention",
        choices=("additive", "dot", "general", "scaled_dot"),
        default="additive",
        help="attention score of the rnn model",
    )
    add(
        "--attention-style",
        choices=("bahdanau", "luong"),
        default="bahdanau",
        help="where the rnn model's decoder attends (luong adds input feeding)",
    )
    add("--dropout", type=cli.rate, default=0.1)
    add("--learning-rate", type=cli.positive_float, help="peak learning rate (default: per model)")
    add("--beam-width", type=positive_int, default=1, help="1: greedy search; more: beam search")
    add(
        "--builtin-pairs",
        type=positive_int,
        default=20000,
        help="sentence pairs of the built-in corpus",
    )
    add("--eval-sentences", type=positive_int, help="held-out sentences to score (default: all)")
    add("--samples", type=non_negative_int, default=5, help="translations to print")
    add("--plots", type=non_negative_int, default=3, help="alignment plots to draw")
    add("--seed", type=int, default=0)
    return parser


def parse_args(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    for name, value in MODEL_DEFAULTS[args.model].items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    return args


if __name__ == "__main__":
    # Answer --help and bad flags before the seconds TensorFlow takes to import.
    build_parser().parse_args()

import keras  # noqa: E402
import numpy as np  # noqa: E402

from keras_attention.callbacks.learning_monitor import LearningMonitor  # noqa: E402
from keras_attention.callbacks.prior_cross_entropy import prior_cross_entropy  # noqa: E402
from keras_attention.data.known_length import with_known_length  # noqa: E402
from keras_attention.data.translation_batches import make_translation_batches  # noqa: E402
from keras_attention.data.translation_sources import load_translation_pairs  # noqa: E402
from keras_attention.losses.masked_cross_entropy import masked_sparse_categorical_crossentropy  # noqa: E402
from keras_attention.metrics.masked_accuracy import MaskedSparseCategoricalAccuracy  # noqa: E402
from keras_attention.models.rnn_attention_translator import rnn_attention_translator  # noqa: E402
from keras_attention.models.transformer_translator import transformer_translator  # noqa: E402
from keras_attention.models.translation_training_recipe import translation_training_recipe  # noqa: E402
from keras_attention.serving.translator_export import export_translator  # noqa: E402
from keras_attention.serving.translator_export import make_translation_function  # noqa: E402
from keras_attention.text.reversible_tokenizer import ReversibleTokenizer  # noqa: E402
from keras_attention.text.scores import corpus_bleu  # noqa: E402
from keras_attention.text.scores import corpus_chrf  # noqa: E402
from keras_attention.visualization.alignment import plot_alignment  # noqa: E402
from keras_attention.visualization.explorer.translation import write_translation_explorer  # noqa: E402
from keras_attention.visualization.explorer.words import whole_word_example  # noqa: E402
from keras_attention.visualization.explorer.words import words_and_attention  # noqa: E402
from keras_attention.visualization.figures import save_figure  # noqa: E402


def train_vocabularies(train_pairs, vocabulary_size, output_dir):
    """Reversible vocabularies of both languages, saved under `output_dir/vocabulary`."""
    texts = {
        "source": train_pairs.map(lambda source, target: source),
        "target": train_pairs.map(lambda source, target: target),
    }
    encoders = []
    for name, side in texts.items():
        encoder = ReversibleTokenizer.train(side, vocabulary_size)
        encoder.save(os.path.join(output_dir, "vocabulary", name))
        encoders.append(encoder)
    return encoders


def token_statistics(train_pairs, source_encoder, target_encoder):
    """Longest source and target in tokens, and the unigram loss of the target tokens.

    The unigram loss counts the target tokens the model predicts (the text's
    tokens and the end token): a model that ignores the source can reach it.
    """
    longest = [1, 1]
    target_ids = []
    for sources, targets in train_pairs.batch(TOKENIZE_BATCH_SIZE):
        source_lengths = source_encoder.tokenize(sources).row_lengths().numpy()
        target_tokens = target_encoder.tokenize(targets)
        longest[0] = max(longest[0], int(source_lengths.max(initial=0)))
        longest[1] = max(longest[1], int(target_tokens.row_lengths().numpy().max(initial=0)))
        target_ids.append(target_tokens.flat_values.numpy())
        target_ids.append(np.full(len(targets), target_encoder.end_id))
    return longest[0], longest[1], prior_cross_entropy(target_ids)


def build_model(args, source_vocabulary_size, target_vocabulary_size):
    if args.model == "transformer":
        return transformer_translator(
            source_vocabulary_size=source_vocabulary_size,
            target_vocabulary_size=target_vocabulary_size,
            max_source_length=args.max_length,
            max_target_length=args.max_length,
            hidden_dim=args.hidden_dim,
            num_layers=args.num_layers,
            num_heads=args.num_heads,
            intermediate_dim=2 * args.hidden_dim,
            dropout=args.dropout,
        )
    return rnn_attention_translator(
        source_vocabulary_size=source_vocabulary_size,
        target_vocabulary_size=target_vocabulary_size,
        embedding_dim=args.hidden_dim // 2,
        units=args.hidden_dim,
        cell=args.cell,
        attention=args.attention,
        attention_style=args.attention_style,
        input_feeding=args.attention_style == "luong",
        dropout=args.dropout,
    )


def compile_model(model, args, steps_per_epoch, jit_compile=True):
    total_steps = max(1, args.epochs * steps_per_epoch)
    warmup_steps = max(1, total_steps // 10)
    # Linear warm-up over the first tenth of training, then cosine decay to 0 at
    # the last step (keras counts the decay steps after the warm-up).
    schedule = keras.optimizers.schedules.CosineDecay(
        0.0,
        decay_steps=max(1, total_steps - warmup_steps),
        warmup_target=args.learning_rate,
        warmup_steps=warmup_steps,
    )
    model.compile(
        optimizer=keras.optimizers.Adam(schedule),
        loss=masked_sparse_categorical_crossentropy,
        metrics=[MaskedSparseCategoricalAccuracy()],
        jit_compile=jit_compile,
    )


def translate_split(translate, pairs, limit):
    """Translations of `pairs` (at most `limit`), with their sources and references."""
    if limit is not None:
        pairs = pairs.take(limit)
    sources, references, outputs = [], [], []
    for source, reference in pairs.batch(EVALUATION_BATCH_SIZE):
        sources += [text.decode("utf-8") for text in source.numpy()]
        references += [text.decode("utf-8") for text in reference.numpy()]
        outputs.append({name: value.numpy() for name, value in translate(source).items()})
    outputs = {name: np.concatenate([batch[name] for batch in outputs]) for name in outputs[0]}
    hypotheses = [text.decode("utf-8") for text in outputs["translation"]]
    return sources, references, hypotheses, outputs


def word_alignments(outputs, count):
    """Whole words and word-to-word attention of the first `count` translations."""
    alignments = []
    for index in range(min(count, len(outputs["translation"]))):
        source, target = (
            [piece.decode("utf-8", "replace") for piece in outputs[name][index]]
            for name in ("source_tokens", "translation_tokens")
        )
        source, target = [p for p in source if p], [p for p in target if p]
        if not source or not target:
            print(f"  no alignment for held-out sentence {index}: nothing to align")
            continue
        weights = outputs["attention"][index, : len(target), : len(source)]  # (T, S)
        alignments.append((index, *words_and_attention(source, target, weights)))
    return alignments


def draw_alignments(alignments, output_dir):
    paths = []
    for index, source, target, weights in alignments:
        figure = plot_alignment(weights, source, target, title="attention while translating")
        paths.append(str(save_figure(figure, os.path.join(output_dir, f"alignment_{index}.png"))))
    return paths


def write_explorer(model, sources, source_encoder, target_encoder, args, path):
    """Every attention map the model gives for a few held-out sentences, as one HTML page."""
    examples = model.attention_examples(
        sources,
        source_encoder,
        target_encoder,
        max_source_length=args.max_length,
        max_target_length=args.max_length,
    )
    pages = [
        {**whole_word_example(example), "name": f"held-out sentence {index}"}
        for index, example in enumerate(examples)
        if example["source_tokens"] and example["target_tokens"]
    ]
    if pages:
        write_translation_explorer(path, pages, title="Translation attention")
        print(f"attention explorer written to {path}")


def main(argv=None):
    args = parse_args(argv)
    run.prepare_output(args)  # before any training: refuse unusable paths now
    keras.utils.set_random_seed(args.seed)
    policy = run.configure_precision(args.mixed_precision)
    strategy = run.make_strategy(args.strategy)
    start = time.time()

    splits = load_translation_pairs(
        args.dataset, num_pairs=args.builtin_pairs, seed=args.seed, strict=args.strict
    )
    held_out = "test" if "test" in splits else "validation"
    source_encoder, target_encoder = train_vocabularies(
        splits["train"], args.vocabulary_size, args.output_dir
    )
    print(
        f"vocabularies: {source_encoder.vocabulary_size} source and "
        f"{target_encoder.vocabulary_size} target tokens"
    )
    longest_source, longest_target, unigram_loss = token_statistics(
        splits["train"], source_encoder, target_encoder
    )
    num_train = int(splits["train"].cardinality())
    if num_train < 0:  # unknown size (some tfds sets): count once
        num_train = int(splits["train"].reduce(0, lambda count, _: count + 1))
    recipe = translation_training_recipe(
        num_train,
        longest_source,
        longest_target,
        max_length=args.max_length,
        batch_size=args.batch_size,
        epochs=args.epochs,
    )
    args.max_length, args.batch_size, args.epochs = (
        recipe.max_length,
        recipe.batch_size,
        recipe.epochs,
    )
    print(f"training on {num_train} sentence pairs:")
    for line in recipe.summary_lines():
        print(f"  {line}")

    def batches(split, shuffle):
        # One batch shape while training: XLA compiles the step once.
        enough = int(splits[split].cardinality()) >= args.batch_size
        return make_translation_batches(
            splits[split],
            source_encoder,
            target_encoder,
            args.batch_size,
            args.max_length,
            args.max_length,
            shuffle=shuffle,
            seed=args.seed,
            drop_remainder=shuffle and enough,
        )

    train = batches("train", shuffle=True)
    has_validation = "validation" in splits and int(splits["validation"].cardinality()) != 0
    validation = batches("validation", shuffle=False) if has_validation else None
    steps_per_epoch = int(train.cardinality())
    if steps_per_epoch < 0:  # unknown size (some tfds sets): count the batches once
        steps_per_epoch = int(train.reduce(0, lambda count, _: count + 1))
    with strategy.scope():
        model = build_model(args, source_encoder.vocabulary_size, target_encoder.vocabulary_size)
        compile_model(model, args, steps_per_epoch, jit_compile=run.jit_compile_for(strategy))
    model.summary()
    monitor = LearningMonitor(
        unigram_loss,
        patience=min(3, args.epochs),
        hints="Try more epochs, another --learning-rate, or check that each source line "
        "matches its target.",
    )
    fit_start = time.time()
    model.fit(
        # Known lengths: no "ran out of data" warning after the first epoch.
        with_known_length(train),
        validation_data=with_known_length(validation),
        epochs=args.epochs,
        shuffle=False,  # the datasets shuffle themselves; True only adds a warning
        callbacks=run.training_callbacks(args.output_dir) + [monitor],
        verbose=run.progress_verbosity(),
    )
    train_seconds = time.time() - fit_start

    translate = make_translation_function(
        model,
        source_encoder,
        target_encoder,
        args.max_length,
        args.max_length,
        beam_width=args.beam_width,
        decode_batch_size=EVALUATION_BATCH_SIZE,
    )
    sources, references, hypotheses, outputs = translate_split(
        translate, splits[held_out], args.eval_sentences
    )
    bleu, chrf = corpus_bleu(hypotheses, references), corpus_chrf(hypotheses, references)
    exact = float(np.mean([h == r for h, r in zip(hypotheses, references)]))
    print(
        f"{held_out} BLEU {bleu:.2f}, chrF {chrf:.2f}, exact {100 * exact:.1f}% on "
        f"{len(hypotheses)} sentences after {train_seconds:.0f} s of training"
    )
    for source, reference, hypothesis in list(zip(sources, references, hypotheses))[: args.samples]:
        print(f"  source     : {source}\n  reference  : {reference}\n  translation: {hypothesis}")
    alignments = word_alignments(outputs, max(args.plots, args.samples))
    plots = draw_alignments(alignments[: args.plots], args.output_dir)
    if plots:
        print("alignment plots:", ", ".join(plots))
    if args.html and sources:
        explorer = os.path.join(args.output_dir, "attention_explorer.html")
        shown = sources[: max(args.plots, args.samples)]
        write_explorer(model, shown, source_encoder, target_encoder, args, explorer)

    metrics = {
        "model": args.model,
        "dataset": args.dataset,
        "split": held_out,
        "bleu": bleu,
        "chrf": chrf,
        "exact_match": exact,
        "unigram_loss": unigram_loss,
        "not_learning_warnings": monitor.warnings,
        "sentences": len(hypotheses),
        "epochs": args.epochs,
        "batch_size": args.batch_size,
        "max_length": args.max_length,
        "seconds": round(time.time() - start, 1),
        "train_seconds": round(train_seconds, 1),
        "dtype_policy": policy,
        "replicas": strategy.num_replicas_in_sync,
    }
    # Metrics first: a failing export must not lose them.
    run.write_metrics(args.output_dir, metrics)
    if args.export:
        run.export_folder(
            args.export,
            lambda folder: export_translator(
                model,
                folder,
                source_encoder,
                target_encoder,
                args.max_length,
                args.max_length,
                beam_width=args.beam_width,
            ),
        )
        print(f"SavedModel written to {args.export}")
    return metrics


if __name__ == "__main__":
    main()
