"""End to end: training throughput of the example models at their defaults.

Each model comes from the builder of its example script
(`examples/train_vit.py`, `train_nmt.py`, `train_captioning.py`): the
script's `parse_args([])` gives its defaults, its `build_model` and
`compile_model` make and compile the model exactly as a run with no argument
does. Synthetic batches of the example's batch size and shapes stand in for
the data (throughput does not depend on the values). A step is one
`train_on_batch`; examples/s = batch size / median step time.

Where keras-hub has the same architecture, it runs side by side in the same
process with the same batch, loss, optimizer type and XLA setting:

- ViT: `keras_hub.models.ViTBackbone` (same patches, width, depth, heads,
  MLP) with a class-token `Dense` head;
- translator: `keras_hub.layers` token-and-position embeddings,
  `TransformerEncoder` and `TransformerDecoder` blocks of the same sizes.

The Show, Attend and Tell captioner has no keras or keras-hub counterpart:
its throughput is reported alone. A case whose peer library is not
installed is skipped with the reason; any other error fails the run.

With `device="gpu"` a further case trains ViT-B/16 on 224 x 224 images under
`mixed_bfloat16` with XLA and reports images/s and the model FLOPs
utilisation (MFU): the model's training FLOPs per second over the bf16
matrix-multiplication rate measured on the same GPU.
"""

import warnings

import numpy as np

from benchmarks import timing
from benchmarks.flop_counts import vit_flops_per_image
from benchmarks.peer_models import keras_hub_vit_classifier

TITLE = "End to end: training throughput of the example models"
FULL = {"warmup": 2, "repeats": 15, "steps_per_epoch": 100, "caption_length": 16}
# What the examples' recipes choose on their built-in data (printed by each run).
FULL.update(batch=64, max_length=24)
QUICK = {"warmup": 0, "repeats": 2, "steps_per_epoch": 10, "caption_length": 6}
GPU = {"preset": "B/16", "image_size": 224, "batch": 128, "warmup": 3, "repeats": 10}
# A quick GPU run checks the same code at tiny sizes (also on a CPU standing in):
# the preset's widths in two blocks, which compile several times faster than twelve.
QUICK_GPU = {
    "preset": "Ti/16",
    "num_layers": 2,
    "image_size": 32,
    "batch": 2,
    "warmup": 0,
    "repeats": 2,
    "matmul_size": 256,
}


# Quick runs (the smoke test) shrink the example models to compile fast.
QUICK_ARCHITECTURE = dict(patch_size=16, hidden_dim=16, num_layers=1, num_heads=2, mlp_dim=32)
QUICK_ARGS = dict(batch_size=4, hidden_dim=16, num_layers=1, num_heads=2, vocabulary_size=40)
QUICK_ARGS.update(max_length=8, image_size=32)


def _quick_args(args, quick):
    if quick:
        for name, value in QUICK_ARGS.items():
            if hasattr(args, name):
                setattr(args, name, value)
    return args


def _compile_quickly(model, quick):
    # Graph mode compiles several times faster than XLA: enough to check the code.
    if quick:
        model.jit_compile = False


def _rng():
    return np.random.default_rng(0)


# ---------------------------------------------------------------------------
# Vision Transformer


def vit_case(settings, quick):
    """Our ViT at the example's defaults against keras-hub's ViTBackbone."""
    import keras

    from keras_attention.tasks.image_classification import model_from_flags as vit_model_arguments
    from keras_attention.tasks.image_classification.builtin_shapes import (
        shape_classification_class_names,
    )
    from keras_attention.tasks.image_classification.flags import vit_image_size
    from keras_attention.tasks.image_classification.recipe_from_flags import parse_vit_arguments

    args = _quick_args(parse_vit_arguments([]), quick)
    small_architecture = vit_model_arguments.SMALL_VIT_ARCHITECTURE
    if quick:
        args.image_size = 32
        vit_model_arguments.SMALL_VIT_ARCHITECTURE = dict(QUICK_ARCHITECTURE)
    class_names = list(shape_classification_class_names())
    num_classes = len(class_names)
    keras.utils.set_random_seed(0)
    try:
        ours = vit_model_arguments.vision_transformer_from_arguments(args, num_classes, class_names)
        architecture = dict(vit_model_arguments.SMALL_VIT_ARCHITECTURE)
    finally:
        vit_model_arguments.SMALL_VIT_ARCHITECTURE = small_architecture
    vit_model_arguments.compile_vision_transformer(ours, args, settings["steps_per_epoch"])
    _compile_quickly(ours, quick)
    size = vit_image_size(args)
    if getattr(args, "patch_size", None):
        architecture["patch_size"] = args.patch_size

    theirs = keras_hub_vit_classifier(size, architecture, num_classes)
    theirs.compile(
        optimizer=keras.optimizers.AdamW(1e-3, weight_decay=args.weight_decay),
        loss=keras.losses.CategoricalCrossentropy(
            from_logits=True, label_smoothing=args.label_smoothing
        ),
        metrics=["accuracy"],
        jit_compile=ours.jit_compile,
    )
    rng = _rng()
    images = rng.uniform(0, 255, size=(args.batch_size, size, size, 3)).astype("float32")
    labels = np.eye(num_classes, dtype="float32")[rng.integers(0, num_classes, args.batch_size)]
    config = {
        "example": "examples/train_vit.py",
        "image_size": size,
        "batch": args.batch_size,
        "jit_compile": bool(ours.jit_compile),
        **architecture,
    }
    return "ViT (train_vit.py defaults)", config, ours, theirs, (images, labels)


# ---------------------------------------------------------------------------
# Transformer translator


def _keras_hub_translator(vocabulary_size, length, hidden_dim, num_layers, num_heads, dropout):
    import keras
    import keras_hub

    source = keras.Input((length,), dtype="int32", name="source")
    target = keras.Input((length,), dtype="int32", name="target")
    x = keras_hub.layers.TokenAndPositionEmbedding(
        vocabulary_size, length, hidden_dim, mask_zero=True
    )(source)
    x = keras.layers.Dropout(dropout)(x)
    for _ in range(num_layers):
        x = keras_hub.layers.TransformerEncoder(2 * hidden_dim, num_heads, dropout=dropout)(x)
    y = keras_hub.layers.TokenAndPositionEmbedding(
        vocabulary_size, length, hidden_dim, mask_zero=True
    )(target)
    y = keras.layers.Dropout(dropout)(y)
    for _ in range(num_layers):
        y = keras_hub.layers.TransformerDecoder(2 * hidden_dim, num_heads, dropout=dropout)(y, x)
    logits = keras.layers.Dense(vocabulary_size, dtype="float32")(y)
    return keras.Model({"source": source, "target": target}, logits)


def translator_case(settings, quick):
    """Our Transformer translator at the example's defaults against keras-hub layers."""
    import keras

    from keras_attention.losses.masked_cross_entropy import masked_sparse_categorical_crossentropy
    from keras_attention.tasks.translation import model_from_flags as translation_model_arguments
    from keras_attention.tasks.translation.flags import parse_translation_arguments

    args = _quick_args(parse_translation_arguments([]), quick)
    if args.max_length is None:  # the recipe derives it from the data; the example's cap
        args.max_length = QUICK_ARGS["max_length"] if quick else FULL["max_length"]
    if args.batch_size is None:
        args.batch_size = QUICK_ARGS["batch_size"] if quick else FULL["batch"]
    if args.epochs is None:  # derived from the data too; only the schedule's length reads it
        args.epochs = 1
    vocabulary, length = args.vocabulary_size, args.max_length
    keras.utils.set_random_seed(0)
    ours = translation_model_arguments.translator_from_arguments(args, vocabulary, vocabulary)
    translation_model_arguments.compile_translator(ours, args, settings["steps_per_epoch"])
    _compile_quickly(ours, quick)
    theirs = _keras_hub_translator(
        vocabulary, length, args.hidden_dim, args.num_layers, args.num_heads, args.dropout
    )
    theirs.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss=masked_sparse_categorical_crossentropy,
        jit_compile=ours.jit_compile,
    )
    rng = _rng()
    shape = (args.batch_size, length)
    source = rng.integers(3, vocabulary, size=shape).astype("int32")
    target = rng.integers(3, vocabulary, size=shape).astype("int32")
    source[:, -length // 4 :] = 0  # padding, as short sentences have
    target[:, -length // 4 :] = 0
    labels = np.concatenate([target[:, 1:], np.zeros((shape[0], 1), "int32")], axis=1)
    config = {
        "example": "examples/train_nmt.py",
        "batch": args.batch_size,
        "length": length,
        "vocabulary": vocabulary,
        "hidden_dim": args.hidden_dim,
        "num_layers": args.num_layers,
        "num_heads": args.num_heads,
        "dropout": args.dropout,
        "jit_compile": bool(ours.jit_compile),
    }
    data = ({"source": source, "target": target}, labels)
    return "Transformer translator (train_nmt.py defaults)", config, ours, theirs, data


# ---------------------------------------------------------------------------
# Captioner


def captioner_case(settings, quick):
    """Our default captioner (Show, Attend and Tell) at the example's defaults, alone."""
    import keras

    import keras_attention as ka
    from keras_attention.tasks.captioning import flags as cli
    from keras_attention.tasks.captioning.image_size import native_caption_image_size
    from keras_attention.tasks.captioning.recipe import derived_image_size

    parser = cli.build_captioning_parser()
    args = _quick_args(cli.with_captioner_defaults(parser.parse_args([])), quick)
    if args.batch_size is None:  # the recipe derives it from the data
        args.batch_size = QUICK_ARGS["batch_size"] if quick else FULL["batch"]
    if args.image_size is None:  # ... and the image size, from the built-in scenes
        native, source = native_caption_image_size("builtin")
        args.image_size, _ = derived_image_size(native, args.backbone, source)
    vocabulary, length = args.vocabulary_size, settings["caption_length"]
    keras.utils.set_random_seed(0)
    ours = ka.models.build_captioner(args.model, vocabulary, length, **cli.captioner_options(args))
    ours.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss=ka.losses.masked_sparse_categorical_crossentropy,
    )
    _compile_quickly(ours, quick)
    rng = _rng()
    height, width = (args.image_size,) * 2 if np.isscalar(args.image_size) else args.image_size
    images = rng.uniform(0, 255, size=(args.batch_size, height, width, 3)).astype("float32")
    captions = rng.integers(3, vocabulary, size=(args.batch_size, length)).astype("int32")
    labels = np.concatenate([captions[:, 1:], np.zeros((args.batch_size, 1), "int32")], axis=1)
    config = {
        "example": "examples/train_captioning.py",
        "model": args.model,
        "image_size": [height, width],
        "batch": args.batch_size,
        "caption_length": length,
        "vocabulary": vocabulary,
        "hidden_dim": args.hidden_dim,
        "jit_compile": str(ours.jit_compile),
    }
    data = ({"image": images, "caption": captions}, labels)
    return f"Captioner {args.model} (train_captioning.py defaults)", config, ours, None, data


# ---------------------------------------------------------------------------
# ViT-B/16 on a GPU


def bf16_matmul_rate(size=8192, repeats=10):
    """Measured bf16 matrix-multiplication FLOP/s of the default device (XLA)."""
    import tensorflow as tf

    a = tf.random.normal((size, size), dtype=tf.bfloat16)
    b = tf.random.normal((size, size), dtype=tf.bfloat16)

    @tf.function(jit_compile=True)
    def chained(a, b):
        c = a
        for _ in range(4):
            c = tf.matmul(c, b) * tf.constant(1e-2, tf.bfloat16)
        return tf.reduce_sum(tf.cast(c[:1, :1], tf.float32))

    samples = timing.compare({"matmul": lambda: chained(a, b)}, warmup=2, repeats=repeats)
    return 4 * 2 * size**3 / samples.summary("matmul")["median_s"]


def vit_gpu_case(gpu_settings):
    """ViT at a paper size under mixed_bfloat16 + XLA: images/s and MFU."""
    import keras

    from keras_attention.models.image_classification.vision_transformer import vision_transformer
    from keras_attention.models.image_classification.vit_sizes import vision_transformer_preset

    architecture = vision_transformer_preset(gpu_settings["preset"])
    architecture["num_layers"] = gpu_settings.get("num_layers", architecture["num_layers"])
    size, batch, num_classes = gpu_settings["image_size"], gpu_settings["batch"], 1000
    keras.utils.set_random_seed(0)
    model = vision_transformer(image_size=size, num_classes=num_classes, **architecture)
    model.compile(
        optimizer=keras.optimizers.AdamW(1e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        jit_compile=True,
    )
    rng = _rng()
    images = rng.uniform(0, 255, size=(batch, size, size, 3)).astype("float32")
    labels = rng.integers(0, num_classes, size=batch).astype("int32")
    samples = timing.compare(
        {"ours": lambda: model.train_on_batch(images, labels)},
        warmup=gpu_settings["warmup"],
        repeats=gpu_settings["repeats"],
    )
    step = samples.summary("ours")["median_s"]
    flops = batch * vit_flops_per_image(
        size,
        architecture["patch_size"],
        architecture["hidden_dim"],
        architecture["num_layers"],
        architecture["mlp_dim"],
        num_classes,
    )
    peak = bf16_matmul_rate(gpu_settings.get("matmul_size", 8192))
    return timing.case_result(
        f"ViT-{gpu_settings['preset']} {size}px bf16 XLA",
        {**gpu_settings, **architecture, "policy": keras.config.dtype_policy().name},
        samples,
        images_per_second=batch / step,
        model_tflops_per_second=flops / step / 1e12,
        measured_bf16_matmul_tflops=peak / 1e12,
        mfu=flops / step / peak,
        table_columns={"examples/s ours": batch / step, "MFU %": 100 * flops / step / peak},
    )


# ---------------------------------------------------------------------------


CASES = (("vit", vit_case), ("translator", translator_case), ("captioner", captioner_case))


def run(quick=False, device="cpu"):
    """Measure the training throughput of every example model; returns the JSON payload.

    Args:
        quick: tiny versions of the models, batch 4, few repetitions (for the
            smoke test).
        device: "cpu" or "gpu" (on "gpu" also ViT-B/16 at 224 px, bf16).

    Returns:
        dict, as written to results/end_to_end.json.
    """
    settings = QUICK if quick else FULL
    results, skipped = [], []
    with timing.tf_device(device), warnings.catch_warnings():
        # keras-hub's embeddings hand a mask to layers that drop it, and say so at every trace.
        warnings.filterwarnings("ignore", message=".*does not support masking.*")
        for name, make_case in CASES:
            try:
                case, config, ours, theirs, (inputs, labels) = make_case(settings, quick)
            except ImportError as error:  # an optional peer (keras-hub) is not installed
                skipped.append({"case": name, "reason": f"{type(error).__name__}: {error}"})
                continue
            if quick:
                case = case.replace("defaults)", "defaults, shrunk)")
            timing.log(f"end_to_end: {case}")
            steps = {"ours": lambda m=ours, x=inputs, y=labels: m.train_on_batch(x, y)}
            if theirs is not None:
                steps["keras_hub"] = lambda m=theirs, x=inputs, y=labels: m.train_on_batch(x, y)
            samples = timing.compare(steps, warmup=settings["warmup"], repeats=settings["repeats"])
            batch = config["batch"]
            columns = {
                f"examples/s {label}": batch / samples.summary(label)["median_s"] for label in steps
            }
            ratios = {}
            if theirs is not None:
                ratios["time ours/keras_hub"] = samples.ratio("ours", "keras_hub")
            results.append(
                timing.case_result(
                    case,
                    config,
                    samples,
                    ratios=ratios,
                    peer="keras_hub" if theirs is not None else None,
                    examples_per_second=columns,
                    table_columns=columns,
                )
            )
        if device == "gpu":
            results.append(vit_gpu_case(QUICK_GPU if quick else GPU))
    notes = [
        "examples/s = batch / median train_on_batch time; ratio < 1: ours faster.",
        "the captioner has no keras or keras-hub counterpart, so it has no ratio.",
    ]
    if device != "gpu":
        notes.append(
            "ViT-B/16 at 224 px (bf16, XLA, images/s and MFU) runs only with --device gpu."
        )
    return timing.make_payload(
        "end_to_end",
        TITLE,
        results,
        quick=quick,
        device=device,
        settings={**settings, **({"gpu": QUICK_GPU if quick else GPU} if device == "gpu" else {})},
        skipped=skipped,
        notes=notes,
    )
