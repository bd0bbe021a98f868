"""Train a Vision Transformer classifier, then draw where it looks and export it.

With no argument a small ViT learns the built-in shapes data set (which
shape, in which quadrant) on the CPU in a few minutes. Under `--output-dir`
the run leaves per-epoch checkpoints, TensorBoard logs (with `tensorboard`
installed), `metrics.json`, a confusion matrix (`confusion_matrix.png`) and
attention-rollout maps of a few test images (`rollout_N.png`); `--export DIR`
writes a SavedModel that takes raw pixels of any size and returns
probabilities and labels.

    python examples/train_vit.py
    python examples/train_vit.py --dataset cifar10 --patch-size 4 --epochs 100 \\
        --stochastic-depth 0.1
    python examples/train_vit.py --dataset imagenette --preset S/16 --epochs 100 \\
        --batch-size 256 --strategy mirrored --mixed-precision
    python examples/train_vit.py --dataset folder:~/flowers --export runs/vit/served

The small-data options follow Lee et al. 2021 (https://arxiv.org/abs/2112.13492)
and Hassani et al. 2021 (https://arxiv.org/abs/2104.05704): small patches,
label smoothing, stochastic depth and augmentation (`--augmentation flip`).
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

from keras_attention.data.image_classification_sources import (  # noqa: E402
    load_image_classification_dataset,
)
from keras_attention.models.vision_transformer import get_attention_scores  # noqa: E402
from keras_attention.models.vision_transformer import vision_transformer  # noqa: E402
from keras_attention.models.vision_transformer import (  # noqa: E402
    vision_transformer_no_decay_variables,
)
from keras_attention.models.vision_transformer import (  # noqa: E402
    vision_transformer_token_layout,
)
from keras_attention.models.vit_presets import VIT_PRESETS  # noqa: E402
from keras_attention.models.vit_presets import vision_transformer_preset  # noqa: E402
from keras_attention.serving.image_classifier_export import export_image_classifier  # noqa: E402
from keras_attention.visualization.confusion import plot_confusion_matrix  # noqa: E402
from keras_attention.visualization.figures import save_figure  # noqa: E402
from keras_attention.visualization.rollout import attention_rollout  # noqa: E402
from keras_attention.visualization.rollout import plot_rollout  # noqa: E402
from keras_attention.visualization.rollout import rollout_to_image_map  # noqa: E402

# A ViT small enough to train on a laptop CPU: 32 x 32 images in 8 x 8 patches.
SMALL_PRESET = "small"
SMALL_ARCHITECTURE = dict(patch_size=8, hidden_dim=64, num_layers=4, num_heads=4, mlp_dim=128)
SMALL_IMAGE_SIZE = 32
PAPER_IMAGE_SIZE = 224
NUM_ROLLOUT_IMAGES = 4


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    example_utils.add_common_arguments(parser, epochs=12, batch_size=32, output_dir="runs/vit")
    parser.add_argument(
        "--preset",
        choices=[SMALL_PRESET] + sorted(VIT_PRESETS),
        default=SMALL_PRESET,
        help=f"model size: {SMALL_PRESET!r} ({SMALL_ARCHITECTURE}) or a paper size",
    )
    parser.add_argument(
        "--image-size",
        type=int,
        help=f"side the model works at (default {SMALL_IMAGE_SIZE} for 'small', "
        f"{PAPER_IMAGE_SIZE} for paper sizes)",
    )
    parser.add_argument("--patch-size", type=int, help="patch side (default: the preset's)")
    parser.add_argument("--pooling", choices=("token", "gap"), default="token")
    parser.add_argument("--learning-rate", type=float, default=2e-3, help="peak learning rate")
    parser.add_argument("--weight-decay", type=float, default=0.05)
    parser.add_argument("--label-smoothing", type=float, default=0.1)
    parser.add_argument("--dropout", type=float, default=0.0)
    parser.add_argument("--stochastic-depth", type=float, default=0.0, help="stochastic depth rate")
    parser.add_argument(
        "--augmentation",
        choices=("auto", "none", "flip"),
        default="auto",
        help="'flip': random horizontal flips while training; 'auto': flips except on "
        "the built-in data, whose labels say where the shape is",
    )
    parser.add_argument(
        "--builtin-sizes",
        type=int,
        nargs=3,
        metavar=("TRAIN", "VALIDATION", "TEST"),
        default=(6144, 512, 1024),
        help="number of built-in images per split",
    )
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def image_size_of(args):
    if args.image_size:
        return args.image_size
    return SMALL_IMAGE_SIZE if args.preset == SMALL_PRESET else PAPER_IMAGE_SIZE


def build_model(args, num_classes, class_names):
    if args.preset == SMALL_PRESET:
        architecture = dict(SMALL_ARCHITECTURE)
    else:
        architecture = vision_transformer_preset(args.preset)
    if args.patch_size:
        architecture["patch_size"] = args.patch_size
    # Flips would change the built-in labels, which say where the shape is.
    flip = args.augmentation == "flip" or (
        args.augmentation == "auto" and args.dataset != "builtin"
    )
    return vision_transformer(
        image_size=image_size_of(args),
        num_classes=num_classes,
        dropout=args.dropout,
        pooling=args.pooling,
        stochastic_depth_rate=args.stochastic_depth,
        augmentation=[keras.layers.RandomFlip("horizontal", seed=args.seed)] if flip else None,
        class_names=class_names,
        name=f"vit_{args.preset.replace('/', '_')}",
        **architecture,
    )


def batches(dataset, batch_size, num_classes, shuffle_seed=None):
    """Batched `(images, one-hot labels)`: one-hot for label smoothing."""
    if shuffle_seed is not None:
        dataset = dataset.shuffle(4096, seed=shuffle_seed, reshuffle_each_iteration=True)
    dataset = dataset.batch(batch_size, drop_remainder=shuffle_seed is not None)
    dataset = dataset.map(lambda images, labels: (images, tf.one_hot(labels, num_classes)))
    return dataset.prefetch(tf.data.AUTOTUNE)


def steps_per_epoch(batched):
    steps = int(batched.cardinality())
    if steps < 0:  # unknown (e.g. filtered files): count once
        steps = sum(1 for _ in batched)
    return steps


def compile_model(model, args, steps_per_epoch, jit_compile=True):
    total_steps = max(1, args.epochs * steps_per_epoch)
    # Linear warm-up over the first tenth of training, then cosine decay to 0.
    schedule = keras.optimizers.schedules.CosineDecay(
        0.0,
        decay_steps=total_steps,
        warmup_target=args.learning_rate,
        warmup_steps=max(1, total_steps // 10),
    )
    optimizer = keras.optimizers.AdamW(schedule, weight_decay=args.weight_decay)
    optimizer.exclude_from_weight_decay(var_list=vision_transformer_no_decay_variables(model))
    model.compile(
        optimizer=optimizer,
        loss=keras.losses.CategoricalCrossentropy(
            from_logits=True, label_smoothing=args.label_smoothing
        ),
        metrics=["accuracy"],
        jit_compile=jit_compile,
    )


def evaluate(model, test_batches):
    """Test labels, predicted labels, and the first few test images."""
    predictions = np.argmax(model.predict(test_batches, verbose=0), axis=-1)
    labels = np.concatenate([np.argmax(one_hot, axis=-1) for _, one_hot in test_batches])
    images = np.concatenate(
        [images.numpy() for images, _ in test_batches.unbatch().batch(NUM_ROLLOUT_IMAGES).take(1)]
    )
    return labels, predictions, images


def draw_figures(model, output_dir, labels, predictions, images, class_names):
    save_figure(
        plot_confusion_matrix(labels, predictions, class_names, title="test set"),
        os.path.join(output_dir, "confusion_matrix.png"),
    )
    grid_size, has_class_token = vision_transformer_token_layout(model)
    rollouts = attention_rollout(get_attention_scores(model, images))  # (B, T, T)
    maps = rollout_to_image_map(rollouts, grid_size, has_class_token)  # (B, rows, cols)
    for index, (image, patch_map) in enumerate(zip(images, maps)):
        title = f"true {class_names[labels[index]]}, predicted {class_names[predictions[index]]}"
        save_figure(
            plot_rollout(image, patch_map, title=title),
            os.path.join(output_dir, f"rollout_{index}.png"),
        )


def main(argv=None):
    args = parse_args(argv)
    keras.utils.set_random_seed(args.seed)
    policy = example_utils.configure_precision(args.mixed_precision)
    strategy = example_utils.make_strategy(args.strategy)
    start = time.time()

    data = load_image_classification_dataset(
        args.dataset, image_size_of(args), seed=args.seed, builtin_sizes=args.builtin_sizes
    )
    train = batches(data.splits["train"], args.batch_size, data.num_classes, args.seed)
    validation = batches(data.splits["validation"], args.batch_size, data.num_classes)
    test = batches(data.splits["test"], args.batch_size, data.num_classes)

    with strategy.scope():
        model = build_model(args, data.num_classes, data.class_names)
        compile_model(
            model,
            args,
            steps_per_epoch=steps_per_epoch(train),
            jit_compile=example_utils.jit_compile_for(strategy),
        )
    model.summary()
    fit_start = time.time()
    model.fit(
        train,
        validation_data=validation,
        epochs=args.epochs,
        callbacks=example_utils.training_callbacks(args.output_dir),
        verbose=1,
    )
    fit_seconds = time.time() - fit_start

    labels, predictions, images = evaluate(model, test)
    accuracy = float(np.mean(labels == predictions))
    print(
        f"test accuracy {accuracy:.4f} on {len(labels)} images; "
        f"{time.time() - start:.0f} s since loading the data, {fit_seconds:.0f} s in fit"
    )
    draw_figures(model, args.output_dir, labels, predictions, images, data.class_names)
    if args.export:
        export_image_classifier(model, args.export, data.class_names)
        print(f"SavedModel written to {args.export}")
    metrics = {
        "test_accuracy": accuracy,
        "test_images": int(len(labels)),
        "seconds": round(time.time() - start, 1),
        "fit_seconds": round(fit_seconds, 1),
        "dtype_policy": policy,
        "replicas": strategy.num_replicas_in_sync,
    }
    example_utils.write_metrics(args.output_dir, metrics)
    return metrics


if __name__ == "__main__":
    main()
