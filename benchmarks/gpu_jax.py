"""GPU figures on Keras' JAX backend: every model under XLA and bf16, ViT-B/16 MFU, attention.

    python -m benchmarks.gpu_jax [--quick] [--only SECTION ...] [--budget-s S] [--results-dir DIR]
    python -m benchmarks.gpu_jax --readme-only

The GPU machines this project is measured on carry JAX with CUDA and no
TensorFlow, so this runs the library on Keras' JAX backend, where
`jit_compile=True` compiles with XLA as it does on TensorFlow. Everything runs
under the `mixed_bfloat16` policy. Sections, in the order they run:

- "peaks": the device's measured bf16 matrix-multiplication rate (8192^3,
  random data) and copy bandwidth, the ceilings the other sections are read
  against.
- "vit_b16": ViT-B/16 at 224 px, one `train_on_batch` of 128 images (AdamW),
  ours with the "auto" and "fused" attention kernels and keras-hub's
  `ViTBackbone` with the same head, in alternating rounds: images/s and MFU
  (training FLOPs from `flop_counts.vit_flops_per_image` over the measured
  bf16 rate, and over the datasheet's dense bf16 peak).
- "attention": a training step (forward, backward) of `MultiHeadAttention`
  against `keras.layers.MultiHeadAttention` with the same weights (outputs
  checked equal first), and of `TransformerEncoderBlock` against keras-hub's
  `TransformerEncoder`, with and without padding.
- "decoding": Transformer translators (2 x 256, batch 8, 64 tokens; 6 x 512,
  batch 64, 128 tokens) decoding with the key/value caches (`greedy_search`'s
  loop), by re-running the model on the prefix every step, and with beam
  search (width 4), in float32; how many cached and re-run tokens agree.
- "models": every model family (both translators, the three captioners, ViT,
  Swin) compiled with `jit_compile=True`, trained two epochs with `fit`: the
  compile count of the second epoch (0: no retracing across steps) and its
  examples/s.
- "long_sequences": causal attention of one 8-head sequence at 8k-32k
  tokens, forward and backward: "auto", our chunked kernel, the materialised
  "xla" one and keras' fused one (cuDNN on a GPU), compiled temporary memory (XLA's
  memory analysis) and TFLOP/s; banded attention (window 512) at 32k against
  full causal attention.

Each section's JSON is written to `results/gpu/<section>.json` (quick runs:
`results/gpu/quick/`) as soon as it is measured, so a run cut short keeps what
it finished; a section started after `--budget-s` seconds is skipped and says
so. `--quick` runs tiny sizes, on a CPU too, to check the code.
`--readme-only` measures nothing and rebuilds the GPU tables of
benchmarks/README.md from the JSON (`benchmarks/gpu_report.py`).
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "jax")

import keras  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks.decoding_setup import END_ID  # noqa: E402
from benchmarks.decoding_setup import SMALL_TRANSLATOR  # noqa: E402
from benchmarks.decoding_setup import START_ID  # noqa: E402
from benchmarks.decoding_setup import TINY_TRANSLATOR  # noqa: E402
from benchmarks.decoding_setup import decoding_sources  # noqa: E402
from benchmarks.decoding_setup import rerun_greedy  # noqa: E402
from benchmarks.decoding_setup import translator_that_never_ends  # noqa: E402
from benchmarks.gpu_report import RESULTS_DIR  # noqa: E402
from benchmarks.gpu_report import SECTIONS  # noqa: E402
from benchmarks.gpu_report import update_readme  # noqa: E402
from benchmarks.peer_models import keras_hub_vit_classifier  # noqa: E402

# NVIDIA's datasheet dense bf16 rate of the H100 and H200 SXM parts (no sparsity).
DATASHEET_BF16_TFLOPS = {"H100": 989.4, "H200": 989.4}
FULL = {
    "matmul_size": 8192,
    "copy_mib": 2048,
    "vit_batch": 128,
    "vit_preset": "B/16",
    "vit_image_size": 224,
    "attention": {"batch": 32, "length": 512, "heads": 12, "head_dim": 64},
    "decoding_cases": (
        SMALL_TRANSLATOR,
        {
            **SMALL_TRANSLATOR,
            "batch": 64,
            "tokens": 128,
            "source_length": 64,
            "vocabulary": 8000,
            "hidden_dim": 512,
            "num_layers": 6,
            "num_heads": 8,
            "intermediate_dim": 2048,
        },
    ),
    "models_batch": 64,
    "models_steps": 20,
    "long_lengths": (8192, 16384, 32768),
    "long_heads": 8,
    "window": 512,
    "memory_limit_gib": 48.0,
    "warmup": 2,
    "repeats": 10,
}
QUICK = {
    "matmul_size": 256,
    "copy_mib": 8,
    "vit_batch": 2,
    "vit_preset": "Ti/16",
    "vit_image_size": 32,
    "attention": {"batch": 2, "length": 16, "heads": 2, "head_dim": 8},
    "decoding_cases": (TINY_TRANSLATOR,),
    "models_batch": 2,
    "models_steps": 2,
    "long_lengths": (64,),
    "long_heads": 2,
    "window": 8,
    "memory_limit_gib": 1.0,
    "warmup": 0,
    "repeats": 2,
}
PRODUCTS_PER_CALL = 8


def log(message):
    print(f"[gpu_jax {time.strftime('%H:%M:%S')}] {message}", flush=True)


# ---------------------------------------------------------------------------
# Timing and compile counting


def ready(value):
    """Wait for every array in `value` (JAX dispatches asynchronously)."""
    import jax

    return jax.block_until_ready(value)


def alternating_times(functions, warmup, repeats):
    """`{label: {"median_s", "min_s", "max_s", "repeats"}}`, timed in alternating rounds.

    Every function is called `warmup` times first (compilation stays out of
    the numbers), then once per round in turn, so drifting clocks or a busy
    host touch every label alike.
    """
    for function in functions.values():
        for _ in range(warmup):
            ready(function())
    samples = {label: [] for label in functions}
    for _ in range(repeats):
        for label, function in functions.items():
            start = time.perf_counter()
            ready(function())
            samples[label].append(time.perf_counter() - start)
    return {
        label: {
            "median_s": float(np.median(values)),
            "min_s": float(np.min(values)),
            "max_s": float(np.max(values)),
            "repeats": len(values),
        }
        for label, values in samples.items()
    }


class CompileCounter:
    """Counts XLA compilations in this process, from JAX's monitoring events.

    `seen_any` tells whether the event exists in this JAX version at all: a
    count of 0 is evidence of no recompilation only when it is True.
    """

    EVENT_SUFFIX = "backend_compile_duration"

    def __init__(self):
        import jax

        self.count = 0
        jax.monitoring.register_event_duration_secs_listener(self._listen)

    @property
    def seen_any(self):
        return self.count > 0

    def _listen(self, event, duration, *args, **kwargs):
        if event.endswith(self.EVENT_SUFFIX):
            self.count += 1


def device_description():
    """The device as JAX and the driver report it, and the versions that matter."""
    import jax

    try:
        import keras_hub

        keras_hub_version = keras_hub.__version__
    except ImportError:
        keras_hub_version = None
    device = jax.devices()[0]
    driver = None
    try:
        query = "--query-gpu=name,driver_version,memory.total"
        driver = subprocess.run(
            ["nvidia-smi", query, "--format=csv,noheader"], capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        pass
    return {
        "platform": device.platform,
        "device_kind": device.device_kind,
        "nvidia_smi": driver,
        "jax": jax.__version__,
        "keras": keras.__version__,
        "keras_hub": keras_hub_version,
        "python": platform.python_version(),
        "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "policy": keras.config.dtype_policy().name,
    }


def datasheet_peak_tflops(device_kind):
    """The datasheet dense bf16 TFLOP/s of `device_kind`, or None for other devices."""
    for name, tflops in DATASHEET_BF16_TFLOPS.items():
        if name in device_kind:
            return tflops
    return None


# ---------------------------------------------------------------------------
# Peaks


def measure_peaks(settings):
    """The measured bf16 matmul FLOP/s and device copy bytes/s (read plus write)."""
    import jax
    import jax.numpy as jnp

    size = settings["matmul_size"]
    rotation = [
        (
            jax.random.normal(jax.random.key(2 * i), (size, size), jnp.bfloat16),
            jax.random.normal(jax.random.key(2 * i + 1), (size, size), jnp.bfloat16),
        )
        for i in range(3)
    ]

    @jax.jit
    def matmul(a, b):
        # Several products per call keep dispatch gaps out of the rate; the
        # scaling keeps the values finite.
        for _ in range(PRODUCTS_PER_CALL):
            a = (a @ b) * jnp.bfloat16(1.0 / size)
        return a

    calls = {"round": 0}

    def one_product():
        a, b = rotation[calls["round"] % len(rotation)]
        calls["round"] += 1
        return matmul(a, b)

    elements = settings["copy_mib"] * 2**20 // 4
    source = jax.random.normal(jax.random.key(9), (elements,), jnp.float32)
    copy = jax.jit(lambda x: x * 1.0001)
    times = alternating_times(
        {"matmul": one_product, "copy": lambda: copy(source)},
        warmup=max(settings["warmup"], 3),  # also lets the clocks rise from idle
        repeats=settings["repeats"],
    )
    return {
        "matmul_size": size,
        "bf16_matmul_tflops": PRODUCTS_PER_CALL * 2 * size**3 / times["matmul"]["median_s"] / 1e12,
        "copy_gb_per_s": 2 * 4 * elements / times["copy"]["median_s"] / 1e9,
        "timings": times,
    }


# ---------------------------------------------------------------------------
# ViT-B/16


def _on_device(*arrays):
    import jax

    return tuple(jax.device_put(array) for array in arrays)


def vit_b16(settings, peaks):
    """Training step of ViT-B/16 at 224 px: ours ("auto", "fused") and keras-hub's."""

    import keras_attention as ka
    from benchmarks.flop_counts import vit_flops_per_image

    architecture = dict(ka.models.VIT_PRESETS[settings["vit_preset"]])
    size, batch, num_classes = settings["vit_image_size"], settings["vit_batch"], 1000
    models = {}
    for implementation in ("auto", "fused"):
        keras.utils.set_random_seed(0)
        models[f"ours_{implementation}"] = ka.models.VisionTransformer(
            image_size=size, num_classes=num_classes, implementation=implementation, **architecture
        )
    keras.utils.set_random_seed(0)
    models["keras_hub"] = keras_hub_vit_classifier(size, architecture, num_classes)
    for model in models.values():
        model.compile(
            optimizer=keras.optimizers.AdamW(1e-3),
            loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            jit_compile=True,
        )
    rng = np.random.default_rng(0)
    images = rng.uniform(0, 255, size=(batch, size, size, 3)).astype("float32")
    labels = rng.integers(0, num_classes, size=batch).astype("int32")
    images, labels = _on_device(images, labels)
    compile_seconds = {}
    for label, model in models.items():
        start = time.perf_counter()
        model.train_on_batch(images, labels)
        compile_seconds[label] = time.perf_counter() - start
        log(f"vit_b16: {label} first step {compile_seconds[label]:.1f} s")
    times = alternating_times(
        {
            label: (lambda model=model: model.train_on_batch(images, labels))
            for label, model in models.items()
        },
        warmup=settings["warmup"],
        repeats=settings["repeats"],
    )
    flops = batch * vit_flops_per_image(
        size, num_classes=num_classes, **_flop_arguments(architecture)
    )
    datasheet = peaks.get("datasheet_bf16_tflops")
    rows = {}
    for label, timing in times.items():
        achieved = flops / timing["median_s"] / 1e12
        rows[label] = {
            "images_per_second": batch / timing["median_s"],
            "model_tflops_per_second": achieved,
            "mfu_vs_measured_matmul": achieved / peaks["bf16_matmul_tflops"],
            "mfu_vs_datasheet": achieved / datasheet if datasheet else None,
            "first_step_s": compile_seconds[label],
            "timing": timing,
        }
    return {
        "config": {
            "preset": settings["vit_preset"],
            "image_size": size,
            "batch": batch,
            "num_classes": num_classes,
            **architecture,
        },
        "training_flops_per_step": flops,
        "rows": rows,
        "ratios": {
            f"time {label}/keras_hub": times[label]["median_s"] / times["keras_hub"]["median_s"]
            for label in times
            if label != "keras_hub"
        },
    }


def _flop_arguments(architecture):
    names = ("patch_size", "hidden_dim", "num_layers", "mlp_dim")
    return {name: architecture[name] for name in names}


# ---------------------------------------------------------------------------
# Attention layers and encoder blocks


def layer_train_step(layer, *args, **kwargs):
    """A jitted forward+backward of `layer(*args, **kwargs)` (mean squared output as loss)."""
    import jax
    import jax.numpy as jnp

    trainable = [variable.value for variable in layer.trainable_variables]
    non_trainable = [variable.value for variable in layer.non_trainable_variables]

    def loss(trainable_values):
        outputs, _ = layer.stateless_call(
            trainable_values, non_trainable, *args, training=True, **kwargs
        )
        if isinstance(outputs, (tuple, list)):
            outputs = outputs[0]
        return jnp.mean(jnp.square(outputs.astype("float32")))

    step = jax.jit(jax.value_and_grad(loss))
    return lambda: step(trainable)


def _relative_error(got, expected):
    got, expected = np.asarray(got, "float64"), np.asarray(expected, "float64")
    return float(np.linalg.norm(got - expected) / max(np.linalg.norm(expected), 1e-30))


def attention_layers(settings):
    """Ours against keras' MultiHeadAttention and keras-hub's TransformerEncoder, train steps."""
    import keras_hub

    import keras_attention as ka

    shape = settings["attention"]
    batch, length, heads, head_dim = (shape[k] for k in ("batch", "length", "heads", "head_dim"))
    width = heads * head_dim
    rng = np.random.default_rng(0)
    inputs = rng.normal(size=(batch, length, width)).astype("float32")
    padding = np.ones((batch, length), bool)
    padding[:, -length // 4 :] = False  # the last quarter is padding, as short sentences have
    (inputs,) = _on_device(inputs)
    rows = {}

    ours = ka.layers.MultiHeadAttention(heads, head_dim)
    # The materialised kernel, which "auto" chose everywhere before it knew cuDNN.
    ours_xla = ka.layers.MultiHeadAttention(heads, head_dim, implementation="xla")
    theirs = keras.layers.MultiHeadAttention(heads, head_dim)
    for layer in (ours, ours_xla, theirs):
        layer(inputs, inputs)  # build
    ours.set_weights(theirs.get_weights())
    ours_xla.set_weights(theirs.get_weights())
    error = _relative_error(ours(inputs, inputs), theirs(inputs, inputs))
    times = alternating_times(
        {
            "ours": layer_train_step(ours, inputs, inputs),
            "ours_xla": layer_train_step(ours_xla, inputs, inputs),
            "keras": layer_train_step(theirs, inputs, inputs),
        },
        settings["warmup"],
        settings["repeats"],
    )
    rows["MultiHeadAttention"] = _peer_row(times, "keras", target=0.9, output_relative_error=error)

    for padded in (False, True):
        keyword = {"padding_mask": padding} if padded else {}
        ours = ka.layers.TransformerEncoderBlock(num_heads=heads, intermediate_dim=4 * width)
        theirs = keras_hub.layers.TransformerEncoder(4 * width, heads)
        ours(inputs), theirs(inputs)  # build both
        times = alternating_times(
            {
                "ours": layer_train_step(ours, inputs, **keyword),
                "keras_hub": layer_train_step(theirs, inputs, **keyword),
            },
            settings["warmup"],
            settings["repeats"],
        )
        name = "encoder block" + (", padded" if padded else "")
        rows[name] = _peer_row(times, "keras_hub", target=0.95)
    return {"config": {**shape, "width": width, "dropout": 0.0}, "rows": rows}


def _peer_row(times, peer, target, **extra):
    ratio = times["ours"]["median_s"] / times[peer]["median_s"]
    return {
        "timings": times,
        f"time ours/{peer}": ratio,
        "target": target,
        "meets_target": ratio <= target,
        **extra,
    }


# ---------------------------------------------------------------------------
# Decoding


def decoding(settings):
    """Cached greedy decoding against re-running the model, and beam search, in float32.

    float32, because greedy tokens are compared for equality: in bfloat16 the
    two paths round differently and near-ties of random weights flip tokens.
    """
    policy = keras.config.dtype_policy()
    keras.config.set_dtype_policy("float32")
    try:
        return {"cases": [_decoding_case(shape, settings) for shape in settings["decoding_cases"]]}
    finally:
        keras.config.set_dtype_policy(policy)


def _decoding_case(shape, settings):
    import jax

    from keras_attention.generation.beam_search import _beam_loop
    from keras_attention.generation.greedy_search import _greedy_loop

    model = translator_that_never_ends(shape)
    tokens = shape["tokens"]
    cached = jax.jit(lambda source: _greedy_loop(model, source, START_ID, END_ID, tokens)[0])
    rerun = jax.jit(rerun_greedy(model, tokens))
    beam = jax.jit(lambda source: _beam_loop(model, source, START_ID, END_ID, tokens, 4, 0.6)[0])
    sources = decoding_sources(shape, 0)
    (sources,) = _on_device(sources)
    cached_tokens, rerun_tokens = np.asarray(cached(sources)), np.asarray(rerun(sources))
    times = alternating_times(
        {
            "cached": lambda: cached(sources),
            "rerun": lambda: rerun(sources),
            "beam4": lambda: beam(sources),
        },
        settings["warmup"],
        settings["repeats"],
    )
    medians = {label: timing["median_s"] for label, timing in times.items()}
    log(f"decoding: {shape} rerun/cached {medians['rerun'] / medians['cached']:.1f}")
    return {
        "config": {**shape, "beam_width": 4, "policy": "float32"},
        "cached_equals_rerun": bool(np.array_equal(cached_tokens, rerun_tokens)),
        "equal_token_fraction": float(np.mean(cached_tokens == rerun_tokens)),
        "timings": times,
        "speedup rerun/cached": medians["rerun"] / medians["cached"],
        "time beam4/cached": medians["beam4"] / medians["cached"],
        "targets": {"speedup rerun/cached": ">= 10"},
    }


# ---------------------------------------------------------------------------
# Every model family: fit under XLA and bf16


def model_cases(quick):
    """Name -> (build the model, its input kind, the loss): every family, at a working size."""

    import keras_attention as ka

    if quick:
        text = dict(hidden_dim=16, num_layers=1, num_heads=2, intermediate_dim=32)
        vocabulary, length, image_size, vit, swin = 40, 8, 32, "Ti/16", "swin_glyphs_32"
        rnn, captioner = dict(embedding_dim=8, units=16), dict(hidden_dim=16, num_heads=2)
    else:
        text = dict(hidden_dim=512, num_layers=6, num_heads=8, intermediate_dim=2048)
        vocabulary, length, image_size, vit, swin = 8000, 64, 128, "S/16", "swin_tiny_224"
        rnn, captioner = dict(embedding_dim=256, units=512), dict(hidden_dim=256, num_heads=4)
    translator = dict(source_vocabulary_size=vocabulary, target_vocabulary_size=vocabulary)
    caption = dict(vocabulary_size=vocabulary, max_caption_length=length, image_size=image_size)
    masked = ka.losses.masked_sparse_categorical_crossentropy
    classes = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    return {
        "TransformerTranslator": (
            lambda: ka.models.TransformerTranslator(
                **translator, max_source_length=length, max_target_length=length, **text
            ),
            ("text", length, vocabulary),
            masked,
        ),
        "RNNAttentionTranslator": (
            lambda: ka.models.RNNAttentionTranslator(**translator, **rnn),
            ("text", length, vocabulary),
            masked,
        ),
        "ShowAttendTellCaptioner": (
            lambda: ka.models.ShowAttendTellCaptioner(**caption, **rnn),
            ("caption", length, vocabulary, image_size),
            masked,
        ),
        "TransformerCaptioner": (
            lambda: ka.models.TransformerCaptioner(
                **caption, **captioner, intermediate_dim=4 * captioner["hidden_dim"]
            ),
            ("caption", length, vocabulary, image_size),
            masked,
        ),
        "ViTCaptioner": (
            lambda: ka.models.ViTCaptioner(
                **caption, **captioner, intermediate_dim=4 * captioner["hidden_dim"]
            ),
            ("caption", length, vocabulary, image_size),
            masked,
        ),
        "VisionTransformer": (
            lambda: ka.models.vision_transformer_from_preset(
                vit, image_size=224 if not quick else image_size, num_classes=1000
            ),
            ("image", 224 if not quick else image_size, 1000),
            classes,
        ),
        "SwinTransformer": (
            lambda: ka.models.swin_transformer_from_preset(swin),
            ("image", 224 if not quick else 32, 1000 if not quick else 10),
            classes,
        ),
    }


def synthetic_data(kind, examples, rng):
    """`(inputs, labels)` of `examples` rows shaped as the model kind takes them."""
    if kind[0] == "image":
        _, size, classes = kind
        images = rng.uniform(0, 255, (examples, size, size, 3)).astype("float32")
        return images, rng.integers(0, classes, examples).astype("int32")
    length, vocabulary = kind[1], kind[2]
    sequence = rng.integers(3, vocabulary, (examples, length)).astype("int32")
    sequence[:, -length // 4 :] = 0  # padding, as short sentences have
    labels = np.concatenate([sequence[:, 1:], np.zeros((examples, 1), "int32")], axis=1)
    if kind[0] == "text":
        source = rng.integers(3, vocabulary, (examples, length)).astype("int32")
        return {"source": source, "target": sequence}, labels
    size = kind[3]
    images = rng.uniform(0, 255, (examples, size, size, 3)).astype("float32")
    return {"image": images, "caption": sequence}, labels


def every_model(settings, quick, counter, deadline):
    """Each family fit for two epochs with XLA: compiles in epoch 2, its examples/s."""

    batch, steps = settings["models_batch"], settings["models_steps"]
    rows = {}
    for name, (build, kind, loss) in model_cases(quick).items():
        if time.perf_counter() > deadline:
            rows[name] = {"compiled": None, "skipped": "the run's time budget was spent"}
            continue
        try:
            keras.utils.set_random_seed(0)
            model = build()
            model.compile(optimizer=keras.optimizers.AdamW(1e-3), loss=loss, jit_compile=True)
            inputs, labels = synthetic_data(kind, batch * steps, np.random.default_rng(0))
            clock = EpochClock(counter)
            model.fit(inputs, labels, batch_size=batch, epochs=2, verbose=0, callbacks=[clock])
        except Exception as error:  # one family failing must not hide the others' figures
            rows[name] = {"compiled": False, "error": f"{type(error).__name__}: {error}"[:2000]}
            log(f"models: {name} failed: {rows[name]['error'][:300]}")
            continue
        first, second = clock.epochs
        rows[name] = {
            "compiled": True,
            "parameters": model.count_params(),
            "batch": batch,
            "steps_per_epoch": steps,
            "first_epoch_s": first["seconds"],
            "compiles_in_first_epoch": first["compiles"],
            "compiles_in_second_epoch": second["compiles"] if counter.seen_any else None,
            "examples_per_second": batch * steps / second["seconds"],
            "final_loss": second["loss"],
            "loss_finite": bool(np.isfinite(second["loss"])),
        }
        log(f"models: {name} {rows[name]['examples_per_second']:.0f} examples/s")
    return {"config": {"batch": batch, "steps_per_epoch": steps, "epochs": 2}, "rows": rows}


class EpochClock(keras.callbacks.Callback):
    """Each epoch's wall time, compile count (from a `CompileCounter`) and loss."""

    def __init__(self, counter):
        super().__init__()
        self.counter, self.epochs = counter, []

    def on_epoch_begin(self, epoch, logs=None):
        self.start, self.compiles = time.perf_counter(), self.counter.count

    def on_epoch_end(self, epoch, logs=None):
        self.epochs.append(
            {
                "seconds": time.perf_counter() - self.start,
                "compiles": self.counter.count - self.compiles,
                "loss": float(logs["loss"]),
            }
        )


# ---------------------------------------------------------------------------
# Long sequences


def _attention_step(kernel, causal=True, window=None):
    """A jitted forward+backward of one attention call; `kernel` names the implementation."""
    import jax
    import jax.numpy as jnp

    import keras_attention as ka

    def loss(q, k, v, cotangent):
        output = ka.ops.dot_product_attention(
            q, k, v, is_causal=causal, implementation=kernel, sliding_window=window
        )
        return jnp.sum(output.astype("float32") * cotangent)

    return jax.jit(jax.value_and_grad(loss, argnums=(0, 1, 2)))


def compiled_temp_gib(step, arguments):
    """The temporary memory XLA plans for `step(*arguments)`, in GiB (None if not reported)."""
    analysis = step.lower(*arguments).compile().memory_analysis()
    if analysis is None:
        return None
    return analysis.temp_size_in_bytes / 2**30


def _long_inputs(length, heads, head_dim, seed):
    import jax
    import jax.numpy as jnp

    keys = jax.random.split(jax.random.key(seed), 4)
    shape = (1, length, heads, head_dim)
    q, k, v = (jax.random.normal(key, shape, jnp.bfloat16) for key in keys[:3])
    return q, k, v, jax.random.normal(keys[3], shape, jnp.float32)


def long_sequences(settings, deadline):
    """Chunked, materialised and fused causal attention at 8k-32k tokens; banded at the longest."""
    from benchmarks.flop_counts import attention_flops
    from benchmarks.flop_counts import banded_attention_flops

    heads, head_dim, window = settings["long_heads"], 64, settings["window"]
    rows, skipped = [], []
    longest = max(settings["long_lengths"])
    cases = [
        (length, kernel, None)
        for length in settings["long_lengths"]
        for kernel in ("auto", "chunked", "xla", "fused")
    ]
    cases += [(longest, "chunked", window)]
    for length, kernel, band in cases:
        name = f"T={length} {('banded ' + str(band)) if band else kernel}"
        if time.perf_counter() > deadline:
            skipped.append({"case": name, "reason": "the run's time budget was spent"})
            continue
        arguments = _long_inputs(length, heads, head_dim, seed=length)
        step = _attention_step(kernel, window=band)
        try:
            memory = compiled_temp_gib(step, arguments)
        except Exception as error:  # XLA refuses plans that do not fit the device
            skipped.append({"case": name, "reason": f"{type(error).__name__}: {str(error)[:300]}"})
            continue
        if memory is not None and memory > settings["memory_limit_gib"]:
            skipped.append({"case": name, "reason": f"needs {memory:.1f} GiB of temporaries"})
            continue
        times = alternating_times(
            {name: lambda step=step, arguments=arguments: step(*arguments)}, 1, settings["repeats"]
        )
        if band:
            flops = banded_attention_flops(1, heads, length, band, head_dim, backward=True)
        else:
            flops = attention_flops(1, heads, length, length, head_dim, causal=True, backward=True)
        rows.append(
            {
                "case": name,
                "length": length,
                "kernel": kernel,
                "window": band,
                "temp_gib": memory,
                "timing": times[name],
                "tflops_per_second": flops / times[name]["median_s"] / 1e12,
            }
        )
        log(f"long_sequences: {name} {1000 * times[name]['median_s']:.1f} ms, {memory} GiB")
    check = _long_agreement(settings["long_lengths"][0], heads, head_dim)
    return {
        "config": {
            "batch": 1,
            "heads": heads,
            "head_dim": head_dim,
            "causal": True,
            "mode": "forward+backward",
            "dtype": "bfloat16",
        },
        "rows": rows,
        "skipped": skipped,
        "agreement": check,
    }


def _long_agreement(length, heads, head_dim):
    """Relative error of the chunked and fused outputs against the materialised one."""
    import jax

    import keras_attention as ka

    q, k, v, _ = _long_inputs(length, heads, head_dim, seed=1)
    outputs = {
        kernel: np.asarray(
            jax.jit(
                lambda q, k, v, kernel=kernel: ka.ops.dot_product_attention(
                    q, k, v, is_causal=True, implementation=kernel
                )
            )(q, k, v).astype("float32")
        )
        for kernel in ("xla", "chunked", "fused")
    }
    return {
        f"{kernel} vs xla": _relative_error(outputs[kernel], outputs["xla"])
        for kernel in ("chunked", "fused")
    }


# ---------------------------------------------------------------------------


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, to check the code")
    parser.add_argument("--only", nargs="+", choices=SECTIONS, default=None)
    parser.add_argument(
        "--budget-s",
        type=float,
        default=480.0,
        help="sections that would start later than this are skipped",
    )
    parser.add_argument("--results-dir", default=None)
    parser.add_argument(
        "--readme-only",
        action="store_true",
        help="measure nothing: rewrite the GPU section of benchmarks/README.md from the JSON",
    )
    return parser.parse_args(argv)


def write_section(directory, name, payload):
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"{name}.json")
    with open(path, "w") as handle:
        json.dump(payload, handle, indent=2, default=float)
    return path


def main(argv=None):
    """Run the sections in order within the budget; returns {section: payload}."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.readme_only:
        update_readme(args.results_dir or RESULTS_DIR)
        return {}
    began = time.perf_counter()
    deadline = began + args.budget_s
    settings = QUICK if args.quick else FULL
    directory = args.results_dir or (
        os.path.join(RESULTS_DIR, "quick") if args.quick else RESULTS_DIR
    )
    keras.config.set_dtype_policy("mixed_bfloat16")
    counter = CompileCounter()
    machine = device_description()
    machine["datasheet_bf16_tflops"] = datasheet_peak_tflops(machine["device_kind"])
    log(f"device: {machine}")
    peaks = {"datasheet_bf16_tflops": machine["datasheet_bf16_tflops"]}
    runners = {
        "peaks": lambda: measure_peaks(settings),
        "vit_b16": lambda: vit_b16(settings, peaks),
        "attention": lambda: attention_layers(settings),
        "decoding": lambda: decoding(settings),
        "models": lambda: every_model(settings, args.quick, counter, deadline),
        "long_sequences": lambda: long_sequences(settings, deadline),
    }
    payloads = {}
    for name in SECTIONS:
        if args.only and name not in args.only and name != "peaks":
            continue
        payload = {"section": name, "quick": args.quick, "machine": machine, "settings": settings}
        if time.perf_counter() > deadline:
            payload["skipped"] = "the run's time budget was spent before this section started"
        else:
            start = time.perf_counter()
            try:
                payload["results"] = runners[name]()
            except Exception as error:  # keep the other sections' figures
                payload["error"] = f"{type(error).__name__}: {error}"[:4000]
                log(f"{name} failed: {payload['error'][:1000]}")
            payload["section_seconds"] = time.perf_counter() - start
        if name == "peaks" and "results" in payload:
            peaks.update(payload["results"])
        payloads[name] = payload
        log(
            f"{name} done ({payload.get('section_seconds', 0):.0f} s): "
            f"{write_section(directory, name, payload)}"
        )
    log(f"all sections: {time.perf_counter() - began:.0f} s")
    return payloads


if __name__ == "__main__":
    main()
