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

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

from keras_attention.native_start_up_lines import import_tensorflow_quietly  # noqa: E402
from keras_attention.tasks.image_classification import flags  # noqa: E402  (no TensorFlow)
from keras_attention.training.command_line import show_warnings_as_lines  # noqa: E402

NUM_ROLLOUT_IMAGES = 4  # test images whose attention is drawn
HINTS = (
    "Try more epochs, another --learning-rate or a smaller --patch-size, and check that each "
    "class folder holds that class's images."
)


def build_parser():
    """The command line; building it imports no TensorFlow, so `--help` is instant."""
    return flags.build_vit_parser(description=__doc__.split("\n")[0])


def check_arguments(argv=None):
    """The flags, and the data they name, checked with no TensorFlow; returns the parser."""
    parser = build_parser()
    args = parser.parse_args(argv)
    flags.check_model_preset(parser, args)
    flags.check_vit_data(parser, args)  # before the run claims its folder
    return parser


if __name__ == "__main__":
    show_warnings_as_lines()  # "warning: ..." lines, as errors are "error: ..."
    check_arguments()  # answer --help, bad flags and missing data before TensorFlow loads

import_tensorflow_quietly()  # without its start-up lines about a missing GPU
import numpy as np  # noqa: E402

from keras_attention.tasks.image_classification import evaluation  # noqa: E402
from keras_attention.tasks.image_classification import figures  # noqa: E402
from keras_attention.tasks.image_classification import model_from_flags as models  # noqa: E402
from keras_attention.tasks.image_classification import recipe_from_flags as recipes  # noqa: E402
from keras_attention.tasks.image_classification import training_data  # noqa: E402
from keras_attention.tasks.training_run import TrainingRun  # noqa: E402
from keras_attention.tasks.training_run import script_stops_as_lines  # noqa: E402
from keras_attention.training.input_errors import input_errors_as_exit  # noqa: E402


def main(argv=None):
    """Trains an image classifier from the command line `argv`, evaluates it and exports it."""
    args = recipes.parse_vit_arguments(argv, check_arguments(argv))
    run = TrainingRun(args)  # the run's folder claimed, precision and strategy set

    # Data: images at the model's shape, the recipe fitted to them, and the batches.
    # patch_size, batch_size, epochs; a resumed run draws its batches anew
    with input_errors_as_exit():  # data that cannot be read: one line naming the file
        data = training_data.prepare_vit_data(args, args.seed + run.resume_step, run.input_shard)
    print("\n".join(data.summary_lines()))

    # Model: built and compiled under the distribution strategy.
    with run.strategy.scope():
        with input_errors_as_exit():  # an --init-from checkpoint is read here
            model = models.image_classifier_from_arguments(
                args, data.num_classes, data.class_names, data.image_shape
            )
        steps = run.steps_per_epoch(data.recipe.steps_per_epoch)
        models.compile_vision_transformer(model, args, steps, run.jit_compile)
    model.summary()
    baseline = data.class_prior_loss
    batches = (data.train, data.validation)
    run.fit(model, *batches, args.epochs, baseline, HINTS, steps, 5, skipped=data.skipped)

    # Evaluation, then drawings: confusion matrix, attention rollouts, one HTML page.
    labels, predictions, images = evaluation.evaluate_classifier(
        model, data.test, NUM_ROLLOUT_IMAGES, data.split_sizes.get("test")
    )
    accuracy = float(np.mean(labels == predictions))
    listed = (data.split_sizes.get("test"), data.class_counts.get("test"), data.class_names)
    tested = evaluation.images_classified(labels, *listed)  # and a class with none left, named
    print(f"test accuracy {accuracy:.4f} on {tested} after {run.train_seconds:.0f} s of training")
    figures.draw_vit_figures(model, args.output_dir, labels, predictions, images, data.class_names)
    if args.html:
        page = os.path.join(args.output_dir, "attention_explorer.html")
        figures.write_vit_attention_explorer(model, page, images, labels, data.class_names)
        print(f"attention explorer written to {page}")

    metrics = run.metrics(model=args.model, test_accuracy=accuracy, test_images=int(len(labels)))
    metrics.update(class_prior_loss=baseline, image_size=list(data.image_shape))
    metrics.update(patch_size=args.patch_size, batch_size=args.batch_size, epochs=args.epochs)
    metrics.update(augmentation=data.augmentation, split_sizes=data.split_sizes)
    metrics.update(class_names=data.class_names)
    # metrics, the export, and only then the training backup is removed
    return run.finish(metrics, models.classifier_export_writer(model, data.class_names))


if __name__ == "__main__":
    with script_stops_as_lines():  # --strict's first unusable item, Ctrl-C: one line
        main()
