"""Train a Show, Attend and Tell or a Transformer image captioner, score it and show where it looks.

With no argument a Show, Attend and Tell captioner learns the built-in scenes
of coloured shapes ("a red circle left of a blue square") on the CPU in a few
minutes. The run learns a WordPiece vocabulary from the training captions,
trains with teacher forcing, then captions the held-out images with
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

    python examples/train_captioning.py
    python examples/train_captioning.py --model transformer
    python examples/train_captioning.py --dataset folder:~/Flickr8k --image-size 224 \\
        --backbone MobileNetV2 --backbone-weights imagenet --freeze-backbone \\
        --vocabulary-size 5000 --max-length 24 --epochs 20 --export runs/captioning/served
    python examples/train_captioning.py --dataset coco_captions --image-size 224 \\
        --backbone ResNet50 --backbone-weights imagenet --freeze-backbone --strategy mirrored
"""

import argparse
import os
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import example_utils  # noqa: E402

from keras_attention.data.caption_sources import load_caption_dataset  # noqa: E402
from keras_attention.data.shapes_scenes import shape_scene_splits  # noqa: E402
from keras_attention.models.caption_attention_metrics import (  # noqa: E402
    attention_on_objects_summary,
)
from keras_attention.models.show_attend_tell_captioner import (  # noqa: E402
    show_attend_tell_captioner,
)
from keras_attention.models.transformer_captioner import transformer_captioner  # noqa: E402
from keras_attention.models.translation_losses import (  # noqa: E402
    MaskedSparseCategoricalAccuracy,
    masked_sparse_categorical_crossentropy,
)
from keras_attention.serving.caption_export import export_captioner  # noqa: E402
from keras_attention.serving.caption_export import make_caption_function  # noqa: E402
from keras_attention.text.scores import corpus_bleu  # noqa: E402
from keras_attention.text.subword_encoder import SubwordEncoder  # noqa: E402
from keras_attention.text.wordpiece_vocabulary import train_wordpiece_vocabulary  # noqa: E402
from keras_attention.visualization.figures import save_figure  # noqa: E402
from keras_attention.visualization.image_attention import plot_caption_attention  # noqa: E402

# Defaults per model that reach BLEU > 80 on the built-in scenes in a few CPU minutes,
# with most of the attention at each object's shape word on that object.
# - Show, Attend and Tell without the doubly stochastic penalty: over a 12x12 grid and
#   ~9 words the penalty asks every cell to be looked at, which sends the attention
#   at a shape word away from the object that its colour word has just looked at.
# - A one-block, one-head Transformer decoder reading the CNN cells directly: its one
#   cross-attention map is the only way image information reaches each word (more
#   heads or blocks leave some maps free to wander).
MODEL_DEFAULTS = {
    "show_attend_tell": dict(
        epochs=14, hidden_dim=128, learning_rate=2e-3, attention_penalty=0.0
    ),
    "transformer": dict(
        epochs=20, hidden_dim=64, learning_rate=2e-3, num_layers=1, num_heads=1, encoder_layers=0
    ),
}
EVALUATION_BATCH_SIZE = 50
# The longest caption decoded when `--max-length` is not given, in tokens.
MAX_DEFAULT_LENGTH = 40


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    example_utils.add_common_arguments(
        parser, epochs=None, batch_size=64, output_dir="runs/captioning"
    )
    parser.add_argument("--model", choices=sorted(MODEL_DEFAULTS), default="show_attend_tell")
    parser.add_argument("--image-size", type=int, default=48, help="side the CNN sees")
    parser.add_argument(
        "--backbone", default="small_cnn", help="'small_cnn' or a keras.applications name"
    )
    parser.add_argument(
        "--backbone-weights", default=None, help="'imagenet' for pre-trained weights (a download)"
    )
    parser.add_argument("--freeze-backbone", action="store_true", help="do not train the CNN")
    parser.add_argument(
        "--vocabulary-size", type=int, default=1000, help="most WordPiece tokens"
    )
    parser.add_argument(
        "--max-length",
        type=int,
        help="tokens read and written per caption: its pieces plus the start (or end) token "
        "(default: fits the longest training caption)",
    )
    parser.add_argument(
        "--hidden-dim",
        type=int,
        help="LSTM units or Transformer width (default: "
        + ", ".join(f"{name} {d['hidden_dim']}" for name, d in MODEL_DEFAULTS.items())
        + ")",
    )
    parser.add_argument(
        "--num-layers", type=int, help="Transformer decoder blocks (default: 1)"
    )
    parser.add_argument(
        "--encoder-layers", type=int, help="Transformer blocks over the image cells (default: 0)"
    )
    parser.add_argument(
        "--num-heads", type=int, help="Transformer attention heads (default: 1)"
    )
    parser.add_argument(
        "--attention-penalty",
        type=float,
        help="lambda of Show, Attend and Tell's doubly stochastic attention penalty "
        "(default: 0; the paper uses 1)",
    )
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--learning-rate", type=float, help="peak learning rate")
    parser.add_argument(
        "--beam-width", type=int, default=1, help="1: greedy search; more: beam search"
    )
    parser.add_argument(
        "--builtin-sizes",
        type=int,
        nargs=3,
        default=(4000, 500, 500),
        metavar=("TRAIN", "VALIDATION", "TEST"),
        help="scenes per split of the built-in dataset",
    )
    parser.add_argument(
        "--eval-images", type=int, help="held-out captions to score (default: all)"
    )
    parser.add_argument("--samples", type=int, default=4, help="captions to print and draw")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for name, value in MODEL_DEFAULTS[args.model].items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    return args


def train_vocabulary(train_pairs, vocabulary_size, output_dir):
    """A WordPiece vocabulary of the training captions, saved under `output_dir/vocabulary`."""
    encoder = SubwordEncoder(
        train_wordpiece_vocabulary(train_pairs.map(lambda image, text: text), vocabulary_size)
    )
    encoder.save(os.path.join(output_dir, "vocabulary"))
    return encoder


def longest_caption(train_pairs, encoder):
    """Tokens of the longest training caption plus one: the start token it is read
    after, or the end token it is written with."""
    lengths = train_pairs.map(lambda image, text: text).batch(1024).map(
        lambda texts: tf.reduce_sum(tf.cast(encoder.encode(texts, 256) > 0, tf.int32), axis=1)
    )
    return int(max(np.max(batch) for batch in lengths.as_numpy_iterator())) + 1


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


def compile_model(model, args, steps_per_epoch):
    total_steps = max(1, args.epochs * steps_per_epoch)
    # Linear warm-up over the first tenth of training, then cosine decay to 0.
    schedule = keras.optimizers.schedules.CosineDecay(
        0.0,
        decay_steps=total_steps,
        warmup_target=args.learning_rate,
        warmup_steps=max(1, total_steps // 10),
    )
    model.compile(
        optimizer=keras.optimizers.Adam(schedule),
        loss=masked_sparse_categorical_crossentropy,
        metrics=[MaskedSparseCategoricalAccuracy()],
        # XLA where it pays: on accelerators ("auto" keeps the CPU's faster convolutions).
        jit_compile="auto",
    )


def caption_split(caption, pairs, limit):
    """Captions of the images of `pairs` with their references, one entry per image.

    Sources with several captions per image repeat the image once per
    caption, one after the other; such a run becomes one image with a list
    of references.
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
    outputs = []
    for start in range(0, len(images), EVALUATION_BATCH_SIZE):
        batch = np.stack(images[start : start + EVALUATION_BATCH_SIZE])
        outputs.append({name: value.numpy() for name, value in caption(batch).items()})
    outputs = {name: np.concatenate([batch[name] for batch in outputs]) for name in outputs[0]}
    hypotheses = [text.decode("utf-8") for text in outputs["caption"]]
    return images, references, hypotheses, outputs


def generated_words(tokens, end_token):
    """The produced tokens up to (not including) the end token."""
    words = [token.decode("utf-8") for token in tokens if token]
    return words[: words.index(end_token)] if end_token in words else words


def bleu_references(references):
    """sacrebleu wants the same number of references for every image."""
    most = max(len(texts) for texts in references)
    return [texts + texts[:1] * (most - len(texts)) for texts in references]


def main(argv=None):
    args = parse_args(argv)
    keras.utils.set_random_seed(args.seed)
    policy = example_utils.configure_precision(args.mixed_precision)
    strategy = example_utils.make_strategy(args.strategy)
    start = time.time()

    splits = load_caption_dataset(
        args.dataset, args.image_size, builtin_sizes=args.builtin_sizes, seed=args.seed
    )
    encoder = train_vocabulary(splits["train"], args.vocabulary_size, args.output_dir)
    max_length = args.max_length or min(
        longest_caption(splits["train"], encoder), MAX_DEFAULT_LENGTH
    )
    print(f"vocabulary: {encoder.vocabulary_size} tokens; captions of up to {max_length} tokens")

    def batches(split, shuffle):
        return caption_batches(
            splits[split],
            encoder,
            args.batch_size,
            max_length,
            shuffle=shuffle,
            seed=args.seed,
            cache=args.dataset == "builtin",
        )

    train = batches("train", shuffle=True)
    has_validation = int(splits["validation"].cardinality()) != 0
    validation = batches("validation", shuffle=False) if has_validation else None
    steps_per_epoch = int(train.cardinality())
    with strategy.scope():
        model = build_model(args, encoder.vocabulary_size, max_length)
        compile_model(model, args, steps_per_epoch)
    model.summary()
    fit_start = time.time()
    model.fit(
        train,
        validation_data=validation,
        epochs=args.epochs,
        callbacks=example_utils.training_callbacks(args.output_dir),
        verbose=1,
    )
    train_seconds = time.time() - fit_start

    caption = make_caption_function(
        model, encoder, max_length, args.beam_width, decode_batch_size=EVALUATION_BATCH_SIZE
    )
    images, references, hypotheses, outputs = caption_split(
        caption, splits["test"], args.eval_images
    )
    bleu = corpus_bleu(hypotheses, bleu_references(references))
    print(
        f"test BLEU {bleu:.2f} on {len(hypotheses)} images after {train_seconds:.0f} s of training"
    )
    end_token = encoder.vocabulary[encoder.end_id]
    words = [generated_words(tokens, end_token) for tokens in outputs["caption_tokens"]]
    figures = []
    for index in range(min(args.samples, len(images))):
        print(f"  reference: {references[index][0]}\n  caption  : {hypotheses[index]}")
        figure = plot_caption_attention(
            images[index],
            outputs["attention"][index, : len(words[index])],
            words[index],
            title=hypotheses[index],
        )
        path = os.path.join(args.output_dir, f"attention_{index}.png")
        figures.append(str(save_figure(figure, path)))
    if figures:
        print("attention plots:", ", ".join(figures))

    metrics = {
        "model": args.model,
        "dataset": args.dataset,
        "bleu": bleu,
        "test_images": len(hypotheses),
        "max_length": max_length,
        "seconds": round(time.time() - start, 1),
        "train_seconds": round(train_seconds, 1),
        "dtype_policy": policy,
        "replicas": strategy.num_replicas_in_sync,
    }
    if args.dataset == "builtin":
        # The same scenes as the test split, with their object masks.
        # Scenes are drawn at the image size (at least 32 pixels), as load_caption_dataset does.
        side = args.image_size if args.image_size >= 32 else 64
        scenes = shape_scene_splits(*args.builtin_sizes, image_size=side, seed=args.seed)
        objects = scenes["test"]["object_masks"][: len(images)]
        summary = attention_on_objects_summary(words, outputs["attention"], objects)
        print(
            f"attention on the named object: {summary['fraction']:.3f} of the mass "
            f"(chance {summary['chance']:.3f}) over {summary['measured']} of "
            f"{summary['objects']} objects"
        )
        measured = summary["measured"] > 0  # else the means are NaN, which JSON lacks
        metrics["attention_on_object"] = summary["fraction"] if measured else None
        metrics["attention_on_object_chance"] = summary["chance"] if measured else None
        metrics["objects_measured"] = summary["measured"]
    if args.export:
        export_captioner(model, args.export, encoder, max_length, args.beam_width)
        print(f"SavedModel written to {args.export}")
    example_utils.write_metrics(args.output_dir, metrics)
    return metrics


if __name__ == "__main__":
    main()
