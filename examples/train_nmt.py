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
    python examples/train_nmt.py --init-from ~/checkpoints/opus-mt-en-de \\
        --dataset parallel:~/multi30k --source-lang en --target-lang de --epochs 2
"""

import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

from keras_attention.native_start_up_lines import import_tensorflow_quietly  # noqa: E402
from keras_attention.tasks.translation import flags  # noqa: E402  (no TensorFlow)
from keras_attention.training.command_line import show_warnings_as_lines  # noqa: E402

BATCH_SIZE = 64  # sentences translated at once while scoring
HINTS = (
    "Try more epochs, another --learning-rate, or check that each source line matches its target."
)


def build_parser():
    """The command line; building it imports no TensorFlow, so `--help` is instant."""
    return flags.build_translation_parser(description=__doc__.split("\n")[0])


def parse_arguments(argv=None):
    """The flags, and the data they name, checked with no TensorFlow: one `error:` line."""
    parser = build_parser()
    args = flags.parse_translation_arguments(argv, parser)
    flags.check_translation_data(parser, args)  # before the run claims its folder
    return args


if __name__ == "__main__":
    show_warnings_as_lines()  # "warning: ..." lines, as errors are "error: ..."
    parse_arguments()  # answer --help, bad flags and missing data before TensorFlow loads

import_tensorflow_quietly()  # without its start-up lines about a missing GPU
from keras_attention.tasks.training_run import TrainingRun  # noqa: E402
from keras_attention.tasks.training_run import script_stops_as_lines  # noqa: E402
from keras_attention.tasks.translation import evaluation  # noqa: E402
from keras_attention.tasks.translation import figures  # noqa: E402
from keras_attention.tasks.translation import model_from_flags as models  # noqa: E402
from keras_attention.tasks.translation import training_data  # noqa: E402
from keras_attention.training.input_errors import input_errors_as_exit  # noqa: E402


def main(argv=None):
    """Trains a translator from the command line `argv`, evaluates it and exports it."""
    args = parse_arguments(argv)
    run = TrainingRun(args)  # the run's folder claimed, precision and strategy set

    # Data: sentence pairs, a vocabulary per language, the recipe and the batches.
    with input_errors_as_exit():  # data that cannot be read: one line naming the file
        # files streamed (this worker's share), a sample read now
        splits = training_data.load_translation_splits(args, run.input_shard)
        # max_length, batch size and epochs; a resumed run draws its batches anew
        data = training_data.prepare_translation_data(splits, args, args.seed + run.resume_step)
    print("\n".join(data.summary_lines()))
    encoders = (data.source_encoder, data.target_encoder)

    # Model: built and compiled under the distribution strategy.
    with run.strategy.scope():
        with input_errors_as_exit():  # an --init-from checkpoint is read here
            model = models.translator_from_arguments(args, *(e.vocabulary_size for e in encoders))
        model.attach_tokenizers(*encoders)  # kept in every checkpoint, for generate()
        steps_per_epoch = run.steps_per_epoch(data.recipe.steps_per_epoch)
        models.compile_translator(model, args, steps_per_epoch, run.jit_compile)
    model.summary()
    run.fit(
        model,
        data.train,
        data.validation,
        args.epochs,
        data.unigram_loss,
        HINTS,
        steps_per_epoch,
        skipped=data.skipped,
    )

    # Evaluation: translate the held-out split with the exported graph, and score it.
    held_out = data.splits[data.held_out]
    sources, references, hypotheses, outputs, scores = evaluation.translate_held_out(
        model, encoders, held_out, args, BATCH_SIZE
    )
    print(
        f"{data.held_out} BLEU {scores['bleu']:.2f}, chrF {scores['chrf']:.2f}, exact "
        f"{100 * scores['exact_match']:.1f}% on {len(hypotheses)} sentences after "
        f"{run.train_seconds:.0f} s of training"
    )
    for source, reference, hypothesis in list(zip(sources, references, hypotheses))[: args.samples]:
        print(f"  source     : {source}\n  reference  : {reference}\n  translation: {hypothesis}")

    # Drawings: word alignments of a few sentences, and every attention map on one page.
    shown = max(args.plots, args.samples)
    alignments = figures.word_alignments(outputs, shown, encoders[1])
    plots = figures.draw_alignments(alignments[: args.plots], args.output_dir)
    if plots:
        print("alignment plots:", ", ".join(plots))
    page = os.path.join(args.output_dir, "attention_explorer.html")
    if args.html and sources:
        lengths = dict(max_source_length=args.max_length, max_target_length=args.max_length)
        examples = model.attention_examples(sources[:shown], *encoders, **lengths)
        if figures.write_word_translation_explorer(page, examples, tokenizer=encoders[1]):
            print(f"attention explorer written to {page}")

    metrics = run.metrics(model=args.model, dataset=args.dataset, split=data.held_out, **scores)
    metrics.update(unigram_loss=data.unigram_loss, sentences=len(hypotheses))
    metrics.update(epochs=args.epochs, batch_size=args.batch_size, max_length=args.max_length)
    metrics.update(split_sizes=data.split_sizes)
    # metrics, the export, and only then the training backup is removed
    return run.finish(metrics, models.translator_export_writer(model, encoders, args))


if __name__ == "__main__":
    with script_stops_as_lines():  # --strict's first unusable item, Ctrl-C: one line
        main()
