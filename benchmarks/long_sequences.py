"""Long sequences: chunked against materialised attention, time and peak memory.

Causal self-attention of one sequence (batch 1, 4 heads, head_dim 64) at
2k, 4k, 8k and 16k tokens, compiled with XLA, forward only and forward plus
backward, with three kernels:

- "chunked": `ka.ops.dot_product_attention(..., implementation="chunked")`,
- "xla": the same function with `implementation="xla"` (materialised scores),
- "keras": `keras.ops.dot_product_attention` (materialised scores).

Banded (sliding-window) attention, window 512 and causal, at 8k and 16k
tokens, compares three more calls:

- "banded": `ka.ops.dot_product_attention(..., sliding_window=512,
  implementation="chunked")`, which visits only the tiles of the band,
- "chunked": the full causal chunked kernel, as above,
- "keras": `keras.ops.dot_product_attention` with the same band as a mask
  (`ka.ops.sliding_window_mask`), materialised scores.

Execution rows time the chunked and the materialised kernel ("xla") on one
head of 64 at 8k tokens, forward and backward (gradient by
`tf.GradientTape`), three ways: called eagerly as the README's tour does,
inside `tf.function`, and inside `tf.function(jit_compile=True)`.

Peak memory is the allocator's peak above what was live before the call
(`timing.peak_memory`, `extra_mib`). Configurations whose estimated memory
exceeds the budget (16 GiB, or half the memory available when the run
starts if that is less) are skipped and listed as such. The chunked output
(and the banded one) is checked against keras' before timing.
"""

import numpy as np

from benchmarks import timing

TITLE = (
    "Long sequences: chunked vs materialised attention (causal, XLA; eager and tf.function rows)"
)
KERNELS = ("chunked", "xla", "keras")
BANDED_KERNELS = ("banded", "chunked", "keras")
FULL = {
    "batch": 1,
    "heads": 4,
    "head_dim": 64,
    "lengths": (2048, 4096, 8192, 16384),
    "modes": ("forward", "forward+backward"),
    "warmup": 1,
    "repeats": 5,
    "memory_budget_gib": 16.0,
    "banded_lengths": (8192, 16384),
    "window": 512,
    "execution_length": 8192,
    "execution_heads": 1,
    "executions": ("eager", "tf.function", "xla"),
}
QUICK = {
    "batch": 1,
    "heads": 2,
    "head_dim": 8,
    "lengths": (64,),
    "modes": ("forward+backward",),
    "warmup": 0,
    "repeats": 2,
    "memory_budget_gib": 16.0,
    "banded_lengths": (64,),
    "window": 8,
    "execution_length": 64,
    "execution_heads": 1,
    "executions": ("eager", "tf.function", "xla"),
}
EXECUTION_NOTE = (
    "execution rows: one head, the chunked kernel against the materialised one ('xla' "
    "column) called eagerly, in tf.function and in tf.function(jit_compile=True); "
    "target: time chunked/xla <= 1 in each."
)
# Live (B, H, T, T) float32 buffers of the materialised kernels at their peak
# (measured at 4k and 8k tokens, rounded up).
_SCORE_BUFFERS = {
    ("xla", "forward"): 2.5,
    ("xla", "forward+backward"): 3.5,
    ("keras", "forward"): 3.0,
    ("keras", "forward+backward"): 4.5,
}


def _available_gib():
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable"):
                    return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return None


def memory_budget_gib(settings, device):
    """The memory a configuration may take: the setting, less if the machine has less free."""
    budget = settings["memory_budget_gib"]
    if device == "cpu":
        available = _available_gib()
        if available is not None:
            budget = min(budget, 0.5 * available)
    return budget


def estimated_gib(kernel, mode, batch, heads, length, head_dim):
    """A rough upper bound of the memory one call takes, to skip what cannot fit."""
    vectors = 8 * batch * length * heads * head_dim * 4  # q, k, v, output and gradients
    if kernel in ("chunked", "banded"):
        return vectors / 2**30
    scores = batch * heads * length * length * 4
    return (_SCORE_BUFFERS[kernel, mode] * scores + vectors) / 2**30


def _attention(kernel, window=None):
    """`kernel`'s causal attention; with `window`, banded (keras: the band as a mask)."""
    import keras

    from keras_attention.ops.attention import dot_product_attention
    from keras_attention.ops.masks import sliding_window_mask

    if kernel == "keras" and window is not None:

        def keras_banded(q, k, v):
            band = sliding_window_mask(q.shape[1], k.shape[1], window=window, causal=True)
            return keras.ops.dot_product_attention(q, k, v, mask=band[None, None])

        return keras_banded
    if kernel == "keras":
        return lambda q, k, v: keras.ops.dot_product_attention(q, k, v, is_causal=True)
    if kernel == "banded":
        return lambda q, k, v: dot_product_attention(
            q, k, v, is_causal=True, sliding_window=window, implementation="chunked"
        )
    return lambda q, k, v: dot_product_attention(q, k, v, is_causal=True, implementation=kernel)


def _compiled(kernel, mode, cotangent, window=None):
    """An XLA-compiled forward (or forward+backward) returning a scalar."""
    import tensorflow as tf

    attention = _attention(kernel, window)

    def forward(q, k, v):
        return tf.reduce_sum(attention(q, k, v) * cotangent)

    def forward_backward(q, k, v):
        with tf.GradientTape() as tape:
            tape.watch([q, k, v])
            loss = forward(q, k, v)
        gradients = tape.gradient(loss, [q, k, v])
        return loss + tf.add_n([tf.reduce_sum(g) for g in gradients]) * 0.0

    return tf.function(forward if mode == "forward" else forward_backward, jit_compile=True)


def _forward_backward(kernel, execution, cotangent):
    """Forward and backward of `kernel`, run eagerly or as a (compiled) `tf.function`."""
    import tensorflow as tf

    attention = _attention(kernel)

    def forward_backward(q, k, v):
        with tf.GradientTape() as tape:
            tape.watch([q, k, v])
            loss = tf.reduce_sum(attention(q, k, v) * cotangent)
        gradients = tape.gradient(loss, [q, k, v])
        return loss + tf.add_n([tf.reduce_sum(g) for g in gradients]) * 0.0

    if execution == "eager":
        return forward_backward
    return tf.function(forward_backward, jit_compile=execution == "xla")


def execution_rows(settings, device):
    """Chunked against materialised attention, eager, in `tf.function` and under XLA.

    Returns the result rows: forward+backward of causal attention at
    `execution_length` tokens, `execution_heads` heads of `head_dim`.
    """
    import tensorflow as tf

    length, heads = settings["execution_length"], settings["execution_heads"]
    batch, head_dim = settings["batch"], settings["head_dim"]
    rng = np.random.default_rng(1)
    shape = (batch, length, heads, head_dim)
    results = []
    with timing.tf_device(device):
        q, k, v, cotangent = (
            tf.constant(rng.normal(size=shape).astype("float32")) for _ in range(4)
        )
        for execution in settings["executions"]:
            case = f"{execution} T={length} forward+backward, {heads} head"
            timing.log(f"long_sequences: {case}")
            steps = {
                kernel: _forward_backward(kernel, execution, cotangent)
                for kernel in ("chunked", "xla")
            }
            calls = {kernel: (lambda f=steps[kernel]: f(q, k, v)) for kernel in steps}
            memory = {kernel: timing.peak_memory(call, device) for kernel, call in calls.items()}
            samples = timing.compare(calls, warmup=settings["warmup"], repeats=settings["repeats"])
            config = {
                "batch": batch,
                "heads": heads,
                "head_dim": head_dim,
                "length": length,
                "mode": "forward+backward",
                "is_causal": True,
                "execution": execution,
                "jit_compile": execution == "xla",
            }
            ratios = {"time chunked/xla": samples.ratio("chunked", "xla")}
            extras = (memory["chunked"]["extra_mib"], memory["xla"]["extra_mib"])
            if None not in extras and min(extras) > 0:
                ratios["memory chunked/xla"] = extras[0] / extras[1]
            results.append(timing.case_result(case, config, samples, ratios, memory))
    return results


def _fitting(kernels, case, mode, sizes, budget, skipped):
    """The kernels whose estimated memory fits `budget`; the others go to `skipped`."""
    batch, heads, length, head_dim = sizes
    fitting = []
    for kernel in kernels:
        need = estimated_gib(kernel, mode, batch, heads, length, head_dim)
        if need > budget:
            skipped.append(
                {
                    "case": f"{case} {kernel}",
                    "reason": f"needs about {need:.1f} GiB, budget {budget:.1f} GiB",
                }
            )
        else:
            fitting.append(kernel)
    return fitting


def _measure(case, kernels, mode, inputs, settings, device, window=None, check=True):
    """Time and peak memory of `kernels` (the first one leads the ratios) on one case.

    Returns (samples, ratios, memory, error): `error` is the largest output
    difference between the lead kernel and keras when `check` and keras runs.
    """
    q, k, v, cotangent = inputs
    lead = kernels[0]
    timing.log(f"long_sequences: {case} ({', '.join(kernels)})")
    steps = {kernel: _compiled(kernel, mode, cotangent, window) for kernel in kernels}
    memory = {
        kernel: timing.peak_memory(lambda f=steps[kernel], a=(q, k, v): f(*a), device)
        for kernel in kernels
    }
    error = None
    if check and "keras" in kernels:
        expected = np.asarray(_attention("keras", window)(q, k, v))
        received = np.asarray(_attention(lead, window)(q, k, v))
        error = float(np.max(np.abs(expected - received)))
        if error > 1e-4:
            raise RuntimeError(f"{lead} and keras attention differ by {error}")
    samples = timing.compare(
        {kernel: (lambda f=steps[kernel], a=(q, k, v): f(*a)) for kernel in kernels},
        warmup=settings["warmup"],
        repeats=settings["repeats"],
    )
    ratios = {}
    for other in kernels[1:]:
        ratios[f"time {lead}/{other}"] = samples.ratio(lead, other)
        extras = (memory[other]["extra_mib"], memory[lead]["extra_mib"])
        if None not in extras and min(extras) > 0:
            ratios[f"memory {lead}/{other}"] = (
                memory[lead]["extra_mib"] / memory[other]["extra_mib"]
            )
    return samples, ratios, memory, error


def run(quick=False, device="cpu"):
    """Times and measures every configuration (`quick`: tiny sizes) on "cpu" or "gpu".

    Returns the JSON payload of results/long_sequences.json (see benchmarks/README.md).
    """
    import tensorflow as tf

    settings = QUICK if quick else FULL
    batch, heads, head_dim = settings["batch"], settings["heads"], settings["head_dim"]
    budget = memory_budget_gib(settings, device)
    results, skipped = [], []
    rng = np.random.default_rng(0)
    window = settings["window"]
    banded = [(length, window) for length in settings["banded_lengths"]]
    with timing.tf_device(device):
        for length, band in [(length, None) for length in settings["lengths"]] + banded:
            shape = (batch, length, heads, head_dim)
            inputs = tuple(tf.constant(rng.normal(size=shape).astype("float32")) for _ in range(4))
            error = None
            for mode in settings["modes"]:
                case = f"T={length} {mode}"
                wanted = KERNELS
                if band is not None:
                    case = f"banded w={band} T={length} {mode}"
                    wanted = BANDED_KERNELS
                sizes = (batch, heads, length, head_dim)
                kernels = _fitting(wanted, case, mode, sizes, budget, skipped)
                if wanted[0] not in kernels:
                    continue
                samples, ratios, memory, checked_error = _measure(
                    case, kernels, mode, inputs, settings, device, band, check=error is None
                )
                error = error if checked_error is None else checked_error
                results.append(
                    timing.case_result(
                        case,
                        {
                            "batch": batch,
                            "heads": heads,
                            "head_dim": head_dim,
                            "length": length,
                            "mode": mode,
                            "is_causal": True,
                            "sliding_window": band,
                            "jit_compile": True,
                        },
                        samples,
                        ratios=ratios,
                        memory=memory,
                        max_abs_output_difference=error,
                        peer=None if len(kernels) == 1 else kernels[1:],
                    )
                )
    results.extend(execution_rows(settings, device))
    return timing.make_payload(
        "long_sequences",
        TITLE,
        results,
        quick=quick,
        device=device,
        settings={**settings, "memory_budget_gib_used": budget},
        skipped=skipped,
        notes=[
            "memory ratios compare the extra peak memory of one call (extra_mib); "
            "time ratios are medians of per-round ratios.",
            "targets at 8k tokens: memory chunked/xla <= 0.25, time chunked/xla <= 1.5.",
            f"banded rows: causal sliding window of {window} keys; 'chunked' is the full "
            "causal chunked kernel, 'keras' keras.ops.dot_product_attention with the band "
            "as a mask; target at 16k tokens: time banded/chunked < 1/8.",
            EXECUTION_NOTE,
        ],
    )


def update_execution_rows(device="cpu", directory=timing.RESULTS_DIR):
    """Measure the execution rows again and put them into results/long_sequences.json.

    The other rows stay as they were measured; each new row carries the
    machine description of its own run. Returns the path written.
    """
    import json
    import os

    path = os.path.join(directory, "long_sequences.json")
    with open(path) as handle:
        payload = json.load(handle)
    machine = timing.machine_description(device)
    rows = [{**row, "machine": machine} for row in execution_rows(FULL, device)]
    payload["results"] = [r for r in payload["results"] if "execution" not in r["config"]] + rows
    payload["title"] = TITLE
    dated = (
        f"execution rows measured {machine['date_utc']} UTC, load average "
        f"{machine['load_average']} (the other rows: the date above)."
    )
    notes = [n for n in payload["notes"] if not n.startswith("execution rows")]
    payload["notes"] = notes + [EXECUTION_NOTE, dated]
    return timing.write_json(payload, directory)


if __name__ == "__main__":
    # python -m benchmarks.long_sequences: the execution rows only (the rest: run_all).
    timing.configure_device("cpu")
    timing.log(f"wrote {update_execution_rows()}")
