"""A from-scratch keras-hub ViT classifier: the peer the learning benchmark sets beside ours.

A 4-layer `keras_hub.models.ViTBackbone` (patch 4, width 64, 4 heads, MLP
128: the sizes of `examples/train_vit.py`'s "small" preset) with a dense head
on the class token, trained with AdamW on a `folder:PATH` data set split as
the example splits it (`load_image_classification_dataset` with the same
seed, so the same training images), for the epochs and batch size it is
given, without augmentation. `--export DIR` writes a SavedModel with the
signature of `keras_attention.serving.image_classification_export`: `images`
float32 `(B, H, W, 3)` in 0..255 -> `probabilities`, `labels`.

    python -m benchmarks.keras_hub_vit_peer --dataset folder:~/glyphs --image-size 32 \\
        --epochs 30 --batch-size 64 --export runs/peer/served

Example:

>>> from benchmarks.keras_hub_vit_peer import parse_args
>>> args = parse_args(["--dataset", "folder:glyphs", "--epochs", "3"])
>>> args.epochs, args.batch_size, args.patch_size, args.num_layers
(3, 64, 4, 4)
"""

import argparse
import json
import os
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

ARCHITECTURE = dict(patch_size=4, num_layers=4, num_heads=4, hidden_dim=64, mlp_dim=128)


def parse_args(argv=None):
    """Command-line flags of the peer; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", required=True, help="folder:PATH, one sub-folder per class")
    parser.add_argument("--image-size", type=int, nargs="+", help="SIDE or HEIGHT WIDTH")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--weight-decay", type=float, default=1e-4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output-dir", default="runs/keras_hub_vit")
    parser.add_argument("--export", metavar="DIR", help="write a SavedModel to DIR")
    for name, value in ARCHITECTURE.items():
        parser.add_argument("--" + name.replace("_", "-"), type=int, default=value)
    args = parser.parse_args(argv)
    for name in ("epochs", "batch_size", "patch_size", "num_layers", "num_heads", "hidden_dim"):
        if getattr(args, name) <= 0:
            parser.error(f"--{name.replace('_', '-')} must be positive, got {getattr(args, name)}")
    return args


def native_size(folder):
    """`(height, width)` of the first image of a class-folder data set."""
    from PIL import Image

    for root, _, files in sorted(os.walk(folder)):
        for name in sorted(files):
            if name.lower().endswith((".png", ".jpg", ".jpeg", ".bmp", ".gif")):
                with Image.open(os.path.join(root, name)) as image:
                    return image.height, image.width
    raise ValueError(f"`folder` must hold images in class sub-folders. Received: folder={folder!r}")


def build_classifier(image_shape, num_classes, args):
    """Rescaling -> keras-hub ViTBackbone -> class token -> Dense logits."""
    import keras
    import keras_hub

    inputs = keras.Input(image_shape, name="images")
    scaled = keras.layers.Rescaling(1 / 127.5, offset=-1.0)(inputs)
    sizes = ("patch_size", "num_layers", "num_heads", "hidden_dim", "mlp_dim")
    backbone = keras_hub.models.ViTBackbone(
        image_shape=image_shape, **{name: getattr(args, name) for name in sizes}
    )
    tokens = backbone(scaled)  # (B, 1 + patches, hidden)
    logits = keras.layers.Dense(num_classes, name="head")(tokens[:, 0])
    return keras.Model(inputs, logits, name="keras_hub_vit_classifier")


def export(model, path, class_names):
    """SavedModel: `images` float32 (B, H, W, 3) -> `probabilities`, `labels`."""
    import keras
    import tensorflow as tf

    size = model.input_shape[1:3]
    table = tf.constant(class_names, dtype=tf.string)

    def serve(images):
        images = tf.image.resize(images, size)
        probabilities = tf.nn.softmax(model(images, training=False), axis=-1)  # (B, classes)
        labels = tf.gather(table, tf.argmax(probabilities, axis=-1))  # (B,)
        return {"probabilities": probabilities, "labels": labels}

    archive = keras.export.ExportArchive()
    archive.track(model)
    archive.add_endpoint(
        name="serving_default",
        fn=serve,
        input_signature=[tf.TensorSpec((None, None, None, 3), tf.float32, name="images")],
    )
    archive.write_out(path, verbose=False)


def main(argv=None):
    args = parse_args(argv)
    import keras
    import numpy as np
    import tensorflow as tf

    from keras_attention.tasks.image_classification.sources import load_image_classification_dataset

    keras.utils.set_random_seed(args.seed)
    folder = os.path.expanduser(args.dataset.removeprefix("folder:"))
    if args.image_size:
        size = tuple(args.image_size) * (2 if len(args.image_size) == 1 else 1)
    else:
        size = native_size(folder)
    data = load_image_classification_dataset(args.dataset, size, seed=args.seed)
    train = data.splits["train"].shuffle(4096, seed=args.seed).batch(args.batch_size)
    validation = data.splits["validation"].batch(args.batch_size)
    test = data.splits["test"].batch(args.batch_size)

    model = build_classifier(tuple(size) + (3,), data.num_classes, args)
    model.compile(
        optimizer=keras.optimizers.AdamW(args.learning_rate, weight_decay=args.weight_decay),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    start = time.time()
    model.fit(
        train.prefetch(tf.data.AUTOTUNE), validation_data=validation, epochs=args.epochs, verbose=2
    )
    fit_seconds = time.time() - start
    labels = np.concatenate([y.numpy() for _, y in test])
    predictions = np.argmax(model.predict(test, verbose=0), axis=-1)
    accuracy = float(np.mean(labels == predictions)) if len(labels) else None
    print(f"test accuracy {accuracy} on {len(labels)} images; {fit_seconds:.0f} s in fit")
    if args.export:
        export(model, args.export, list(data.class_names))
        print(f"SavedModel written to {args.export}")
    metrics = {
        "test_accuracy": accuracy,
        "test_images": int(len(labels)),
        "fit_seconds": round(fit_seconds, 1),
        "image_size": list(size),
        "epochs": args.epochs,
        "batch_size": args.batch_size,
        "architecture": {name: getattr(args, name) for name in ARCHITECTURE},
    }
    os.makedirs(args.output_dir, exist_ok=True)
    with open(os.path.join(args.output_dir, "metrics.json"), "w") as handle:
        json.dump(metrics, handle, indent=2)
    return metrics


if __name__ == "__main__":
    sys.exit(main() and 0)
