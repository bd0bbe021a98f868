"""Shared helpers of the benchmarks: timing, peak memory, machine, JSON.

Timing protocol (`compare`): every candidate is a zero-argument callable
that runs one step and returns something small (a loss, a norm). Each is
called once to trace/compile (reported as `first_call_s`), then `warmup`
more times, then `repeats` rounds in which the candidates run one after the
other, in forward order on even rounds and reverse order on odd rounds
(A B, B A, ...), so that slow drifts of a shared machine hit all of them
alike. The headline ratio of two candidates is the median of the per-round
ratios, which cancels load that changes between rounds; its quartiles show
the spread.

Peak memory (`peak_memory`) resets TensorFlow's allocator statistics, runs
the candidate once and reads the peak back with
`tf.config.experimental.get_memory_info`. On CPU this counts the buffers of
eager ops, graphs and XLA programs (their temporaries included).
"""

import datetime
import gc
import json
import os
import platform
import statistics
import sys
import time

# The CPU allocator keeps statistics (`peak_memory`) only as a BFC allocator,
# chosen when TensorFlow starts: a process that imported it before keeps its own.
os.environ.setdefault("TF_CPU_ALLOCATOR_USE_BFC", "true")

import tensorflow as tf  # noqa: E402

RESULTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
DEVICES = ("cpu", "gpu")
MIB = 2.0**20
# Set when a quick "gpu" run finds no GPU and runs its configuration on the CPU.
_CPU_STANDS_IN_FOR_GPU = False


def check_device(device):
    """Raise a ValueError unless `device` is "cpu" or "gpu"."""
    if device not in DEVICES:
        raise ValueError(f"`device` must be one of {DEVICES}. Received: device={device!r}")


def configure_device(device, cpu_standin=False):
    """Make TensorFlow compute on `device` ("cpu" or "gpu").

    Call it before any tensor is made: it hides the GPUs for "cpu". For
    "gpu" it sets the Keras policy "mixed_bfloat16" (bf16 compute, float32
    variables) used on accelerators and checks that a GPU is present; without
    one it raises, unless `cpu_standin` lets the CPU run the GPU
    configuration (for a quick check that the commands work) with a message
    saying so.

    Args:
        device: "cpu" or "gpu".
        cpu_standin: for "gpu", run on the CPU when there is no GPU.

    Returns:
        The TensorFlow device name whose memory `peak_memory` reads.
    """
    check_device(device)
    import keras

    if device == "cpu":
        try:
            tf.config.set_visible_devices([], "GPU")
        except RuntimeError:
            pass  # TensorFlow already started; benchmarks place on CPU:0 anyway
        return "CPU:0"
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    if not tf.config.list_physical_devices("GPU"):
        if not cpu_standin:
            raise ValueError(
                "`device` is 'gpu' but TensorFlow sees no GPU. Received: device='gpu' "
                "(a quick run checks the GPU configuration on the CPU instead)"
            )
        global _CPU_STANDS_IN_FOR_GPU
        _CPU_STANDS_IN_FOR_GPU = True
        log(
            "No GPU is visible: the GPU configuration (bf16 mixed precision, ViT-B/16 cases) "
            "runs on the CPU to check that every command works. These are not GPU figures."
        )
        return "CPU:0"
    return "GPU:0"


def memory_device(device):
    """The TensorFlow device name ("CPU:0" or "GPU:0") of `device`."""
    check_device(device)
    return "GPU:0" if device == "gpu" and not _CPU_STANDS_IN_FOR_GPU else "CPU:0"


def tf_device(device):
    """A `tf.device` context placing ops on `device`."""
    return tf.device("/" + memory_device(device))


def agreement_tolerance():
    """Largest difference allowed between ours and theirs: float32 or 16-bit compute."""
    import keras

    return 1e-4 if keras.config.dtype_policy().compute_dtype == "float32" else 5e-2


def block(result):
    """Wait until `result` (a nest of tensors) is computed; returns it.

    Reading a value back forces the device to finish; keep results small.
    """
    for leaf in tf.nest.flatten(result):
        if hasattr(leaf, "numpy"):
            leaf.numpy()
    return result


def _run_once(fn):
    """(wall seconds, process CPU seconds) of one call."""
    start, start_cpu = time.perf_counter(), time.process_time()
    block(fn())
    return time.perf_counter() - start, time.process_time() - start_cpu


def compare(candidates, warmup=2, repeats=10, budget_s=240.0, min_repeats=3):
    """Time several zero-argument callables alternately, in one process.

    Args:
        candidates: dict label -> callable running one step.
        warmup: untimed calls of each after the first (tracing) one.
        repeats: timed rounds; each round runs every candidate once,
            alternating the order between rounds.
        budget_s: rough wall-time budget of warm-up and rounds together:
            when one round (measured on the first warm-up) would not fit
            `repeats` times, fewer rounds (at least `min_repeats`) run and
            the remaining warm-up is skipped; when the first calls alone
            take a third of it, `min_repeats` rounds run without warm-up.
        min_repeats: the fewest rounds, whatever the budget.

    Returns:
        `Samples`: dict label -> list of seconds, round by round, with the
        first-call (tracing and compiling) times in `first_calls`.
    """
    labels = list(candidates)
    first_calls = {label: _run_once(candidates[label])[0] for label in labels}
    if sum(first_calls.values()) > budget_s / 3:
        # Calls this slow are past any warm-up effect: go straight to the rounds.
        warmup, repeats = 0, min_repeats
    for warmup_index in range(warmup):
        round_seconds = sum(_run_once(candidates[label])[0] for label in labels)
        if warmup_index == 0 and round_seconds * (repeats + warmup - 1) > budget_s:
            repeats = max(min_repeats, min(repeats, int(budget_s // max(round_seconds, 1e-9))))
            break
    samples = {label: [] for label in labels}
    cpu_samples = {label: [] for label in labels}
    gc.collect()
    gc_was_enabled = gc.isenabled()
    gc.disable()  # a collection inside a timed call is noise
    try:
        for round_index in range(repeats):
            order = labels if round_index % 2 == 0 else labels[::-1]
            for label in order:
                wall, cpu = _run_once(candidates[label])
                samples[label].append(wall)
                cpu_samples[label].append(cpu)
    finally:
        if gc_was_enabled:
            gc.enable()
    return Samples(samples, cpu_samples, first_calls)


class Samples(dict):
    """Per-candidate wall-clock samples (label -> seconds per round).

    `cpu` holds the process CPU seconds of the same calls (all threads),
    less sensitive than wall time to other processes taking the cores;
    `first_calls` the wall time of each first (tracing, compiling) call.
    """

    def __init__(self, samples, cpu_samples, first_calls):
        super().__init__(samples)
        self.cpu = cpu_samples
        self.first_calls = first_calls

    def summary(self, label):
        """Wall-time statistics of one candidate, with its median CPU time."""
        summary = summarize(self[label], self.first_calls.get(label))
        summary["cpu_median_s"] = statistics.median(self.cpu[label])
        return summary

    def ratio(self, numerator, denominator):
        """Median and quartiles of the per-round wall-time ratio, and the CPU-time ratio."""
        ratio = paired_ratio(self[numerator], self[denominator])
        cpu = paired_ratio(self.cpu[numerator], self.cpu[denominator])
        ratio["cpu_ratio"] = cpu["ratio"]
        return ratio


def _quartiles(values):
    if len(values) == 1:
        return values[0], values[0], values[0]
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q2, q3


def summarize(seconds, first_call_s=None):
    """Statistics of a list of durations in seconds."""
    q1, median, q3 = _quartiles(list(seconds))
    summary = {
        "median_s": median,
        "q25_s": q1,
        "q75_s": q3,
        "min_s": min(seconds),
        "max_s": max(seconds),
        "spread": (q3 - q1) / median if median > 0 else 0.0,
        "repeats": len(seconds),
    }
    if first_call_s is not None:
        summary["first_call_s"] = first_call_s
    return summary


def paired_ratio(numerator, denominator):
    """Per-round ratios of two equally long sample lists: median and quartiles."""
    ratios = [a / b for a, b in zip(numerator, denominator)]
    q1, median, q3 = _quartiles(ratios)
    return {
        "ratio": median,
        "ratio_q25": q1,
        "ratio_q75": q3,
        "ratio_of_medians": statistics.median(numerator) / statistics.median(denominator),
    }


def peak_memory(fn, device="cpu"):
    """Peak allocator memory while `fn()` runs once (after one warm-up call).

    Args:
        fn: zero-argument callable.
        device: "cpu" or "gpu".

    Returns:
        dict with `peak_mib` (the allocator's peak, live inputs and weights
        included) and `extra_mib` (the peak above what was live before the
        call: what the computation itself needed); both None where the
        allocator keeps no statistics (a CPU allocator chosen before this
        module set `TF_CPU_ALLOCATOR_USE_BFC`).
    """
    name = memory_device(device)
    block(fn())
    gc.collect()
    try:
        tf.config.experimental.reset_memory_stats(name)
    except ValueError:  # "Cannot reset memory stats": not a BFC allocator
        return {"peak_mib": None, "extra_mib": None}
    before = tf.config.experimental.get_memory_info(name)["current"]
    block(fn())
    peak = tf.config.experimental.get_memory_info(name)["peak"]
    return {"peak_mib": peak / MIB, "extra_mib": (peak - before) / MIB}


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_total_gib():
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemTotal"):
                    return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None


def machine_description(device="cpu"):
    """What the numbers were measured on: hardware, load, library versions."""
    import keras
    import keras_hub
    import numpy

    try:
        usable_cores = len(os.sched_getaffinity(0))
    except AttributeError:
        usable_cores = os.cpu_count()
    description = {
        "device": device,
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "usable_cores": usable_cores,
        "memory_gib": _memory_total_gib(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "tensorflow": tf.__version__,
        "keras": keras.__version__,
        "keras_hub": keras_hub.__version__,
        "numpy": numpy.__version__,
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
    }
    if device == "gpu" and _CPU_STANDS_IN_FOR_GPU:
        description["device"] = "cpu standing in for gpu (not GPU figures)"
    elif device == "gpu":
        gpus = tf.config.list_physical_devices("GPU")
        description["gpus"] = [
            tf.config.experimental.get_device_details(gpu).get("device_name", gpu.name)
            for gpu in gpus
        ]
    return description


def case_result(case, config, samples=None, ratios=None, memory=None, **extra):
    """One row of a benchmark: its configuration, timings, ratios, memory.

    Args:
        case: short human-readable name of the configuration.
        config: dict of the configuration's parameters.
        samples: `Samples` from `compare`, or None.
        ratios: dict name -> paired ratio dict (from `Samples.ratio`) or number.
        memory: dict label -> `peak_memory` dict.
        **extra: more fields to keep.

    Returns:
        a JSON-ready dict with `case`, `config`, `timings`, `ratios`
        (name -> number), `ratio_spread` (name -> [q25, q75]),
        `cpu_ratios` (name -> ratio of process CPU times) and `memory`.
    """
    result = {
        "case": case,
        "config": config,
        "timings": {},
        "ratios": {},
        "ratio_spread": {},
        "cpu_ratios": {},
    }
    if samples is not None:
        result["timings"] = {label: samples.summary(label) for label in samples}
    for name, value in (ratios or {}).items():
        if isinstance(value, dict):
            result["ratios"][name] = value["ratio"]
            result["ratio_spread"][name] = [value["ratio_q25"], value["ratio_q75"]]
            if "cpu_ratio" in value:
                result["cpu_ratios"][name] = value["cpu_ratio"]
        else:
            result["ratios"][name] = value
    if memory:
        result["memory"] = memory
    result.update(extra)
    return result


def make_payload(name, title, results, quick, device, settings, skipped=(), notes=()):
    """The JSON document of one benchmark module."""
    return {
        "benchmark": name,
        "title": title,
        "quick": bool(quick),
        "machine": machine_description(device),
        "settings": settings,
        "results": list(results),
        "skipped": list(skipped),
        "notes": list(notes),
    }


def results_directory(results_dir, quick):
    """Where a run's JSON goes: `results_dir` if given, else `results/` (`results/quick/` quick)."""
    if results_dir:
        return results_dir
    return os.path.join(RESULTS_DIR, "quick") if quick else RESULTS_DIR


def write_json(payload, directory=RESULTS_DIR):
    """Write `payload` to `<directory>/<payload["benchmark"]>.json`; returns the path."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, payload["benchmark"] + ".json")
    with open(path, "w") as handle:
        json.dump(payload, handle, indent=1, sort_keys=False, default=_json_default)
        handle.write("\n")
    return path


def _json_default(value):
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"cannot write {type(value).__name__} to JSON")


def set_tensorflow_threads(threads):
    """Gives TensorFlow `threads` threads (intra- and inter-op) if it has not started yet.

    Returns:
        the intra-op threads in force: `threads`, or what an earlier start
        of TensorFlow in this process fixed (0: TensorFlow's own choice).
    """
    import tensorflow as tf

    try:
        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(threads)
    except RuntimeError:  # TensorFlow ran already in this process: its setting stays
        pass
    return tf.config.threading.get_intra_op_parallelism_threads()


def log(message):
    """Progress line on stderr (stdout stays free for results)."""
    print(message, file=sys.stderr, flush=True)
