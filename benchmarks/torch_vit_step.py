"""A ViT training step: ours (TensorFlow, XLA) against keras-hub, PyTorch eager and `torch.compile`.

The example's small ViT (32x32 images, patch 4, width 64, 4 layers, 4
heads, MLP 128, 10 classes) trains one step on a batch of 64 with AdamW and
cross-entropy: ours is `vision_transformer` with `compile()`'s defaults and
`jit_compile=True` (`train_on_batch`); keras-hub's is its `ViTBackbone` of
the same sizes with the same rescaling and a class-token head
(`peer_models.keras_hub_vit_classifier`), compiled alike; PyTorch's is
transformers' `ViTForImageClassification` of the same sizes (exact GELU,
pre-norm, class token), eager and compiled with `torch.compile`. Same
batch, same threads (`--threads`, default 2). The steps run in alternating
rounds (`timing.compare`: every model once per round, the order reversed
every other round), and "ours / this" is the median of the per-round
ratios. PyTorch needs torch and transformers (the `references` extra);
without them the benchmark says so and measures the Keras models alone.

    python -m benchmarks.torch_vit_step          # results/torch_vit_step.json
"""

import argparse
import os
import statistics
import sys

import numpy as np

SIZES = dict(image=32, patch=4, width=64, layers=4, heads=4, mlp=128, classes=10)
OURS = "ours (TensorFlow, XLA)"


def parse_args(argv=None):
    """The benchmark's flags (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few steps: checks that it works")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--steps", type=int, default=20, help="timed rounds (a step per model)")
    parser.add_argument("--results-dir", default=None)
    return parser.parse_args(argv)


def our_step(images, labels):
    """One `train_on_batch` of our ViT, XLA-compiled."""
    import keras

    from keras_attention.models.image_classification.vision_transformer import vision_transformer

    keras.utils.set_random_seed(0)
    model = vision_transformer(
        image_size=SIZES["image"],
        patch_size=SIZES["patch"],
        num_classes=SIZES["classes"],
        hidden_dim=SIZES["width"],
        num_layers=SIZES["layers"],
        num_heads=SIZES["heads"],
        mlp_dim=SIZES["mlp"],
    )
    model.compile(jit_compile=True)
    return lambda: model.train_on_batch(images, labels)


def keras_hub_step(images, labels):
    """One `train_on_batch` of keras-hub's ViT of the same sizes, XLA-compiled."""
    import keras

    from benchmarks.peer_models import keras_hub_vit_classifier

    keras.utils.set_random_seed(0)
    architecture = {
        "patch_size": SIZES["patch"],
        "num_layers": SIZES["layers"],
        "num_heads": SIZES["heads"],
        "hidden_dim": SIZES["width"],
        "mlp_dim": SIZES["mlp"],
    }
    model = keras_hub_vit_classifier(SIZES["image"], architecture, SIZES["classes"])
    model.compile(
        optimizer=keras.optimizers.AdamW(1e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        jit_compile=True,
    )
    return lambda: model.train_on_batch(images, labels)


def torch_steps(images, labels, threads):
    """`{"torch eager": step, "torch.compile": step}`, or a reason string without torch."""
    try:
        import torch
        import transformers
    except ImportError as error:
        return f"PyTorch peers skipped: {error}"
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    config = transformers.ViTConfig(
        image_size=SIZES["image"],
        patch_size=SIZES["patch"],
        hidden_size=SIZES["width"],
        num_hidden_layers=SIZES["layers"],
        num_attention_heads=SIZES["heads"],
        intermediate_size=SIZES["mlp"],
        num_labels=SIZES["classes"],
    )
    # (B, H, W, C) 0..255 -> (B, C, H, W) in [-1, 1], as our model rescales inside.
    pixels = torch.from_numpy((images / 127.5 - 1).transpose(0, 3, 1, 2).copy())
    targets = torch.from_numpy(labels.astype("int64"))
    steps = {}
    for name in ("torch eager", "torch.compile"):
        model = transformers.ViTForImageClassification(config).train()
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        forward = model if name == "torch eager" else torch.compile(model)

        def step(forward=forward, optimizer=optimizer):
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(forward(pixel_values=pixels).logits, targets)
            loss.backward()
            optimizer.step()

        steps[name] = step
    return steps


def run(quick=False, threads=2, batch=64, steps=20):
    """Measures every step in alternating rounds; returns the JSON payload."""
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")

    from benchmarks import timing

    tensorflow_threads = timing.set_tensorflow_threads(threads)
    steps = 2 if quick else steps
    rng = np.random.default_rng(0)
    side = SIZES["image"]
    images = rng.uniform(0, 255, (batch, side, side, 3)).astype("float32")
    labels = rng.integers(0, SIZES["classes"], batch)
    candidates = {
        OURS: our_step(images, labels),
        "keras-hub (TensorFlow, XLA)": keras_hub_step(images, labels),
    }
    peers = torch_steps(images, labels, threads)
    skipped = [peers] if isinstance(peers, str) else []
    for name, step in ({} if skipped else peers).items():
        try:
            step()  # torch.compile compiles here, and needs a working C++ toolchain
        except Exception as error:
            skipped.append(f"{name}: {type(error).__name__}: {str(error)[:200]}")
            continue
        candidates[name] = step
    samples = timing.compare(candidates, warmup=0 if quick else 3, repeats=steps)
    results = []
    for name in candidates:
        median = statistics.median(samples[name])
        ratio = {"ratio": 1.0} if name == OURS else samples.ratio(OURS, name)
        results.append(
            {
                "model": name,
                "step_ms": 1000 * median,
                "images_per_s": batch / median,
                "ours_over_this": ratio["ratio"],
                "ours_over_this_quartiles": [ratio.get("ratio_q25"), ratio.get("ratio_q75")],
            }
        )
    settings = {"threads": threads, "tensorflow_threads": tensorflow_threads, "batch": batch}
    settings.update(rounds=steps, **SIZES)
    return timing.make_payload(
        "torch_vit_step", "ViT training step against keras-hub and PyTorch", results, quick,
        "cpu", settings, skipped=skipped,
    )  # fmt: skip


def main(argv=None):
    """Runs the benchmark, writes its JSON, prints the table."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from benchmarks import timing

    payload = run(args.quick, args.threads, args.batch, args.steps)
    path = timing.write_json(payload, timing.results_directory(args.results_dir, args.quick))
    print("| model | step ms | images/s | ours / this |\n|---|---|---|---|")
    for row in payload["results"]:
        print(
            f"| {row['model']} | {row['step_ms']:.1f} | {row['images_per_s']:.0f} | "
            f"{row['ours_over_this']:.2f} |"
        )
    for reason in payload["skipped"]:
        print("skipped:", reason)
    timing.log(f"wrote {path}")
    return path


if __name__ == "__main__":
    main()
