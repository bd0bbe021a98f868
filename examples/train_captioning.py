"""Train a Show, Attend and Tell, Transformer or ViT image captioner, score it, show where it looks.

With no argument a Show, Attend and Tell captioner learns built-in scenes of coloured shapes ("a
red circle left of a blue square") on the CPU in a few minutes: a vocabulary of whole frequent
words (a `ReversibleTokenizer`, whose ids decode to the exact text), teacher forcing, then corpus
BLEU (sacrebleu) of the held-out captions from XLA-compiled greedy (or beam) search. It prints a few
captions and draws each image with one attention heat map per word (`attention_N.png`); on the
built-in scenes it also measures how much of the attention, at the word naming each object's shape,
falls on that object (and the chance level: the object's share of the image). `--output-dir` keeps
the vocabulary, per-epoch checkpoints, a backup that the same command resumes from, TensorBoard
logs and `metrics.json`; `--export DIR` writes a SavedModel mapping raw pixels to captions and
attention maps. What the command line leaves open is derived from the training data and printed
with its reason: the image size (the median training image, its aspect ratio kept, on the CNN's
stride), the batch size, the epochs and the learning-rate schedule (warm-up, then cosine decay).

    python examples/train_captioning.py   # or --model transformer, or --model vit (no CNN)
    python examples/train_captioning.py --dataset folder:~/glyph_strips   # 32x96 images
    python examples/train_captioning.py --dataset folder:~/Flickr8k --image-size 224 \\
        --backbone MobileNetV2 --backbone-weights imagenet --freeze-backbone \\
        --vocabulary-size 5000 --max-length 24 --epochs 20 --export runs/captioning/served
    python examples/train_captioning.py --dataset folder:~/coco --strategy mirrored  # as downloaded
"""

import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

from keras_attention.native_start_up_lines import import_tensorflow_quietly
from keras_attention.tasks.captioning import flags as cli  # no TensorFlow
from keras_attention.training.command_line import show_warnings_as_lines


def build_parser():
    return cli.build_captioning_parser(description=__doc__.split("\n")[0])


def parse_arguments(argv=None):
    """The flags, and the data they name, checked with no TensorFlow: one `error:` line."""
    parser = build_parser()
    args = parser.parse_args(argv)
    cli.check_captioning_data(parser, args)  # before the run claims its folder
    return cli.with_captioner_defaults(args)


if __name__ == "__main__":
    show_warnings_as_lines()  # "warning: ..." lines, as errors are "error: ..."
    parse_arguments()  # answer --help, bad flags and missing data before TensorFlow's import

import_tensorflow_quietly()  # without its start-up lines about a missing GPU
import keras

from keras_attention.tasks.captioning import attention_on_objects_report as objects_report
from keras_attention.tasks.captioning import builtin_objects
from keras_attention.tasks.captioning import evaluation
from keras_attention.tasks.captioning import figures
from keras_attention.tasks.captioning import model_from_flags as models
from keras_attention.tasks.captioning import training_data
from keras_attention.tasks.training_run import TrainingRun
from keras_attention.tasks.training_run import script_stops_as_lines
from keras_attention.training.input_errors import input_errors_as_exit


def main(argv=None):
    """Trains a captioner from the command line `argv`, evaluates it and exports it."""
    args = parse_arguments(argv)
    run = TrainingRun(args)  # the run's folder claimed, precision and strategy set

    # Data: what the flags leave open is derived from the training set, with its reason.
    order_seed = args.seed + run.resume_step  # a resumed run draws its batches anew
    with input_errors_as_exit():  # data that cannot be read: one line naming the file
        splits = training_data.load_caption_splits(args, order_seed, run.input_shard)  # image size
        data = training_data.prepare_caption_data(splits, args, order_seed)  # vocabulary, recipe
    encoder, max_length, recipe = data.encoder, data.max_length, data.recipe

    # Model: trained with teacher forcing; the recipe's schedule sets the learning rate.
    with run.strategy.scope(), input_errors_as_exit():  # an --init-from checkpoint is read here
        model = models.captioner_from_arguments(args, encoder.vocabulary_size, max_length)
    model.attach_tokenizers(encoder)  # kept in every checkpoint, for generate()
    model.summary()
    schedule = recipe.learning_rate_schedule()  # it stops the run once the loss stalls
    batches = (data.train, data.validation)
    steps = run.steps_per_epoch(recipe.steps_per_epoch)
    run.fit(
        model,
        *batches,
        recipe.epochs,
        data.unigram_loss,
        cli.HINTS,
        steps,
        callbacks=[schedule],
        skipped=data.skipped,
    )
    steps_trained = int(keras.ops.convert_to_numpy(model.optimizer.iterations))

    # Evaluate: caption the test images with the graph the SavedModel holds, and score them.
    images, references, hypotheses, outputs = evaluation.caption_with_model(
        model,
        encoder,
        splits["test"],
        max_length,
        args.beam_width,
        args.eval_images,
        num_images=splits.sizes["test"],
        keep_images=max(args.samples, figures.EXPLORER_IMAGES),
        # the built-in scenes' report below reads every map; other sets draw a few
        keep_attention=None
        if args.dataset == "builtin"
        else max(args.samples, figures.EXPLORER_IMAGES),
    )
    bleu, exact = evaluation.caption_scores(hypotheses, references)
    print(
        f"test BLEU {bleu:.2f}, exact captions {exact:.1%} on {len(hypotheses)} images "
        f"after {run.train_seconds:.0f} s of training"
    )
    figures.draw_caption_samples(
        args.output_dir, images, references, hypotheses, outputs, args.samples, args.html
    )
    metrics = run.metrics(
        model=args.model,
        dataset=args.dataset,
        bleu=bleu,
        exact_captions=exact,
        unigram_loss=data.unigram_loss,
        test_images=len(hypotheses),
        split_sizes=splits.sizes,  # images per split
        max_length=max_length,
        image_size=list(args.image_size),
        batch_size=recipe.batch_size,
        max_epochs=recipe.epochs,
        train_steps=steps_trained,  # what the run took: it stops once the loss stalls
        epochs=steps_trained // steps,
    )
    if args.dataset == "builtin":  # how much attention falls on the object a shape word names
        objects = builtin_objects.builtin_test_objects(
            args.image_size, args.builtin_sizes, args.seed
        )
        report = objects_report.attention_on_objects_report
        metrics.update(report(outputs["words"], outputs["attention"], objects[: len(hypotheses)]))
    # metrics, the export, and only then the training backup is removed
    return run.finish(metrics, models.captioner_export_writer(model, encoder, max_length, args))


if __name__ == "__main__":
    with script_stops_as_lines():  # --strict's first unusable item, Ctrl-C: one line
        main()
