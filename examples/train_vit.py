"""Train a Vision Transformer classifier, then draw where it looks and export it.

With no argument a small ViT learns the built-in shapes data set (which
shape, in which quadrant) on the CPU in a few minutes; `--model swin` trains
a small Swin Transformer instead. Under `--output-dir` the run leaves
per-epoch checkpoints, TensorBoard logs (with `tensorboard` installed),
`metrics.json`, a confusion matrix (`confusion_matrix.png`) and where the
model looks on a few test images (ViT: attention rollout, `rollout_N.png`;
Swin: first-stage window attention, `window_attention_N.png`); `--export DIR`
writes a SavedModel that takes raw pixels of any size and returns
probabilities and labels.

    python examples/train_vit.py
    python examples/train_vit.py --model swin --dataset folder:~/glyphs
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
(`--augmentation geometric`: small shifts, rotations and zoom of each image,
by the nearest pixel, never flips, which would turn a "2" into something
else; `flip` adds left-right flips for natural images).
"""

import os
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from keras_attention.training import run_setup as run  # noqa: E402  (TensorFlow when called)
from keras_attention.training.vit_arguments import build_vit_parser  # noqa: E402

NUM_ROLLOUT_IMAGES = 4  # test images whose attention is drawn


def build_parser():
    """The command line; building it imports no TensorFlow, so `--help` is instant."""
    return build_vit_parser(description=__doc__.split("\n")[0])


if __name__ == "__main__":
    build_parser().parse_args()  # answer --help and bad flags before TensorFlow loads

import keras  # noqa: E402
import numpy as np  # noqa: E402

from keras_attention.callbacks.learning_monitor import LearningMonitor  # noqa: E402
from keras_attention.data.dataset_length import dataset_length  # noqa: E402
from keras_attention.data.known_length import with_known_length  # noqa: E402
from keras_attention.serving.image_classifier_export import export_image_classifier  # noqa: E402
from keras_attention.training import vit_model_arguments as models  # noqa: E402
from keras_attention.training import vit_recipe_arguments as recipes  # noqa: E402
from keras_attention.training.classifier_evaluation import class_prior_loss  # noqa: E402
from keras_attention.training.classifier_evaluation import evaluate_classifier  # noqa: E402
from keras_attention.training.vit_data import prepare_vit_data  # noqa: E402
from keras_attention.visualization import vit_figures as figures  # noqa: E402


def main(argv=None):
    args = recipes.parse_vit_arguments(argv, build_parser())
    run.prepare_output(args)  # before any training: refuse unusable paths now
    keras.utils.set_random_seed(args.seed)
    policy = run.configure_precision(args.mixed_precision)
    strategy = run.make_strategy(args.strategy)
    start = time.time()

    # Data: images at the model's shape, the recipe fitted to them, and the batches.
    data = prepare_vit_data(args)  # fills patch_size, batch_size and epochs where left out
    print("\n".join(data.summary_lines()))

    # Model: built and compiled under the distribution strategy.
    with strategy.scope():
        model = models.image_classifier_from_arguments(
            args, data.num_classes, data.class_names, data.image_shape
        )
        steps, jit_compile = dataset_length(data.train), run.jit_compile_for(strategy)
        models.compile_vision_transformer(model, args, steps, jit_compile)
    model.summary()
    monitor = LearningMonitor(
        class_prior_loss(data.splits["train"]),
        patience=min(5, args.epochs),
        hints="Try more epochs, another --learning-rate or a smaller --patch-size, and check "
        "that each class folder holds that class's images.",
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
    fit_seconds = time.time() - fit_start

    # Evaluation, then drawings: confusion matrix, attention rollouts, one HTML page.
    labels, predictions, images = evaluate_classifier(model, data.test, NUM_ROLLOUT_IMAGES)
    accuracy = float(np.mean(labels == predictions))
    print(
        f"test accuracy {accuracy:.4f} on {len(labels)} images; "
        f"{time.time() - start:.0f} s since loading the data, {fit_seconds:.0f} s in fit"
    )
    figures.draw_vit_figures(model, args.output_dir, labels, predictions, images, data.class_names)
    if args.html:
        page = os.path.join(args.output_dir, "attention_explorer.html")
        figures.write_vit_attention_explorer(model, page, images, labels, data.class_names)
        print(f"attention explorer written to {page}")

    metrics = dict(model=args.model, test_accuracy=accuracy, test_images=int(len(labels)))
    metrics.update(class_prior_loss=monitor.baseline, not_learning_warnings=monitor.warnings)
    metrics.update(seconds=round(time.time() - start, 1), fit_seconds=round(fit_seconds, 1))
    metrics.update(image_size=list(data.image_shape), patch_size=args.patch_size)
    metrics.update(batch_size=args.batch_size, epochs=args.epochs, augmentation=data.augmentation)
    metrics.update(dtype_policy=policy, replicas=strategy.num_replicas_in_sync)
    run.write_metrics(args.output_dir, metrics)  # metrics first: a failing export keeps them
    if args.export:
        run.export_folder(
            args.export, lambda folder: export_image_classifier(model, folder, data.class_names)
        )
        print(f"SavedModel written to {args.export}")
    return metrics


if __name__ == "__main__":
    main()
