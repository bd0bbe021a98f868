"""Train a Show, Attend and Tell or a Transformer image captioner, score it and show where it looks.

With no argument a Show, Attend and Tell captioner learns the built-in scenes
of coloured shapes ("a red circle left of a blue square") on the CPU in a few
minutes. The run learns a vocabulary of whole frequent words (a
`ReversibleTokenizer`, whose ids decode to the exact text) from the training
captions, trains with teacher forcing, then captions the held-out images with
XLA-compiled greedy (or beam) search and reports corpus BLEU (sacrebleu). For
a few held-out images it prints the caption and draws the image with one
attention heat map per generated word (`attention_N.png`); on the built-in
scenes it also measures how much of the attention, at the word naming each
object's shape, falls on that object (and the chance level: the object's
share of the image). Under `--output-dir` it leaves the vocabulary,
per-epoch checkpoints, a backup that an interrupted run resumes from when
started again with the same command, TensorBoard logs and `metrics.json`.
`--export DIR` writes a SavedModel mapping raw pixels to captions and
attention maps.

What is not given on the command line is derived from the training data and
printed with its reason, one line each: the image size (the median training
image, keeping its aspect ratio, rounded to the CNN's stride), the batch
size, the epochs (enough for the optimizer steps the model needs) and the
learning-rate schedule (a linear warm-up, then cosine decay, in steps).

    python examples/train_captioning.py
    python examples/train_captioning.py --model transformer
    python examples/train_captioning.py --dataset folder:~/glyph_strips   # 32x96 images
    python examples/train_captioning.py --dataset folder:~/Flickr8k --image-size 224 \\
        --backbone MobileNetV2 --backbone-weights imagenet --freeze-backbone \\
        --vocabulary-size 5000 --max-length 24 --epochs 20 --export runs/captioning/served
    python examples/train_captioning.py --dataset coco_captions --image-size 224 \\
        --backbone ResNet50 --backbone-weights imagenet --freeze-backbone --strategy mirrored
"""

import argparse
import math
import os
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from keras_attention.training import command_line as cli  # noqa: E402  (no TensorFlow)
from keras_attention.training import run_setup as run  # noqa: E402  (TensorFlow when called)

# Defaults per model that reach BLEU > 90 on the built-in scenes in a few CPU minutes,
# with most of the attention at each object's shape word on that object.
# - Show, Attend and Tell without the doubly stochastic penalty: over a 12x12 grid and
#   ~9 words the penalty asks every cell to be looked at, which sends the attention
#   at a shape word away from the object that its colour word has just looked at.
# - A one-head Transformer reading the CNN cells directly: its cross-attention maps
#   are the only way image information reaches each word (an encoder block over the
#   cells spreads each glyph over the grid: with one, the last map peaked on the named
#   glyph for 41% of the words, where exact captions were 100%). Two decoder blocks,
#   because with one a word's query cannot know where the previous words looked
#   (cross-attention outputs reach later words only through the next block's
#   self-attention), which a caption of several objects in an order needs.
# - `train_steps`: the most optimizer steps when `--epochs` is not given. Training
#   holds the peak learning rate while the validation loss improves and decays once
#   it stalls (`DecayOnPlateau`): attention models sit on a plateau for a number of
#   steps that depends on the data before they learn where to look, so a schedule
#   fixed in advance either wastes steps on easy data or decays too early on hard data
#   (on 64x96 object-relation scenes, Show, Attend and Tell left its plateau after
#   1000 of 1740 fixed steps).
MODEL_DEFAULTS = {
    "show_attend_tell": dict(
        train_steps=5000, hidden_dim=128, learning_rate=2e-3, attention_penalty=0.0
    ),
    "transformer": dict(
        train_steps=5000,
        hidden_dim=64,
        learning_rate=2e-3,
        num_layers=2,
        num_heads=1,
        encoder_layers=0,
    ),
}
EVALUATION_BATCH_SIZE = 50
# Test images on the attention explorer page.
EXPLORER_IMAGES = 8
# The longest caption decoded when `--max-length` is not given, in tokens.
MAX_DEFAULT_LENGTH = 40
# Derived batch sizes: the largest power of two up to MAX_BATCH_SIZE that still gives
# MIN_STEPS_PER_EPOCH steps an epoch, and at least MIN_BATCH_SIZE.
MAX_BATCH_SIZE = 64
MIN_BATCH_SIZE = 8
MIN_STEPS_PER_EPOCH = 30
# The longer side of a derived image size at most: the attention's cost grows with the
# cells of the feature grid (96 pixels are 24 cells of the small CNN).
MAX_DERIVED_SIDE = {"small_cnn": 96}
MAX_DERIVED_SIDE_APPLICATIONS = 224
WARMUP_FRACTION = 0.1
WARMUP_STEPS = 150
# Steps without a 1% better validation loss that start the final decay (in whole epochs).
PATIENCE_STEPS = 250
# No stall starts the decay before this many steps: attention models can sit on a
# plateau for 1000 steps or more before they learn where to look (a decay started
# after 650 steps on 80x60 object-relation scenes left Show, Attend and Tell there).
EARLIEST_DECAY_STEP = 2000
# Smaller improvements of the validation loss (nats a token) do not hold the peak
# learning rate: near 0 they are noise, and the captions no longer change.
MIN_LOSS_IMPROVEMENT = 0.005
# Training images kept in memory after their first decoding, at most (float32 pixels).
CACHE_BYTES = 2**30


def image_size_argument(text):
    """`--image-size`: "48" (a square) or "32x96" (height x width)."""

    parts = text.lower().split("x")
    try:
        size = tuple(int(part) for part in parts)
        return image_size_pair(size[0] if len(size) == 1 else size)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected SIDE or HEIGHTxWIDTH with sides >= 8, got {text!r}"
        ) from None


def build_parser():
    """The command line; building it imports no TensorFlow, so `--help` is instant."""
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    cli.add_common_arguments(
        parser,
        epochs=None,
        batch_size=None,
        output_dir="runs/captioning",
        dataset_formats=(
            "'builtin' (generated scenes, offline); 'folder:PATH', images plus "
            "PATH/captions.tsv of file<TAB>caption lines, as Flickr8k ships (an image that is "
            "missing or cannot be decoded, or a malformed line, is skipped with a warning naming "
            "it, or stops the run with --strict; ~ and $VARIABLES are expanded); or "
            "'coco_captions[/CONFIG]' from tensorflow-datasets"
        ),
    )
    parser.add_argument("--model", choices=sorted(MODEL_DEFAULTS), default="show_attend_tell")
    parser.add_argument(
        "--image-size",
        type=image_size_argument,
        help="SIDE or HEIGHTxWIDTH the CNN sees (default: the median training image, "
        "rounded to the CNN's stride)",
    )
    parser.add_argument(
        "--backbone", default="small_cnn", help="'small_cnn' or a keras.applications name"
    )
    parser.add_argument(
        "--backbone-weights", default=None, help="'imagenet' for pre-trained weights (a download)"
    )
    parser.add_argument("--freeze-backbone", action="store_true", help="do not train the CNN")
    parser.add_argument(
        "--vocabulary-size",
        type=cli.positive_int,
        default=1000,
        help="most tokens, the 260 special and byte tokens included",
    )
    parser.add_argument(
        "--max-length",
        type=cli.positive_int,
        help="tokens read and written per caption: its pieces plus the start (or end) token "
        "(default: fits the longest training caption)",
    )
    parser.add_argument(
        "--hidden-dim",
        type=cli.positive_int,
        help="LSTM units or Transformer width (default: "
        + ", ".join(f"{name} {d['hidden_dim']}" for name, d in MODEL_DEFAULTS.items())
        + ")",
    )
    parser.add_argument(
        "--num-layers",
        type=cli.positive_int,
        help="Transformer decoder blocks (default: 2)",
    )
    parser.add_argument(
        "--encoder-layers",
        type=cli.non_negative_int,
        help="Transformer blocks over the image cells (default: 0)",
    )
    parser.add_argument(
        "--num-heads",
        type=cli.positive_int,
        help="Transformer attention heads (default: 1)",
    )
    parser.add_argument(
        "--attention-penalty",
        type=cli.non_negative_float,
        help="lambda of Show, Attend and Tell's doubly stochastic attention penalty "
        "(default: 0; the paper uses 1)",
    )
    parser.add_argument(
        "--train-steps",
        type=cli.positive_int,
        help="the most optimizer steps, when --epochs is not given; training stops sooner "
        "once the validation loss stops improving (default: "
        + ", ".join(f"{name} {d['train_steps']}" for name, d in MODEL_DEFAULTS.items())
        + ")",
    )
    parser.add_argument("--dropout", type=cli.rate, default=0.1)
    parser.add_argument(
        "--learning-rate",
        type=cli.positive_float,
        help="peak learning rate (default: 2e-3)",
    )
    parser.add_argument(
        "--beam-width",
        type=cli.positive_int,
        default=1,
        help="1: greedy search; more: beam search",
    )
    parser.add_argument(
        "--builtin-sizes",
        type=cli.non_negative_int,
        nargs=3,
        default=(4000, 500, 500),
        metavar=("TRAIN", "VALIDATION", "TEST"),
        help="scenes per split of the built-in dataset",
    )
    parser.add_argument(
        "--eval-images",
        type=cli.positive_int,
        help="held-out captions to score (default: all)",
    )
    parser.add_argument(
        "--samples",
        type=cli.non_negative_int,
        default=4,
        help="captions to print and draw",
    )
    parser.add_argument("--seed", type=int, default=0)
    return parser


def parse_args(argv=None):
    args = build_parser().parse_args(argv)
    for name, value in MODEL_DEFAULTS[args.model].items():
        if getattr(args, name, None) is None:
            setattr(args, name, value)
    return args


if __name__ == "__main__":
    # Answer --help and bad flags before the seconds TensorFlow takes to import.
    build_parser().parse_args()

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from keras_attention.callbacks.decay_on_plateau import DecayOnPlateau  # noqa: E402
from keras_attention.callbacks.learning_monitor import LearningMonitor  # noqa: E402
from keras_attention.callbacks.prior_cross_entropy import prior_cross_entropy  # noqa: E402
from keras_attention.data.caption_sources import BUILTIN_IMAGE_SIZE  # noqa: E402
from keras_attention.data.caption_sources import load_caption_dataset  # noqa: E402
from keras_attention.data.caption_sources import median_image_size  # noqa: E402
from keras_attention.data.known_length import with_known_length  # noqa: E402
from keras_attention.data.shapes_scenes import shape_scene_splits  # noqa: E402
from keras_attention.losses.masked_cross_entropy import masked_sparse_categorical_crossentropy  # noqa: E402
from keras_attention.metrics.caption_attention import attention_on_objects_summary  # noqa: E402
from keras_attention.metrics.masked_accuracy import MaskedSparseCategoricalAccuracy  # noqa: E402
from keras_attention.models.image_backbones import backbone_stride  # noqa: E402
from keras_attention.models.image_backbones import image_size_pair  # noqa: E402
from keras_attention.models.show_attend_tell_captioner import show_attend_tell_captioner  # noqa: E402
from keras_attention.models.transformer_captioner import transformer_captioner  # noqa: E402
from keras_attention.serving.caption_export import export_captioner  # noqa: E402
from keras_attention.text.reversible_tokenizer import ReversibleTokenizer  # noqa: E402
from keras_attention.text.scores import corpus_bleu  # noqa: E402
from keras_attention.visualization.explorer.caption import write_caption_explorer  # noqa: E402
from keras_attention.visualization.explorer.words import word_maps  # noqa: E402
from keras_attention.visualization.figures import save_figure  # noqa: E402
from keras_attention.visualization.image_attention import plot_caption_attention  # noqa: E402


def derived_image_size(median_size, backbone, source="median training image"):
    """The image size a model sees: the median image, its aspect ratio kept, on the stride.

    Sides are rounded to multiples of the backbone's stride (so every grid
    cell covers whole pixels) after scaling a large image down until its
    longer side fits `MAX_DERIVED_SIDE`.

    Returns:
        `((height, width), reason)`.
    """
    height, width = median_size
    stride = backbone_stride(backbone)
    most = MAX_DERIVED_SIDE.get(backbone, MAX_DERIVED_SIDE_APPLICATIONS)
    scale = min(1.0, most / max(height, width))
    # At least two cells a side, and the 8 pixels a backbone needs.
    smallest = max(2 * stride, 8)
    size = tuple(
        max(smallest, int(round(side * scale / stride)) * stride) for side in (height, width)
    )
    grid = (size[0] // stride, size[1] // stride)
    reason = f"{source} {height}x{width}"
    reason += f", scaled by {scale:.2f} to a longer side of at most {most}" if scale < 1 else ""
    reason += (
        f", aspect ratio kept, sides multiples of the CNN's stride {stride}: "
        f"a {grid[0]}x{grid[1]} feature grid"
    )
    return size, reason


def plan_training(*, num_examples, train_steps, learning_rate, batch_size=None, epochs=None):
    """Batch size, epochs and learning-rate schedule from the number of training examples.

    What is given is kept; the rest is derived:

    - batch size: the largest power of two up to `MAX_BATCH_SIZE` that still
      gives `MIN_STEPS_PER_EPOCH` steps an epoch (at least `MIN_BATCH_SIZE`);
    - epochs: at most enough for about `train_steps` optimizer steps;
    - schedule: a linear warm-up from 0 over `WARMUP_STEPS` (at most
      `WARMUP_FRACTION` of the steps) to `learning_rate`, held for at least
      `EARLIEST_DECAY_STEP` steps and while the validation loss improves,
      then a cosine decay to 0 once it has not improved for about
      `PATIENCE_STEPS` steps (or when the epochs left are just enough for
      the decay); training stops when the decay ends.

    Args:
        num_examples: training `(image, caption)` pairs, a positive int.
        train_steps: the most optimizer steps when `epochs` is None.
        learning_rate: the peak learning rate.
        batch_size: None to derive it.
        epochs: None to derive them (the most epochs).

    Returns:
        dict with "batch_size", "epochs", "steps_per_epoch", "total_steps",
        "warmup_steps", "patience" (epochs), "earliest_decay_step",
        "learning_rate" and "reasons"
        (one sentence per derived or given choice).

    Example:

    >>> plan = plan_training(num_examples=2400, train_steps=3000, learning_rate=2e-3)
    >>> plan["batch_size"], plan["steps_per_epoch"], plan["epochs"], plan["warmup_steps"]
    (64, 37, 81, 150)
    >>> plan["patience"]
    5
    """
    count = num_examples
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
        raise ValueError(
            "`num_examples` must be a positive int (the training pairs). "
            f"Received: num_examples={num_examples!r}"
        )
    reasons = {}
    if batch_size is None:
        batch_size = MAX_BATCH_SIZE
        while batch_size > MIN_BATCH_SIZE and count // batch_size < MIN_STEPS_PER_EPOCH:
            batch_size //= 2
        reasons["batch_size"] = (
            f"the largest power of two <= {MAX_BATCH_SIZE} giving {MIN_STEPS_PER_EPOCH} "
            f"steps an epoch over {count} training captions (at least {MIN_BATCH_SIZE})"
        )
    else:
        reasons["batch_size"] = "given"
    # Training batches drop the remainder (one compiled step shape): whole batches only.
    steps_per_epoch = max(1, count // batch_size)
    if epochs is None:
        epochs = max(1, int(round(train_steps / steps_per_epoch)))
        reasons["epochs"] = (
            f"at most about {train_steps} optimizer steps at {steps_per_epoch} steps an epoch; "
            "fewer when the validation loss stops improving sooner"
        )
    else:
        reasons["epochs"] = "given (the most; fewer when the validation loss stops improving)"
    total_steps = epochs * steps_per_epoch
    warmup_steps = max(1, min(WARMUP_STEPS, int(round(WARMUP_FRACTION * total_steps))))
    patience = max(2, math.ceil(PATIENCE_STEPS / steps_per_epoch))
    earliest_decay_step = min(EARLIEST_DECAY_STEP, total_steps)
    reasons["learning_rate"] = (
        f"linear warm-up 0 -> {learning_rate:g} over {warmup_steps} steps, held for at least "
        f"{earliest_decay_step} steps and while the validation loss improves by 1% (and "
        f"{MIN_LOSS_IMPROVEMENT}) within {patience} epochs, then cosine decay to 0 and stop"
    )
    return {
        "batch_size": batch_size,
        "epochs": epochs,
        "steps_per_epoch": steps_per_epoch,
        "total_steps": total_steps,
        "warmup_steps": warmup_steps,
        "patience": patience,
        "earliest_decay_step": earliest_decay_step,
        "learning_rate": learning_rate,
        "reasons": reasons,
    }


def learning_rate_schedule(plan):
    """The `DecayOnPlateau` callback that sets the learning rate of a `plan_training` plan."""
    return DecayOnPlateau(
        peak_learning_rate=plan["learning_rate"],
        warmup_steps=plan["warmup_steps"],
        patience=plan["patience"],
        min_absolute_delta=MIN_LOSS_IMPROVEMENT,
        earliest_decay_step=plan["earliest_decay_step"],
    )


def count_examples(pairs):
    """The pairs of a dataset: its cardinality, or one pass over it when that is unknown."""
    cardinality = int(pairs.cardinality())
    if cardinality >= 0:
        return cardinality
    print("counting the training captions (their number is not known ahead)")
    return int(pairs.reduce(np.int64(0), lambda count, _: count + 1))


def train_vocabulary(train_pairs, vocabulary_size, output_dir):
    """A vocabulary of the training captions' words, saved under `output_dir/vocabulary`."""
    tokenizer = ReversibleTokenizer.train(
        train_pairs.map(lambda image, text: text), vocabulary_size
    )
    tokenizer.save(os.path.join(output_dir, "vocabulary"))
    return tokenizer


def longest_caption(train_pairs, encoder):
    """Tokens of the longest training caption plus one: the start token it is read
    after, or the end token it is written with."""
    lengths = (
        train_pairs.map(lambda image, text: text)
        .batch(1024)
        .map(lambda texts: tf.reduce_sum(tf.cast(encoder.encode(texts, 256) > 0, tf.int32), axis=1))
    )
    return int(max(np.max(batch) for batch in lengths.as_numpy_iterator())) + 1


def caption_unigram_loss(train_pairs, encoder):
    """The loss of a model that ignores the image: the entropy of the caption tokens.

    It counts what the model predicts: each caption's tokens and its end token.
    """
    token_ids = []
    for texts in train_pairs.map(lambda image, text: text).batch(1024):
        tokens = encoder.tokenize(texts)  # (B, None)
        token_ids += [tokens.flat_values.numpy(), np.full(len(texts), encoder.end_id)]
    return prior_cross_entropy(token_ids)


def caption_batches(pairs, encoder, batch_size, max_length, shuffle, seed, cache):
    """`({"image", "caption": ids[:-1]}, ids[1:])` batches: teacher forcing on shifted ids."""

    def to_example(image, text):
        ids = encoder.encode(text, max_length + 1, add_start=True, add_end=True)  # (L + 1,)
        return {"image": image, "caption": ids[:-1]}, ids[1:]

    dataset = pairs.map(to_example, num_parallel_calls=tf.data.AUTOTUNE)
    if cache:
        dataset = dataset.cache()
    if shuffle:
        dataset = dataset.shuffle(4096, seed=seed, reshuffle_each_iteration=True)
    # One batch shape while training: compiled steps are traced once.
    enough = int(pairs.cardinality()) >= batch_size
    dataset = dataset.batch(batch_size, drop_remainder=shuffle and enough)
    return dataset.prefetch(tf.data.AUTOTUNE)


def build_model(args, vocabulary_size, max_length):
    backbone = dict(
        image_size=args.image_size,
        backbone=args.backbone,
        backbone_weights=args.backbone_weights,
        trainable_backbone=not args.freeze_backbone,
    )
    if args.model == "show_attend_tell":
        return show_attend_tell_captioner(
            vocabulary_size=vocabulary_size,
            max_caption_length=max_length,
            embedding_dim=args.hidden_dim // 2,
            units=args.hidden_dim,
            attention_units=args.hidden_dim // 2,
            dropout=args.dropout,
            doubly_stochastic_lambda=args.attention_penalty,
            **backbone,
        )
    return transformer_captioner(
        vocabulary_size=vocabulary_size,
        max_caption_length=max_length,
        hidden_dim=args.hidden_dim,
        num_layers=args.num_layers,
        num_heads=args.num_heads,
        intermediate_dim=2 * args.hidden_dim,
        encoder_layers=args.encoder_layers,
        dropout=args.dropout,
        **backbone,
    )


def compile_model(model, plan):
    model.compile(
        # The learning rate is set before every step by `learning_rate_schedule(plan)`.
        optimizer=keras.optimizers.Adam(0.0),
        loss=masked_sparse_categorical_crossentropy,
        metrics=[MaskedSparseCategoricalAccuracy()],
        # XLA where it pays: on accelerators ("auto" keeps the CPU's faster convolutions).
        jit_compile="auto",
    )


def caption_split(caption, pairs, limit):
    """Captions of the images of `pairs` with their references, one entry per image.

    `caption(images)` returns `(captions, attention, words)`, as
    `model.caption(..., return_attention=True)` does. Sources with several
    captions per image repeat the image once per caption, one after the
    other; such a run becomes one image with a list of references.
    """
    if limit is not None:
        pairs = pairs.take(limit)
    images, references = [], []
    for image, text in pairs.as_numpy_iterator():
        if images and np.array_equal(images[-1], image):
            references[-1].append(text.decode("utf-8"))
        else:
            images.append(image)
            references.append([text.decode("utf-8")])
    hypotheses, attention, words = [], [], []
    for start in range(0, len(images), EVALUATION_BATCH_SIZE):
        batch = np.stack(images[start : start + EVALUATION_BATCH_SIZE])
        batch_captions, batch_attention, batch_words = caption(batch)
        hypotheses += batch_captions
        attention.append(batch_attention)
        words += batch_words
    outputs = {"attention": np.concatenate(attention), "words": words}
    return images, references, hypotheses, outputs


def bleu_references(references):
    """sacrebleu wants the same number of references for every image."""
    most = max(len(texts) for texts in references)
    return [texts + texts[:1] * (most - len(texts)) for texts in references]


def main(argv=None):
    args = parse_args(argv)
    run.prepare_output(args)  # before any training: refuse unusable paths now
    keras.utils.set_random_seed(args.seed)
    policy = run.configure_precision(args.mixed_precision)
    strategy = run.make_strategy(args.strategy)
    start = time.time()

    if args.image_size is None:
        if args.dataset == "builtin":
            median = (BUILTIN_IMAGE_SIZE, BUILTIN_IMAGE_SIZE)
            source = "built-in scenes drawn at"
        else:
            native = load_caption_dataset(args.dataset, None, seed=args.seed)
            median = median_image_size(native["train"])
            source = "median training image"
        args.image_size, reason = derived_image_size(median, args.backbone, source)
    else:
        reason = "given"
    print(f"image size {args.image_size[0]}x{args.image_size[1]}: {reason}")
    splits = load_caption_dataset(
        args.dataset,
        args.image_size,
        builtin_sizes=args.builtin_sizes,
        seed=args.seed,
        strict=args.strict,
    )
    encoder = train_vocabulary(splits["train"], args.vocabulary_size, args.output_dir)
    max_length = args.max_length or min(
        longest_caption(splits["train"], encoder), MAX_DEFAULT_LENGTH
    )
    print(f"vocabulary: {encoder.vocabulary_size} tokens; captions of up to {max_length} tokens")

    num_examples = count_examples(splits["train"])
    plan = plan_training(
        num_examples=num_examples,
        train_steps=args.train_steps,
        learning_rate=args.learning_rate,
        batch_size=args.batch_size,
        epochs=args.epochs,
    )
    args.batch_size, args.epochs = plan["batch_size"], plan["epochs"]
    for name in ("batch_size", "epochs", "learning_rate"):
        value = getattr(args, name)
        print(f"{name.replace('_', ' ')} {value:g}: {plan['reasons'][name]}")
    height, width = args.image_size
    cache = args.dataset == "builtin" or num_examples * height * width * 3 * 4 <= CACHE_BYTES

    def batches(split, shuffle):
        return caption_batches(
            splits[split],
            encoder,
            args.batch_size,
            max_length,
            shuffle=shuffle,
            seed=args.seed,
            cache=cache,
        )

    train = batches("train", shuffle=True)
    has_validation = int(splits["validation"].cardinality()) != 0
    validation = batches("validation", shuffle=False) if has_validation else None
    with strategy.scope():
        model = build_model(args, encoder.vocabulary_size, max_length)
        compile_model(model, plan)
    model.summary()
    monitor = LearningMonitor(
        caption_unigram_loss(splits["train"], encoder),
        patience=min(3, args.epochs),
        hints="Try more epochs (--train-steps), another --learning-rate or --image-size, and "
        "check that captions.tsv names the right file for each caption.",
    )
    fit_start = time.time()
    model.fit(
        # Known lengths: no "ran out of data" warning after the first epoch.
        with_known_length(train),
        validation_data=with_known_length(validation),
        epochs=args.epochs,
        shuffle=False,  # the datasets shuffle themselves; True only adds a warning
        callbacks=[learning_rate_schedule(plan)]
        + run.training_callbacks(args.output_dir)
        + [monitor],
        verbose=run.progress_verbosity(),
    )
    train_seconds = time.time() - fit_start
    steps_trained = int(keras.ops.convert_to_numpy(model.optimizer.iterations))

    def caption(images):
        # The graph the SavedModel holds: its captions, attention maps and words.
        return model.caption(
            images,
            encoder,
            max_length=max_length,
            beam_width=args.beam_width,
            return_attention=True,
            decode_batch_size=EVALUATION_BATCH_SIZE,
        )

    images, references, hypotheses, outputs = caption_split(
        caption, splits["test"], args.eval_images
    )
    bleu = corpus_bleu(hypotheses, bleu_references(references))
    # BLEU counts up to 4-grams: captions of three words or fewer score 0 even when right.
    exact = float(np.mean([text in texts for text, texts in zip(hypotheses, references)]))
    print(
        f"test BLEU {bleu:.2f}, exact captions {exact:.1%} on {len(hypotheses)} images "
        f"after {train_seconds:.0f} s of training"
    )
    # Whole words (pieces joined) with one attention map each, for plots and the page.
    no_maps = outputs["attention"][0, :0]  # (0, h, w): an empty caption's maps
    captions = [
        word_maps(pieces, outputs["attention"][i, : len(pieces)]) if pieces else ([], no_maps)
        for i, pieces in enumerate(outputs["words"][: max(args.samples, EXPLORER_IMAGES)])
    ]
    figures = []
    for index in range(min(args.samples, len(captions))):
        print(f"  reference: {references[index][0]}\n  caption  : {hypotheses[index]}")
        caption_words, maps = captions[index]
        figure = plot_caption_attention(images[index], maps, caption_words, title=hypotheses[index])
        path = os.path.join(args.output_dir, f"attention_{index}.png")
        figures.append(str(save_figure(figure, path)))
    if figures:
        print("attention plots:", ", ".join(figures))
    shown = [i for i, (caption_words, _) in enumerate(captions[:EXPLORER_IMAGES]) if caption_words]
    if args.html and shown:
        explorer = os.path.join(args.output_dir, "attention_explorer.html")
        examples = [
            {
                "name": f"test image {i}: {hypotheses[i]}",
                "image": images[i],
                "words": captions[i][0],
                "attention": captions[i][1],  # (words, h, w)
            }
            for i in shown
        ]
        write_caption_explorer(explorer, examples, title="Caption attention")
        print(f"attention explorer written to {explorer}")

    metrics = {
        "model": args.model,
        "dataset": args.dataset,
        "bleu": bleu,
        "exact_captions": exact,
        "unigram_loss": monitor.baseline,
        "not_learning_warnings": monitor.warnings,
        "test_images": len(hypotheses),
        "max_length": max_length,
        "image_size": list(args.image_size),
        "batch_size": args.batch_size,
        "max_epochs": args.epochs,
        # What the run took: the schedule stops once the validation loss stalls.
        "train_steps": steps_trained,
        "epochs": steps_trained // plan["steps_per_epoch"],
        "seconds": round(time.time() - start, 1),
        "train_seconds": round(train_seconds, 1),
        "dtype_policy": policy,
        "replicas": strategy.num_replicas_in_sync,
    }
    if args.dataset == "builtin":
        # The same scenes as the test split, with their object masks.
        # Scenes are drawn at the image size (at least 32 pixels), as load_caption_dataset does.
        height, width = args.image_size
        side = height if height == width and height >= 32 else 64
        scenes = shape_scene_splits(*args.builtin_sizes, image_size=side, seed=args.seed)
        objects = scenes["test"]["object_masks"][: len(images)]
        summary = attention_on_objects_summary(outputs["words"], outputs["attention"], objects)
        print(
            f"attention on the named object: {summary['fraction']:.3f} of the mass "
            f"(chance {summary['chance']:.3f}) over {summary['measured']} of "
            f"{summary['objects']} objects"
        )
        measured = summary["measured"] > 0  # else the means are NaN, which JSON lacks
        metrics["attention_on_object"] = summary["fraction"] if measured else None
        metrics["attention_on_object_chance"] = summary["chance"] if measured else None
        metrics["objects_measured"] = summary["measured"]
    # Metrics first: a failing export must not lose them.
    run.write_metrics(args.output_dir, metrics)
    if args.export:
        run.export_folder(
            args.export,
            lambda folder: export_captioner(model, folder, encoder, max_length, args.beam_width),
        )
        print(f"SavedModel written to {args.export}")
    return metrics


if __name__ == "__main__":
    main()
