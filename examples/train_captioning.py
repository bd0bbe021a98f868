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
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from keras_attention.tasks.captioning import flags as cli  # no TensorFlow
from keras_attention.training import run_setup as run  # TensorFlow when called


def build_parser():
    return cli.build_captioning_parser(description=__doc__.split("\n")[0])


if __name__ == "__main__":
    build_parser().parse_args()  # answer --help and bad flags before TensorFlow's import

import keras

import keras_attention as ka
from keras_attention.tasks.captioning.training_data import load_caption_splits


def main(argv=None):
    args = cli.with_captioner_defaults(build_parser().parse_args(argv))
    run.prepare_output(args)  # before any training: refuse unusable paths now
    keras.utils.set_random_seed(args.seed)
    policy = run.configure_precision(args.mixed_precision)
    strategy = run.make_strategy(args.strategy)
    start = time.time()

    # Data: what the flags leave open is derived from the training set, with its reason.
    splits = load_caption_splits(args)  # prints the layout read; fills args.image_size
    train_pairs = splits["train"]
    encoder = ka.data.train_caption_vocabulary(train_pairs, args.vocabulary_size, args.output_dir)
    max_length = ka.data.caption_length(train_pairs, encoder, args.max_length)
    print(f"vocabulary: {encoder.vocabulary_size} tokens; captions of up to {max_length} tokens")
    num_examples = ka.data.count_examples(train_pairs)
    recipe = ka.models.captioning_training_recipe(
        num_examples,
        args.train_steps,
        args.learning_rate,
        args.batch_size,
        args.epochs,
        args.earliest_decay_step,
    )
    print("\n".join(recipe.summary_lines()))
    cache = args.dataset == "builtin" or ka.data.fits_in_memory(num_examples, args.image_size)
    train, validation = ka.data.training_and_validation_batches(
        splits, encoder, recipe.batch_size, max_length, args.seed, cache
    )

    # Model: trained with teacher forcing; the recipe's schedule sets the learning rate.
    with strategy.scope():
        model = ka.models.build_captioner(
            args.model, encoder.vocabulary_size, max_length, **cli.captioner_options(args)
        )
        model.compile(
            optimizer=keras.optimizers.Adam(0.0),
            loss=ka.losses.masked_sparse_categorical_crossentropy,
            metrics=[ka.metrics.MaskedSparseCategoricalAccuracy()],
        )
    model.summary()
    unigram = ka.callbacks.prior_cross_entropy(ka.data.caption_token_ids(train_pairs, encoder))
    monitor = ka.callbacks.LearningMonitor(unigram, patience=min(3, recipe.epochs), hints=cli.HINTS)
    callbacks = [recipe.learning_rate_schedule(), *run.training_callbacks(args.output_dir), monitor]
    fit_start = time.time()
    model.fit(
        ka.data.with_known_length(train),  # known lengths: no "ran out of data" warning
        validation_data=ka.data.with_known_length(validation),
        epochs=recipe.epochs,
        shuffle=False,  # the datasets shuffle themselves; True only adds a warning
        callbacks=callbacks,
        verbose=run.progress_verbosity(),
    )
    train_seconds = time.time() - fit_start
    steps_trained = int(keras.ops.convert_to_numpy(model.optimizer.iterations))

    # Evaluate: caption the test images with the graph the SavedModel holds, and score them.
    images, references, hypotheses, outputs = ka.text.caption_with_model(
        model, encoder, splits["test"], max_length, args.beam_width, args.eval_images
    )
    bleu, exact = ka.text.caption_scores(hypotheses, references)
    print(
        f"test BLEU {bleu:.2f}, exact captions {exact:.1%} on {len(hypotheses)} images "
        f"after {train_seconds:.0f} s of training"
    )
    ka.visualization.draw_caption_samples(
        args.output_dir, images, references, hypotheses, outputs, args.samples, args.html
    )
    metrics = {
        "model": args.model,
        "dataset": args.dataset,
        "bleu": bleu,
        "exact_captions": exact,
        "unigram_loss": monitor.baseline,
        "not_learning_warnings": monitor.warnings,
        "test_images": len(hypotheses),
        "split_sizes": splits.sizes,  # images per split
        "max_length": max_length,
        "image_size": list(args.image_size),
        "batch_size": recipe.batch_size,
        "max_epochs": recipe.epochs,
        "train_steps": steps_trained,  # what the run took: it stops once the loss stalls
        "epochs": steps_trained // recipe.steps_per_epoch,
        "seconds": round(time.time() - start, 1),
        "train_seconds": round(train_seconds, 1),
        "dtype_policy": policy,
        "replicas": strategy.num_replicas_in_sync,
    }
    if args.dataset == "builtin":  # how much attention falls on the object a shape word names
        objects = ka.data.builtin_test_objects(args.image_size, args.builtin_sizes, args.seed)
        report = ka.metrics.attention_on_objects_report
        metrics.update(report(outputs["words"], outputs["attention"], objects[: len(images)]))
    export = ka.serving.export_captioner
    run.finish_run(  # metrics, the export, and only then the training backup is removed
        args, metrics, lambda to: export(model, to, encoder, max_length, args.beam_width)
    )
    return metrics


if __name__ == "__main__":
    main()
