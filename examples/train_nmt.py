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
`--output-dir` it leaves the vocabularies (`vocabulary/source`,
`vocabulary/target`), per-epoch checkpoints, a backup
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

import os
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from keras_attention.tasks.translation.flags import build_translation_parser  # noqa: E402
from keras_attention.tasks.translation.flags import parse_translation_arguments  # noqa: E402
from keras_attention.training import run_setup as run  # noqa: E402  (TensorFlow when called)

BATCH_SIZE = 64  # sentences translated at once while scoring


def build_parser():
    """The command line; building it imports no TensorFlow, so `--help` is instant."""
    return build_translation_parser(description=__doc__.split("\n")[0])


if __name__ == "__main__":
    build_parser().parse_args()  # answer --help and bad flags before TensorFlow loads

import keras  # noqa: E402

from keras_attention.callbacks.learning_monitor import LearningMonitor  # noqa: E402
from keras_attention.data.dataset_length import dataset_length  # noqa: E402
from keras_attention.data.dataset_length import with_known_length  # noqa: E402
from keras_attention.serving.translator_export import export_translator  # noqa: E402
from keras_attention.serving.translator_export import make_translation_function  # noqa: E402
from keras_attention.tasks.translation import figures  # noqa: E402
from keras_attention.tasks.translation import model_from_flags as models  # noqa: E402
from keras_attention.tasks.translation.evaluation import score_translations  # noqa: E402
from keras_attention.tasks.translation.evaluation import translate_pairs  # noqa: E402
from keras_attention.tasks.translation.training_data import load_translation_splits  # noqa: E402
from keras_attention.tasks.translation.training_data import prepare_translation_data  # noqa: E402


def main(argv=None):
    args = parse_translation_arguments(argv, build_parser())
    run.prepare_output(args)  # before any training: refuse unusable paths now
    keras.utils.set_random_seed(args.seed)
    policy = run.configure_precision(args.mixed_precision)
    strategy = run.make_strategy(args.strategy)
    start = time.time()

    # Data: sentence pairs, a vocabulary per language, the recipe and the batches.
    splits = load_translation_splits(args)  # --dataset, with its own splits where it has them
    data = prepare_translation_data(splits, args)  # fills max_length, batch_size, epochs
    print("\n".join(data.summary_lines()))
    encoders = (data.source_encoder, data.target_encoder)

    # Model: built and compiled under the distribution strategy.
    with strategy.scope():
        model = models.translator_from_arguments(args, *(e.vocabulary_size for e in encoders))
        steps_per_epoch = dataset_length(data.train)
        models.compile_translator(model, args, steps_per_epoch, run.jit_compile_for(strategy))
    model.summary()
    monitor = LearningMonitor(
        data.unigram_loss,
        patience=min(3, args.epochs),
        hints="Try more epochs, another --learning-rate, or check that each source line "
        "matches its target.",
    )
    fit_start = time.time()
    model.fit(
        with_known_length(data.train),  # known lengths: no "ran out of data" warning
        validation_data=with_known_length(data.validation),
        epochs=args.epochs,
        shuffle=False,  # the datasets shuffle themselves; True only adds a warning
        callbacks=run.training_callbacks(args.output_dir) + [monitor],
        verbose=run.progress_verbosity(),
    )
    train_seconds = time.time() - fit_start

    # Evaluation: translate the held-out split with the exported graph, and score it.
    lengths = dict(max_source_length=args.max_length, max_target_length=args.max_length)
    translate = make_translation_function(
        model, *encoders, **lengths, beam_width=args.beam_width, decode_batch_size=BATCH_SIZE
    )
    sources, references, hypotheses, outputs = translate_pairs(
        translate, data.splits[data.held_out], args.eval_sentences, BATCH_SIZE
    )
    scores = score_translations(hypotheses, references)
    print(
        f"{data.held_out} BLEU {scores['bleu']:.2f}, chrF {scores['chrf']:.2f}, exact "
        f"{100 * scores['exact_match']:.1f}% on {len(hypotheses)} sentences after "
        f"{train_seconds:.0f} s of training"
    )
    for source, reference, hypothesis in list(zip(sources, references, hypotheses))[: args.samples]:
        print(f"  source     : {source}\n  reference  : {reference}\n  translation: {hypothesis}")

    # Drawings: word alignments of a few sentences, and every attention map on one page.
    shown = max(args.plots, args.samples)
    alignments = figures.word_alignments(outputs, shown)
    plots = figures.draw_alignments(alignments[: args.plots], args.output_dir)
    if plots:
        print("alignment plots:", ", ".join(plots))
    page = os.path.join(args.output_dir, "attention_explorer.html")
    if args.html and sources:
        examples = model.attention_examples(sources[:shown], *encoders, **lengths)
        if figures.write_word_translation_explorer(page, examples):
            print(f"attention explorer written to {page}")

    metrics = dict(model=args.model, dataset=args.dataset, split=data.held_out, **scores)
    metrics.update(unigram_loss=data.unigram_loss, not_learning_warnings=monitor.warnings)
    metrics.update(sentences=len(hypotheses), epochs=args.epochs, batch_size=args.batch_size)
    metrics.update(max_length=args.max_length, seconds=round(time.time() - start, 1))
    metrics.update(train_seconds=round(train_seconds, 1), dtype_policy=policy)
    metrics.update(replicas=strategy.num_replicas_in_sync, split_sizes=data.split_sizes)

    def write_export(folder):
        export_translator(model, folder, *encoders, **lengths, beam_width=args.beam_width)

    run.finish_run(args, metrics, write_export)  # metrics, export, then the backup is removed
    return metrics


if __name__ == "__main__":
    main()
