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
    python examples/train_vit.py --dataset folder:~/glyphs --image-size 32 \
        --export runs/vit/served

What the user leaves out is derived from the training set and printed with
its reason, one line each: the patch size (about 8 patches a side), the
model's image shape (the longer side is `--image-size`; a folder's images
keep their aspect ratio), the batch size, the epochs and the warm-up steps
(`vit_training_recipe`). The small-data options follow Lee et al. 2021
(https://arxiv.org/abs/2112.13492) and Hassani et al. 2021
(https://arxiv.org/abs/2104.05704): small patches, label smoothing,
stochastic depth, AdamW and augmentation of the training batches
(`--augmentation geometric`: small shifts, rotations and zoom, never flips,
which would turn a "2" into something else; `flip` adds left-right flips
for natural images).
"""

import argparse
import os
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from keras_attention.training import command_line as cli  # noqa: E402  (no TensorFlow)
from keras_attention.training import run_setup as run  # noqa: E402  (TensorFlow when called)

DATASET_FORMATS = (
    "'builtin' (generated shapes, offline); 'folder:PATH', one sub-folder of images per class "
    "(.bmp .gif .jpeg .jpg .png; a file that cannot be decoded is skipped with a warning "
    "naming it, or stops the run with --strict; ~ and $VARIABLES are expanded); or "
    "'cifar10', 'cifar100', 'imagenette[/CONFIG]' from tensorflow-datasets"
)
# A ViT small enough to train on a laptop CPU. Its patch size is derived from
# the image size unless set (4 at 32 x 32: an 8 x 8 grid); this one is the
# fallback for code that builds the model without a recipe.
SMALL_PRESET = "small"
SMALL_ARCHITECTURE = dict(patch_size=4, hidden_dim=64, num_layers=4, num_heads=4, mlp_dim=128)
SMALL_IMAGE_SIZE = 32
PAPER_IMAGE_SIZE = 224
NUM_ROLLOUT_IMAGES = 4
# `sorted(VIT_PRESETS)` and `IMAGE_AUGMENTATIONS`, spelled out so that the
# parser needs no TensorFlow import (a test keeps them equal).
PAPER_PRESET_NAMES = (
    "B/16",
    "B/32",
    "B/8",
    "H/14",
    "L/16",
    "L/32",
    "L/8",
    "S/16",
    "S/32",
    "S/8",
    "Ti/16",
    "Ti/32",
    "Ti/8",
)
AUGMENTATION_NAMES = ("none", "geometric", "flip")


def build_parser():
    """The command line; building it imports no TensorFlow, so `--help` is instant."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    # None: derived from the number of training images (see `vit_training_recipe`).
    cli.add_common_arguments(
        parser,
        epochs=None,
        batch_size=None,
        output_dir="runs/vit",
        dataset_formats=DATASET_FORMATS,
    )
    parser.add_argument(
        "--preset",
        choices=[SMALL_PRESET] + list(PAPER_PRESET_NAMES),
        default=SMALL_PRESET,
        help=f"model size: {SMALL_PRESET!r} ({SMALL_ARCHITECTURE}) or a paper size",
    )
    parser.add_argument(
        "--image-size",
        type=cli.positive_int,
        help=f"longer side the model works at (default {SMALL_IMAGE_SIZE} for 'small', "
        f"{PAPER_IMAGE_SIZE} for paper sizes); a folder's images keep their aspect ratio",
    )
    parser.add_argument(
        "--patch-size",
        type=cli.positive_int,
        help="patch side (default: about 8 patches a side for 'small', the preset's otherwise)",
    )
    parser.add_argument("--pooling", choices=("token", "gap"), default="token")
    parser.add_argument(
        "--learning-rate",
        type=cli.positive_float,
        default=2e-3,
        help="peak learning rate",
    )
    parser.add_argument("--weight-decay", type=cli.non_negative_float, default=0.05)
    parser.add_argument("--label-smoothing", type=cli.rate, default=0.1)
    parser.add_argument("--dropout", type=cli.rate, default=0.0)
    parser.add_argument(
        "--stochastic-depth", type=cli.rate, default=0.1, help="stochastic depth rate"
    )
    parser.add_argument(
        "--augmentation",
        choices=("auto",) + AUGMENTATION_NAMES,
        default="auto",
        help="training batches only: 'geometric' small shifts, rotations and zoom (no flips: "
        "glyphs and digits change meaning); 'flip' adds left-right flips; 'auto': 'geometric', "
        "except 'none' on the built-in data, whose labels say where the shape is",
    )
    parser.add_argument(
        "--builtin-sizes",
        type=cli.non_negative_int,
        nargs=3,
        metavar=("TRAIN", "VALIDATION", "TEST"),
        default=(6144, 512, 1024),
        help="number of built-in images per split",
    )
    parser.add_argument("--seed", type=int, default=0)
    return parser


def parse_args(argv=None):
    args = build_parser().parse_args(argv)
    args.recipe = None
    if args.dataset == "builtin":
        # The built-in set's size is known from the flags: choose now, so that
        # `args` holds every number.
        resolve_recipe(args, num_train_images=args.builtin_sizes[0], native_size=None)
    return args


if __name__ == "__main__":
    # Answer --help and bad flags before the seconds TensorFlow takes to import.
    build_parser().parse_args()

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from keras_attention.callbacks.learning_monitor import LearningMonitor  # noqa: E402
from keras_attention.callbacks.prior_cross_entropy import prior_cross_entropy  # noqa: E402
from keras_attention.data.image_augmentation import augment_batches  # noqa: E402
from keras_attention.data.image_classification_sources import load_image_classification_dataset  # noqa: E402
from keras_attention.data.image_classification_sources import native_image_size  # noqa: E402
from keras_attention.data.known_length import with_known_length  # noqa: E402
from keras_attention.models.vision_transformer import vision_transformer  # noqa: E402
from keras_attention.models.vit_presets import vision_transformer_preset  # noqa: E402
from keras_attention.models.vit_training_recipe import vit_input_shape  # noqa: E402
from keras_attention.models.vit_training_recipe import vit_training_recipe  # noqa: E402
from keras_attention.models.vit_training_recipe import warmup_steps_for  # noqa: E402
from keras_attention.serving.image_classifier_export import export_image_classifier  # noqa: E402
from keras_attention.visualization.confusion import plot_confusion_matrix  # noqa: E402
from keras_attention.visualization.explorer.vit import write_vit_explorer  # noqa: E402
from keras_attention.visualization.figures import save_figure  # noqa: E402
from keras_attention.visualization.rollout import attention_rollout  # noqa: E402
from keras_attention.visualization.rollout import plot_rollout  # noqa: E402
from keras_attention.visualization.rollout import rollout_to_image_map  # noqa: E402


def image_size_of(args):
    """The `--image-size` flag or the preset's default (the longer side)."""
    if args.image_size:
        return args.image_size
    return SMALL_IMAGE_SIZE if args.preset == SMALL_PRESET else PAPER_IMAGE_SIZE


def _patch_size_flag(args):
    """The user's patch size; a paper preset's own when unset; None: derive it."""
    if args.patch_size or args.preset == SMALL_PRESET:
        return args.patch_size
    return vision_transformer_preset(args.preset)["patch_size"]


def model_input_shape(args, native_size):
    """`(height, width)` of the model for images whose own size is `native_size`."""
    shape, _, _ = vit_input_shape(image_size_of(args), native_size, _patch_size_flag(args))
    return shape


def resolve_recipe(args, num_train_images, native_size):
    """Fills `args` with the derived choices; returns the `ViTTrainingRecipe`."""
    recipe = vit_training_recipe(
        num_train_images=num_train_images,
        image_size=image_size_of(args),
        native_size=native_size,
        patch_size=_patch_size_flag(args),
        batch_size=args.batch_size,
        epochs=args.epochs,
    )
    args.recipe = recipe
    args.patch_size = recipe.patch_size
    args.batch_size = recipe.batch_size
    args.epochs = recipe.epochs
    return recipe


def augmentation_of(args):
    """The augmentation kind: 'auto' leaves the built-in data alone, since its
    labels say in which quadrant the shape lies."""
    if args.augmentation != "auto":
        return args.augmentation
    return "none" if args.dataset == "builtin" else "geometric"


def build_model(args, num_classes, class_names, image_shape=None):
    if args.preset == SMALL_PRESET:
        architecture = dict(SMALL_ARCHITECTURE)
    else:
        architecture = vision_transformer_preset(args.preset)
    if args.patch_size:
        architecture["patch_size"] = args.patch_size
    return vision_transformer(
        image_size=image_shape or image_size_of(args),
        num_classes=num_classes,
        dropout=args.dropout,
        pooling=args.pooling,
        stochastic_depth_rate=args.stochastic_depth,
        class_names=class_names,
        name=f"vit_{args.preset.replace('/', '_')}",
        **architecture,
    )


def batches(dataset, batch_size, num_classes, shuffle_seed=None, augmentation="none"):
    """Batched `(images, one-hot labels)`: one-hot for label smoothing.

    Only the shuffled (training) batches are augmented.
    """
    if shuffle_seed is not None:
        dataset = dataset.shuffle(4096, seed=shuffle_seed, reshuffle_each_iteration=True)
    dataset = dataset.batch(batch_size, drop_remainder=shuffle_seed is not None)
    if shuffle_seed is not None:
        dataset = augment_batches(dataset, augmentation, seed=shuffle_seed)
    dataset = dataset.map(lambda images, labels: (images, tf.one_hot(labels, num_classes)))
    return dataset.prefetch(tf.data.AUTOTUNE)


def count_images(dataset):
    """Number of elements of an unbatched dataset, counting once if unknown."""
    count = int(dataset.cardinality())
    return count if count >= 0 else sum(1 for _ in dataset)


def class_prior_loss(train_split):
    """The loss of a model that ignores the image and predicts the class frequencies."""
    labels = train_split.map(lambda image, label: label).batch(1024)
    return prior_cross_entropy(list(labels.as_numpy_iterator()))


def steps_per_epoch(batched):
    steps = int(batched.cardinality())
    if steps < 0:  # unknown (e.g. filtered files): count once
        steps = sum(1 for _ in batched)
    return steps


def compile_model(model, args, steps_per_epoch, jit_compile=True):
    total_steps = max(1, args.epochs * steps_per_epoch)
    # Linear warm-up over the first tenth of training (at most 10 epochs),
    # then cosine decay to 0, counted in optimizer steps.
    warmup_steps = warmup_steps_for(total_steps, max(1, steps_per_epoch))
    schedule = keras.optimizers.schedules.CosineDecay(
        0.0,
        decay_steps=max(1, total_steps - warmup_steps),
        warmup_target=args.learning_rate,
        warmup_steps=warmup_steps,
    )
    optimizer = keras.optimizers.AdamW(schedule, weight_decay=args.weight_decay)
    optimizer.exclude_from_weight_decay(var_list=model.no_decay_variables())
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
    grid_size, has_class_token = model.token_layout
    rollouts = attention_rollout(model.attention_maps(images))  # (B, T, T)
    maps = rollout_to_image_map(rollouts, grid_size, has_class_token)  # (B, rows, cols)
    for index, (image, patch_map) in enumerate(zip(images, maps)):
        title = f"true {class_names[labels[index]]}, predicted {class_names[predictions[index]]}"
        save_figure(
            plot_rollout(image, patch_map, title=title),
            os.path.join(output_dir, f"rollout_{index}.png"),
        )


def write_explorer(model, path, images, labels, class_names):
    """The test images' attention, by layer and head, as one HTML page."""
    predicted, probabilities, maps = model.classify(images, return_attention=True)
    grid_size, has_class_token = model.token_layout
    examples = [
        {
            "image": image,
            "label": f"true {class_names[labels[index]]}, predicted {predicted[index]}",
            "probability": float(probabilities[index].max()),
            "attention": np.stack([layer[index] for layer in maps]),  # (layers, heads, T, T)
            "grid_size": grid_size,
            "has_class_token": has_class_token,
        }
        for index, image in enumerate(images)
    ]
    write_vit_explorer(path, examples, title="Vision Transformer attention")


def main(argv=None):
    args = parse_args(argv)
    run.prepare_output(args)  # before any training: refuse unusable paths now
    keras.utils.set_random_seed(args.seed)
    policy = run.configure_precision(args.mixed_precision)
    strategy = run.make_strategy(args.strategy)
    start = time.time()

    native_size = native_image_size(args.dataset)
    image_shape = model_input_shape(args, native_size)
    data = load_image_classification_dataset(
        args.dataset,
        image_shape,
        seed=args.seed,
        builtin_sizes=args.builtin_sizes,
        strict=args.strict,
    )
    if args.recipe is None:
        resolve_recipe(args, count_images(data.splits["train"]), native_size)
    for line in args.recipe.summary_lines():
        print(line)
    augmentation = augmentation_of(args)
    print(f"augmentation {augmentation}: training batches only, never at evaluation or export")
    train = batches(
        data.splits["train"], args.batch_size, data.num_classes, args.seed, augmentation
    )
    validation = batches(data.splits["validation"], args.batch_size, data.num_classes)
    test = with_known_length(batches(data.splits["test"], args.batch_size, data.num_classes))

    with strategy.scope():
        model = build_model(args, data.num_classes, data.class_names, image_shape)
        compile_model(
            model,
            args,
            steps_per_epoch=steps_per_epoch(train),
            jit_compile=run.jit_compile_for(strategy),
        )
    model.summary()
    monitor = LearningMonitor(
        class_prior_loss(data.splits["train"]),
        patience=min(5, args.epochs),
        hints="Try more epochs, another --learning-rate or a smaller --patch-size, and check "
        "that each class folder holds that class's images.",
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
    fit_seconds = time.time() - fit_start

    labels, predictions, images = evaluate(model, test)
    accuracy = float(np.mean(labels == predictions))
    print(
        f"test accuracy {accuracy:.4f} on {len(labels)} images; "
        f"{time.time() - start:.0f} s since loading the data, {fit_seconds:.0f} s in fit"
    )
    draw_figures(model, args.output_dir, labels, predictions, images, data.class_names)
    if args.html:
        explorer = os.path.join(args.output_dir, "attention_explorer.html")
        write_explorer(model, explorer, images, labels, data.class_names)
        print(f"attention explorer written to {explorer}")
    metrics = {
        "test_accuracy": accuracy,
        "test_images": int(len(labels)),
        "class_prior_loss": monitor.baseline,
        "not_learning_warnings": monitor.warnings,
        "seconds": round(time.time() - start, 1),
        "fit_seconds": round(fit_seconds, 1),
        "image_size": list(image_shape),
        "patch_size": args.patch_size,
        "batch_size": args.batch_size,
        "epochs": args.epochs,
        "augmentation": augmentation,
        "dtype_policy": policy,
        "replicas": strategy.num_replicas_in_sync,
    }
    # Metrics first: a failing export must not lose them.
    run.write_metrics(args.output_dir, metrics)
    if args.export:
        run.export_folder(
            args.export, lambda folder: export_image_classifier(model, folder, data.class_names)
        )
        print(f"SavedModel written to {args.export}")
    return metrics


if __name__ == "__main__":
    main()
