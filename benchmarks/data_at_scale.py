"""Data at scale: time to the first training step, peak memory, and the input pipeline's rate.

Users bring COCO, ImageNet-style class folders and WMT-sized parallel text,
10^5 to 10^7 items. This benchmark writes such data sets in the layouts they
are downloaded in (`benchmarks/scale_datasets.py`, under
`/work/scale_data/<layout>_<size>`, reused when already there) and measures:

1. **Time to the first step and peak memory**, black-box: each example
   script runs as a user runs it, in a fresh process with a fresh
   `--output-dir` (deleted after), with `--epochs 2 --quiet` (Keras prints
   "Epoch 1/N" only when N > 1). Recorded: seconds from launch to the line
   Keras prints when the first epoch starts ("Epoch 1/") and, where the
   script prints it, to the "first training step" line; then the process
   is stopped (SIGTERM, SIGKILL after 10 s). Peak memory is the process
   tree's resident memory, polled every 0.2 s from /proc (the sum over the
   tree, or the largest single VmHWM if higher). A run that reaches no
   marker within the timeout (15 minutes) is recorded as not reached.
   Each script's time and memory are projected to the full-size data set
   linearly in items from the two largest rungs that reached the marker.
2. **Input pipeline against the model**: for each example model, the
   training batches the script would give `fit` (built through the task API
   as the script builds them: the functions at the top of this module) are
   iterated after a warm-up (examples/s delivered); then the model, compiled
   as the script compiles it, trains on one fixed batch of the same shape
   (examples/s consumed, median step after compilation). Target: delivered
   / consumed >= 2. Each model runs in a process of its own.

    python -m benchmarks.data_at_scale                     # the whole ladder
    python -m benchmarks.data_at_scale --sizes imagenet=2000,20000 --scripts train_vit
    python -m benchmarks.data_at_scale --before ...        # keep this run as "before"
    python -m benchmarks.data_at_scale --generate-only     # write the data sets, time nothing
    python -m benchmarks.data_at_scale --readme-only       # the README table from the JSON
    python -m benchmarks.data_at_scale --quick             # tens of items, JSON to results/quick/

JSON: `benchmarks/results/data_at_scale.json`; the table goes between the
`data-at-scale` markers of benchmarks/README.md.
"""

import argparse
import collections
import contextlib
import datetime
import importlib.util
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from benchmarks import scale_datasets  # noqa: E402

# ---------------------------------------------------------------------------
# Every call into keras_attention.tasks is in the three functions below: when
# the task API changes, only they change. `TASK_API` names what they call.
# ---------------------------------------------------------------------------

TASK_API = {
    "vit": [
        "image_classification.recipe_from_flags.parse_vit_arguments",
        "training_run.TrainingRun",
        "image_classification.training_data.prepare_vit_data",
        "image_classification.model_from_flags.image_classifier_from_arguments",
        "image_classification.model_from_flags.compile_vision_transformer",
    ],
    "captioner": [
        "captioning.flags.with_captioner_defaults",
        "training_run.TrainingRun",
        "captioning.training_data.load_caption_splits",
        "captioning.training_data.prepare_caption_data",
        "captioning.model_from_flags.captioner_from_arguments",
    ],
    "translator": [
        "translation.flags.parse_translation_arguments",
        "training_run.TrainingRun",
        "translation.training_data.load_translation_splits",
        "translation.training_data.prepare_translation_data",
        "translation.model_from_flags.translator_from_arguments",
        "translation.model_from_flags.compile_translator",
    ],
}


def vit_training(argv):
    """`(training batches, compiled model)` of `examples/train_vit.py` run with `argv`."""
    from keras_attention.tasks.image_classification import model_from_flags
    from keras_attention.tasks.image_classification import recipe_from_flags
    from keras_attention.tasks.image_classification import training_data
    from keras_attention.tasks.training_run import TrainingRun

    args = recipe_from_flags.parse_vit_arguments(argv, _example("train_vit").build_parser())
    run = TrainingRun(args)
    data = training_data.prepare_vit_data(args)
    with run.strategy.scope():
        model = model_from_flags.image_classifier_from_arguments(
            args, data.num_classes, data.class_names, data.image_shape
        )
        steps = _schedule_steps(data.train)
        model_from_flags.compile_vision_transformer(model, args, steps, run.jit_compile)
    return data.train, model


def captioner_training(argv):
    """`(training batches, compiled model)` of `examples/train_captioning.py` with `argv`."""
    from keras_attention.tasks.captioning import flags
    from keras_attention.tasks.captioning import model_from_flags
    from keras_attention.tasks.captioning import training_data
    from keras_attention.tasks.training_run import TrainingRun

    parser = _example("train_captioning").build_parser()
    args = flags.with_captioner_defaults(parser.parse_args(argv))
    run = TrainingRun(args)
    splits = training_data.load_caption_splits(args)
    data = training_data.prepare_caption_data(splits, args)
    with run.strategy.scope():
        model = model_from_flags.captioner_from_arguments(
            args, data.encoder.vocabulary_size, data.max_length
        )
    return data.train, model


def translator_training(argv):
    """`(training batches, compiled model)` of `examples/train_nmt.py` run with `argv`."""
    from keras_attention.tasks.training_run import TrainingRun
    from keras_attention.tasks.translation import flags
    from keras_attention.tasks.translation import model_from_flags
    from keras_attention.tasks.translation import training_data

    args = flags.parse_translation_arguments(argv, _example("train_nmt").build_parser())
    run = TrainingRun(args)
    splits = training_data.load_translation_splits(args)
    data = training_data.prepare_translation_data(splits, args)
    sizes = (data.source_encoder.vocabulary_size, data.target_encoder.vocabulary_size)
    with run.strategy.scope():
        model = model_from_flags.translator_from_arguments(args, *sizes)
        steps = _schedule_steps(data.train)
        model_from_flags.compile_translator(model, args, steps, run.jit_compile)
    return data.train, model


# ---------------------------------------------------------------------------

# The source tree whose scripts and package are measured: this checkout, or a
# commit's files extracted by `--commit` (see `code_of_commit`).
CODE = {"root": ROOT}
RESULTS_DIR = os.path.join(ROOT, "benchmarks", "results")
README = os.path.join(ROOT, "benchmarks", "README.md")
BEGIN, END = "<!-- data-at-scale:begin -->", "<!-- data-at-scale:end -->"
NAME = "data_at_scale"
TITLE = "Data at scale: time to the first training step, peak memory, pipeline rate"
GIB = 2.0**30
MIB = 2.0**20

EPOCH_MARKER = "Epoch 1/"
FIRST_STEP_MARKER = "first training step"
RESULT_PREFIX = "DATA_AT_SCALE_RESULT "

# script name -> (example file, layout, flags besides --dataset)
SCRIPTS = {
    "train_vit": ("train_vit.py", "imagenet", []),
    "train_captioning": ("train_captioning.py", "coco", []),
    "train_nmt_parallel": (
        "train_nmt.py",
        "parallel",
        ["--source-lang", "en", "--target-lang", "de"],
    ),
    "train_nmt_tsv": ("train_nmt.py", "tsv", []),
}
# model -> (layout, builder name, flags besides --dataset)
PIPELINE_MODELS = {
    "vit": ("imagenet", "vit_training", []),
    "show_attend_tell": ("coco", "captioner_training", ["--model", "show_attend_tell"]),
    "transformer_captioner": ("coco", "captioner_training", ["--model", "transformer"]),
    "transformer_translator": (
        "parallel",
        "translator_training",
        ["--model", "transformer", "--source-lang", "en", "--target-lang", "de"],
    ),
    "rnn_translator": (
        "parallel",
        "translator_training",
        ["--model", "rnn", "--source-lang", "en", "--target-lang", "de"],
    ),
}
LADDER = {
    "imagenet": [2_000, 20_000, 100_000],
    "coco": [1_000, 10_000, 100_000],
    "parallel": [100_000, 1_000_000, 4_500_000],
    "tsv": [100_000, 1_000_000, 4_500_000],
}
QUICK_LADDER = {"imagenet": [40, 80], "coco": [20, 40], "parallel": [200, 400], "tsv": [200, 400]}
PIPELINE_SIZES = {"imagenet": 20_000, "coco": 10_000, "parallel": 100_000}
QUICK_PIPELINE_SIZES = {"imagenet": 80, "coco": 40, "parallel": 400}
# The full-size data sets, in the items a rung counts: (name, items).
FULL_SIZE = {
    "imagenet": ("ImageNet-1k: 1,281,167 train + 50,000 val images", 1_331_167),
    "coco": ("COCO 2014: 82,783 train + 40,504 val images", 123_287),
    "parallel": ("WMT14 en-de: 4.5M training pairs", 4_500_000),
    "tsv": ("WMT14 en-de: 4.5M pairs", 4_500_000),
}
TARGET_SECONDS = {"imagenet": 120.0, "coco": 60.0, "parallel": 180.0, "tsv": 180.0}
TARGET_PEAK_GIB = 4.0
TARGET_PIPELINE_RATIO = 2.0


def _example(name):
    """The example script `examples/<name>.py` of the measured code, as a module."""
    spec = importlib.util.spec_from_file_location(
        f"example_{name}", os.path.join(CODE["root"], "examples", f"{name}.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _schedule_steps(batches):
    """Steps per epoch for the learning-rate schedule: the batches' cardinality if known.

    The scripts count an epoch when its length is unknown; that pass over the
    data does not change the step's speed, so a stand-in length is used here.
    """
    cardinality = int(batches.cardinality())
    return cardinality if cardinality > 0 else 1000


def log(message):
    """A progress line on stderr."""
    print(message, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# Part 1: time to the first step and peak memory of a script, black-box.
# ---------------------------------------------------------------------------


def _read_status(pid):
    """`(VmRSS, VmHWM)` of a process in bytes, or None once it has gone."""
    values = {}
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    key, amount = line.split(":", 1)
                    values[key] = int(amount.split()[0]) * 1024
    except OSError:
        return None
    return values.get("VmRSS", 0), values.get("VmHWM", 0)


def process_tree(pid):
    """`pid` and its descendants, from the parent ids in /proc/*/stat.

    >>> os.getpid() in process_tree(os.getpid())
    True
    """
    children = collections.defaultdict(list)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                stat = handle.read()
        except OSError:
            continue
        # The name in parentheses may hold spaces; the parent id follows it.
        fields = stat.rsplit(")", 1)[-1].split()
        children[int(fields[1])].append(int(entry))
    tree, pending = [], [pid]
    while pending:
        current = pending.pop()
        tree.append(current)
        pending.extend(children.get(current, ()))
    return tree


class TreeMemory:
    """The peak resident memory of a process and its descendants, sampled on `sample()`.

    `peak_bytes` is the larger of the highest sampled sum over the tree and
    the highest single VmHWM (which also sees peaks between samples).

    >>> memory = TreeMemory(os.getpid())
    >>> memory.sample()
    >>> memory.peak_bytes > 0
    True
    """

    def __init__(self, pid):
        self.pid = pid
        self.peak_sum = 0
        self.peak_single_hwm = 0
        self.largest_tree = 1

    def sample(self):
        total = 0
        pids = process_tree(self.pid)
        self.largest_tree = max(self.largest_tree, len(pids))
        for pid in pids:
            status = _read_status(pid)
            if status is not None:
                total += status[0]
                self.peak_single_hwm = max(self.peak_single_hwm, status[1])
        self.peak_sum = max(self.peak_sum, total)

    @property
    def peak_bytes(self):
        return max(self.peak_sum, self.peak_single_hwm)


def _stop(process, grace_s=10.0):
    """SIGTERM to the process group, SIGKILL after `grace_s`; returns the exit code."""
    if process.poll() is not None:
        return process.returncode
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        return process.wait(grace_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        return process.wait()


# Lines left out of a row's output: TensorFlow's start-up logs, the model's summary table.
_NOISE = ("I0000", "E0000", "W0000", "WARNING: All log", "To enable the following", *"┃┡│├└┏━")


def watch_until_marker(command, markers, stop_marker, timeout_s, poll_s=0.2, cwd=ROOT, env=None):
    """Runs `command`, timing the first line containing each marker, until `stop_marker`.

    Args:
        command: the argv list.
        markers: dict name -> text looked for in each output line.
        stop_marker: the name in `markers` whose line ends the run.
        timeout_s: the most seconds to wait for it.
        poll_s: seconds between memory samples.
        cwd, env: the process's folder and environment.

    Returns:
        a dict: `seconds` (name -> seconds from launch, or None), `reached`
        (the stop marker's line came), `timed_out`, `exit_code` (None when
        it was stopped by us), `peak_rss_bytes`, `processes` (the most in
        the tree at once), `wall_s` and `output` (the first and last 30
        lines printed, with their seconds, without TensorFlow's start-up
        logs and the model's summary table).

    Example:

    >>> import sys
    >>> watched = watch_until_marker(
    ...     [sys.executable, "-c", "print('ready'); import time; time.sleep(30)"],
    ...     {"ready": "ready"}, "ready", timeout_s=20)
    >>> watched["reached"], watched["seconds"]["ready"] < 20, watched["peak_rss_bytes"] > 0
    (True, True, True)
    """
    start = time.monotonic()
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        errors="replace",
        start_new_session=True,  # its own group: stopping it stops its children too
    )
    seen = {}
    kept = []  # the first lines worth keeping: what was read, the choices made
    tail = collections.deque(maxlen=30)
    marker_seen = threading.Event()

    def read():
        for line in process.stdout:
            now = time.monotonic() - start
            for name, text in markers.items():
                if name not in seen and text in line:
                    seen[name] = now
                    if name == stop_marker:
                        marker_seen.set()
            line = line.rstrip("\n")[:400]
            if line.strip() and not line.startswith(_NOISE):
                (kept if len(kept) < 30 else tail).append(f"{now:7.1f} s  {line}")

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    memory = TreeMemory(process.pid)
    timed_out = False
    try:
        while True:
            memory.sample()
            if marker_seen.is_set() or process.poll() is not None:
                break
            if time.monotonic() - start > timeout_s:
                timed_out = True
                break
            marker_seen.wait(poll_s)
        memory.sample()
        exited = process.poll()
    finally:
        _stop(process)
    reader.join(timeout=10)
    return {
        "seconds": {name: seen.get(name) for name in markers},
        "reached": stop_marker in seen,
        "timed_out": timed_out,
        "exit_code": exited,
        "peak_rss_bytes": memory.peak_bytes,
        "processes": memory.largest_tree,
        "wall_s": time.monotonic() - start,
        "output": kept + list(tail),
    }


def prints_first_step_line():
    """Whether the scripts print the "first training step" line (a callback wired into them)."""
    definition = os.path.join("callbacks", "first_step_line.py")
    code = CODE["root"]
    for top in (os.path.join(code, "keras_attention"), os.path.join(code, "examples")):
        for folder, _, files in os.walk(top):
            for name in files:
                path = os.path.join(folder, name)
                if not name.endswith(".py") or path.endswith(definition):
                    continue
                with open(path, encoding="utf-8", errors="replace") as handle:
                    text = handle.read()
                if "FirstStepLine" in text or FIRST_STEP_MARKER in text:
                    return True
    return False


def script_command(script, folder, output_dir):
    """The command line a user types to train `script` on the data set in `folder`."""
    example, layout, flags = SCRIPTS[script]
    return [
        sys.executable,
        os.path.join(CODE["root"], "examples", example),
        "--dataset",
        scale_datasets.dataset_argument(layout, folder),
        *flags,
        "--output-dir",
        output_dir,
        "--epochs",
        "2",  # Keras prints "Epoch 1/N" only when N > 1
        "--quiet",
    ]


def _environment():
    """The scripts' environment: unbuffered output, the measured code first on the path."""
    environment = dict(os.environ, PYTHONUNBUFFERED="1")
    environment.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if CODE["root"] != ROOT:
        # Before the editable install's finder, which points at this checkout.
        path = environment.get("PYTHONPATH")
        environment["PYTHONPATH"] = CODE["root"] + (os.pathsep + path if path else "")
    return environment


def code_of_commit(revision, folder):
    """The files of `revision` (`git archive`), extracted once under `folder`; `(path, hash)`.

    The working tree of a shared checkout changes while a long run goes on;
    a commit's files do not.
    """
    commit = subprocess.run(
        ["git", "rev-parse", revision], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    path = os.path.join(folder, f"code_{commit[:12]}")
    if not os.path.isdir(path):
        partial = path + ".incomplete"
        shutil.rmtree(partial, ignore_errors=True)
        os.makedirs(partial)
        archive = subprocess.run(
            ["git", "archive", "--format=tar", commit], cwd=ROOT, capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", partial], input=archive, check=True)
        os.rename(partial, path)
    return path, commit


def _load1():
    return round(os.getloadavg()[0], 2)


def _stamp():
    """When and on what code a row was measured (rows of several runs can be merged)."""
    return {
        "commit": CODE.get("commit"),
        "measured_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
    }


def time_first_step(script, folder, size, timeout_s, wait_for_first_step):
    """One row: `script` trained on `folder` in a fresh process, stopped at its first step."""
    output_dir = tempfile.mkdtemp(prefix=f"{NAME}_{script}_")
    os.rmdir(output_dir)  # the script creates it: a fresh run, never a resumed one
    command = script_command(script, folder, output_dir)
    environment = _environment()
    markers = {"epoch": EPOCH_MARKER, "first_step": FIRST_STEP_MARKER}
    stop = "first_step" if wait_for_first_step else "epoch"
    load_before = _load1()
    log(f"  {script} on {os.path.basename(folder)} (timeout {timeout_s:.0f} s)")
    try:
        watched = watch_until_marker(
            command, markers, stop, timeout_s, cwd=CODE["root"], env=environment
        )
    finally:
        shutil.rmtree(output_dir, ignore_errors=True)
    layout = SCRIPTS[script][1]
    seconds = watched["seconds"]
    row = {
        "case": f"{script} {layout} {size}",
        "config": {"script": script, "layout": layout, "size": size, "folder": folder},
        **_stamp(),
        "command": " ".join(command[1:]).replace(CODE["root"] + os.sep, ""),
        "reached": watched["reached"],
        "seconds_to_epoch": seconds["epoch"],
        "seconds_to_first_step": seconds["first_step"],
        # The figure held against the target: the first step's line where the
        # script prints one, else the epoch's start (before the step compiles).
        "seconds_before_training": seconds[stop],
        "measured_at": "first_step" if wait_for_first_step else "epoch_start",
        "peak_rss_gib": watched["peak_rss_bytes"] / GIB,
        "processes": watched["processes"],
        "timed_out": watched["timed_out"],
        "exit_code": watched["exit_code"],
        "wall_s": watched["wall_s"],
        "load_average_1min": [load_before, _load1()],
    }
    row["output"] = watched["output"]  # what the script printed: its choices, or its error
    if not watched["reached"]:
        why = "timed out" if watched["timed_out"] else f"exited with {watched['exit_code']}"
        row["not_reached"] = f"{why} after {watched['wall_s']:.0f} s"
    log(
        f"    {'reached' if row['reached'] else 'NOT reached'}: epoch at "
        f"{_seconds_text(row['seconds_to_epoch'])}, first step at "
        f"{_seconds_text(row['seconds_to_first_step'])}, peak {row['peak_rss_gib']:.2f} GiB"
    )
    return row


def _seconds_text(value):
    return "-" if value is None else f"{value:.1f} s"


def project(rows, layout, script):
    """`script`'s seconds and memory at the full-size data set, linear in items.

    The line goes through the two largest rungs that reached the marker. A
    larger rung that did not reach it within the timeout makes the
    projection a failure (its time is over the timeout already).

    Args:
        rows: the first-step rows of `script`.
        layout: the rows' layout (its full size and targets).
        script: the script's name.

    Returns:
        a dict with `projected_seconds`, `projected_peak_gib`, the targets
        and `passes_time`, `passes_memory` (None when nothing can be said).

    Example:

    >>> rows = [{"config": {"size": n}, "reached": True, "seconds_before_training": s,
    ...          "peak_rss_gib": g} for n, s, g in ((100, 10.0, 1.0), (200, 20.0, 1.5))]
    >>> projected = project(rows, "tsv", "train_nmt_tsv")
    >>> round(projected["projected_seconds"]), projected["passes_time"]
    (450000, False)
    """
    full_name, full_items = FULL_SIZE[layout]
    projection = {
        "case": f"{script} at {full_name}",
        "script": script,
        "layout": layout,
        "full_size": full_name,
        "items": full_items,
        "method": "linear in items through the two largest rungs that reached the marker",
        "target_seconds": TARGET_SECONDS[layout],
        "target_peak_gib": TARGET_PEAK_GIB,
        "projected_seconds": None,
        "projected_peak_gib": None,
        "passes_time": None,
        "passes_memory": None,
    }
    ordered = sorted(rows, key=lambda row: row["config"]["size"])
    reached = [row for row in ordered if row["reached"]]
    failed = [row for row in ordered if not row["reached"]]
    if failed and (not reached or failed[-1]["config"]["size"] > reached[-1]["config"]["size"]):
        size = failed[0]["config"]["size"]
        projection["reason"] = f"not reached at {size:,} items ({failed[0].get('not_reached')})"
        projection["passes_time"] = False
        return projection
    if len(reached) < 2:
        projection["reason"] = "fewer than two rungs reached the marker"
        return projection
    (low, high) = reached[-2:]
    sizes = (low["config"]["size"], high["config"]["size"])
    projection["from_sizes"] = list(sizes)

    def line(key):
        slope = (high[key] - low[key]) / (sizes[1] - sizes[0])
        # Never below the largest measurement: noise can make a slope negative.
        return max(high[key], high[key] + slope * (full_items - sizes[1])), slope

    seconds, slope = line("seconds_before_training")
    memory, memory_slope = line("peak_rss_gib")
    projection.update(
        projected_seconds=seconds,
        seconds_per_million_items=slope * 1e6,
        projected_peak_gib=memory,
        gib_per_million_items=memory_slope * 1e6,
        passes_time=seconds <= TARGET_SECONDS[layout],
        passes_memory=memory <= TARGET_PEAK_GIB,
    )
    return projection


# ---------------------------------------------------------------------------
# Part 2: the input pipeline against the model.
# ---------------------------------------------------------------------------


def _examples_in(batch):
    import tensorflow as tf

    return int(tf.nest.flatten(batch)[0].shape[0])


def _shapes(batch):
    import tensorflow as tf

    return [list(leaf.shape) for leaf in tf.nest.flatten(batch)]


def pipeline_child(model_name, folder, warmup, batches, budget_s, extra_flags=(), xla=True):
    """In a process of its own: the batches' rate and the model's rate; prints one JSON line.

    `xla=False` trains the step without XLA whatever the script chose: only
    for quick checks of this benchmark, where XLA's compilation would take
    most of the time.
    """
    import keras
    import tensorflow as tf

    layout, builder, flags = PIPELINE_MODELS[model_name]
    output_dir = tempfile.mkdtemp(prefix=f"{NAME}_{model_name}_")
    os.rmdir(output_dir)
    argv = [
        "--dataset",
        scale_datasets.dataset_argument(layout, folder),
        *flags,
        *extra_flags,
        "--output-dir",
        output_dir,
        "--quiet",
    ]
    start = time.perf_counter()
    try:
        train, model = globals()[builder](argv)
        setup_s = time.perf_counter() - start
        if not xla:
            model.jit_compile = False

        # Delivered: the batches alone, after a warm-up. A set of fewer batches than that
        # goes on into its next epoch (said in the row: a cached pipeline is faster there).
        epoch_batches = int(train.cardinality())
        iterator = iter(train.repeat())

        def next_batch():
            try:
                return next(iterator)
            except StopIteration:  # only an empty epoch ends a repeated dataset
                raise RuntimeError(f"{model_name}: the training batches are empty") from None

        for _ in range(warmup):
            next_batch()
        examples = timed = 0
        fixed = None
        begin = time.perf_counter()
        for _ in range(batches):
            batch = next_batch()
            fixed = batch if fixed is None else fixed
            examples += _examples_in(batch)
            timed += 1
            if time.perf_counter() - begin > budget_s:
                break
        delivered_s = time.perf_counter() - begin
        iterator = None  # its prefetching threads stop before the model is timed

        # Consumed: the compiled training step on one fixed batch (a full one, of the shape
        # every training batch has).
        batch = fixed
        x, y, weights = keras.utils.unpack_x_y_sample_weight(batch)
        batch_examples = _examples_in(batch)
        begin = time.perf_counter()
        model.train_on_batch(x, y, weights)
        first_call_s = time.perf_counter() - begin
        for _ in range(2):
            model.train_on_batch(x, y, weights)
        steps = []
        while len(steps) < 5 or (len(steps) < 30 and sum(steps) < budget_s):
            begin = time.perf_counter()
            model.train_on_batch(x, y, weights)
            steps.append(time.perf_counter() - begin)
    finally:
        shutil.rmtree(output_dir, ignore_errors=True)
    step_s = statistics.median(steps)
    quartiles = statistics.quantiles(steps, n=4, method="inclusive")
    result = {
        "setup_s": setup_s,
        "batch_size": batch_examples,
        "batch_shapes": _shapes(batch),
        "delivered": {
            "examples_per_s": examples / delivered_s,
            "batches": timed,
            "warmup_batches": warmup,
            "seconds": delivered_s,
            "epoch_batches": epoch_batches if epoch_batches >= 0 else None,
            "past_first_epoch": 0 <= epoch_batches < warmup + timed,
        },
        "consumed": {
            "examples_per_s": batch_examples / step_s,
            "step_median_s": step_s,
            "step_q25_s": quartiles[0],
            "step_q75_s": quartiles[2],
            "steps": len(steps),
            "first_call_s": first_call_s,
        },
        "peak_rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / GIB,
        "model": type(model).__name__,
        "jit_compile": bool(model.jit_compile),
        "parameters": int(model.count_params()),
        "tensorflow_threads": tf.config.threading.get_intra_op_parallelism_threads(),
    }
    print(RESULT_PREFIX + json.dumps(result), flush=True)


def measure_pipeline(
    model_name, folder, size, timeout_s, warmup, batches, budget_s, extra_flags=(), xla=True
):
    """One pipeline row, measured in a fresh process; `extra_flags` go to the script's parser."""
    layout = PIPELINE_MODELS[model_name][0]
    command = [
        sys.executable,
        "-m",
        "benchmarks.data_at_scale",
        "--pipeline-child",
        model_name,
        folder,
        "--warmup-batches",
        str(warmup),
        "--batches",
        str(batches),
        "--budget",
        str(budget_s),
        "--code",
        CODE["root"],
        *(f"--pipeline-flag={flag}" for flag in extra_flags),
        *([] if xla else ["--pipeline-without-xla"]),
    ]
    environment = _environment()
    load_before = _load1()
    log(f"  pipeline of {model_name} on {os.path.basename(folder)}")
    row = {
        "case": f"{model_name} {layout} {size}",
        "config": {
            "model": model_name,
            "layout": layout,
            "size": size,
            "folder": folder,
            "flags": PIPELINE_MODELS[model_name][2] + list(extra_flags),
        },
        **_stamp(),
        "task_api": TASK_API[PIPELINE_MODELS[model_name][1].split("_")[0]],
        "target_ratio": TARGET_PIPELINE_RATIO,
    }
    try:
        completed = subprocess.run(
            command,
            cwd=ROOT,
            env=environment,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout_s,
        )
    except subprocess.TimeoutExpired:
        row.update(measured=False, reason=f"timed out after {timeout_s:.0f} s")
        return row
    lines = [line for line in completed.stdout.splitlines() if line.startswith(RESULT_PREFIX)]
    if completed.returncode != 0 or not lines:
        tail = (completed.stdout + completed.stderr).splitlines()[-25:]
        row.update(measured=False, reason=f"exited with {completed.returncode}", tail=tail)
        log("    failed: " + " | ".join(tail[-5:]))
        return row
    measured = json.loads(lines[-1][len(RESULT_PREFIX) :])
    ratio = measured["delivered"]["examples_per_s"] / measured["consumed"]["examples_per_s"]
    row.update(measured=True, **measured)
    row.update(ratio=ratio, passes=ratio >= TARGET_PIPELINE_RATIO)
    row["load_average_1min"] = [load_before, _load1()]
    log(
        f"    delivered {measured['delivered']['examples_per_s']:.0f}/s, consumed "
        f"{measured['consumed']['examples_per_s']:.0f}/s: ratio {ratio:.2f}"
    )
    return row


# ---------------------------------------------------------------------------
# The run, its JSON and its README table.
# ---------------------------------------------------------------------------


def _commit():
    def git(*arguments):
        completed = subprocess.run(
            ["git", *arguments], cwd=ROOT, capture_output=True, text=True, check=False
        )
        return completed.stdout.strip()

    return git("rev-parse", "HEAD"), bool(git("status", "--porcelain", "--untracked-files=no"))


def _machine():
    description = {
        "cpu_count": os.cpu_count(),
        "usable_cores": len(os.sched_getaffinity(0)),
        "load_average": [round(value, 2) for value in os.getloadavg()],
        "python": sys.version.split()[0],
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
    }
    try:
        from benchmarks import timing

        description.update(timing.machine_description("cpu"))
    except ImportError:  # TensorFlow missing: the scripts could not run either
        pass
    return description


def _parse_sizes(items, defaults):
    """`["imagenet=2000,20000", ...]` -> {layout: [sizes]}; layouts not named keep `defaults`."""
    sizes = {layout: list(values) for layout, values in defaults.items()}
    for item in items or ():
        layout, _, values = item.partition("=")
        if layout not in scale_datasets.LAYOUTS or not values:
            raise SystemExit(f"--sizes: LAYOUT=N[,N...] with LAYOUT in {scale_datasets.LAYOUTS}")
        sizes[layout] = [int(value.replace("_", "")) for value in values.split(",")]
    return sizes


def _row_key(row):
    config = row["config"]
    return (config.get("script") or config.get("model"), config["size"])


def _merge(old_rows, new_rows):
    """`old_rows` with the rows of the same script (or model) and size replaced by `new_rows`."""
    merged = {_row_key(row): row for row in old_rows}
    merged.update({_row_key(row): row for row in new_rows})
    return list(merged.values())


def projections(rows):
    """The projection of every script in `rows` (see `project`)."""
    by_script = collections.defaultdict(list)
    for row in rows:
        by_script[row["config"]["script"]].append(row)
    return [
        project(by_script[script], SCRIPTS[script][1], script)
        for script in SCRIPTS
        if script in by_script
    ]


def verdicts(run):
    """Target name -> True, False or None (not measured) for a run's projections and pipelines."""
    passed = {}
    for projection in run["projections"]:
        passed[f"{projection['script']} seconds"] = projection["passes_time"]
        passed[f"{projection['script']} memory"] = projection["passes_memory"]
    for row in run["pipeline"]:
        passed[f"{row['config']['model']} pipeline ratio"] = row.get("passes")
    return passed


def _write(payload, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w") as handle:
        json.dump(payload, handle, indent=1)
        handle.write("\n")
    os.replace(path + ".tmp", path)


def run(args):
    """Generates the data sets, measures, and writes the JSON after every row; returns it."""
    quick = args.quick
    ladder = _parse_sizes(args.sizes, QUICK_LADDER if quick else LADDER)
    pipeline_sizes = dict(QUICK_PIPELINE_SIZES if quick else PIPELINE_SIZES)
    for layout, values in _parse_sizes(args.pipeline_sizes, {}).items():
        pipeline_sizes[layout] = values[0]
    data_root = args.data_root or (
        os.path.join(tempfile.gettempdir(), "scale_data_quick")
        if quick
        else scale_datasets.DEFAULT_ROOT
    )
    results_dir = args.results_dir or (os.path.join(RESULTS_DIR, "quick") if quick else RESULTS_DIR)
    path = os.path.join(results_dir, f"{NAME}.json")
    scripts = args.scripts if args.scripts is not None else list(SCRIPTS)
    models = args.pipeline_models if args.pipeline_models is not None else list(PIPELINE_MODELS)

    # Every data set first (they are reused), smallest first.
    wanted = set()
    for script in scripts:
        layout = SCRIPTS[script][1]
        wanted.update((layout, size) for size in ladder[layout])
    for model in models:
        layout = PIPELINE_MODELS[model][0]
        wanted.add((layout, pipeline_sizes[layout]))
    manifests = {}
    for layout, size in sorted(wanted, key=lambda item: (item[1], item[0])):
        made = scale_datasets.ensure_dataset(layout, size, data_root, seed=args.seed)
        manifests[layout, size] = made
    if args.generate_only:
        return None

    previous = {}
    if os.path.exists(path):
        with open(path) as handle:
            previous = json.load(handle)
    base = (previous.get("before") if args.before else previous) or {}
    if not args.merge:
        base = {}
    if args.commit:
        CODE["root"], commit = code_of_commit(args.commit, data_root)
        dirty = False
    else:
        commit, dirty = _commit()
    CODE["commit"] = commit
    wait_for_first_step = {"auto": prints_first_step_line(), "yes": True, "no": False}[
        args.wait_for_first_step
    ]
    current = {
        "commit": commit,
        "commit_dirty": dirty,
        "code": CODE["root"],
        "machine": _machine(),
        "settings": {
            "sizes": {
                layout: ladder[layout] for layout in sorted({SCRIPTS[s][1] for s in scripts})
            },
            "pipeline_sizes": pipeline_sizes,
            "timeout_s": args.timeout,
            "poll_s": 0.2,
            "epoch_marker": EPOCH_MARKER,
            "first_step_marker": FIRST_STEP_MARKER,
            "waited_for_first_step_line": wait_for_first_step,
            "script_flags": "--epochs 2 --quiet, a fresh --output-dir per run",
            "pipeline_warmup_batches": args.warmup_batches,
            "pipeline_batches": args.batches,
            "pipeline_budget_s": args.budget,
            "data_root": data_root,
            "page_cache": "the data sets' files were in the page cache (written or read before)",
        },
        "targets": {
            "seconds_before_first_step": {
                FULL_SIZE[layout][0]: TARGET_SECONDS[layout] for layout in TARGET_SECONDS
            },
            "peak_memory_gib": TARGET_PEAK_GIB,
            "pipeline_delivered_over_consumed": TARGET_PIPELINE_RATIO,
        },
        "task_api": {
            model: TASK_API[PIPELINE_MODELS[model][1].split("_")[0]] for model in PIPELINE_MODELS
        },
        "datasets": _merge_datasets(base.get("datasets", []), manifests.values()),
        "results": list(base.get("results", [])),
        "pipeline": list(base.get("pipeline", [])),
    }

    def save():
        current["projections"] = projections(current["results"])
        current["passed"] = verdicts(current)
        current["machine"]["load_average_end"] = [round(v, 2) for v in os.getloadavg()]
        payload = {
            "benchmark": NAME,
            "title": TITLE,
            "quick": quick,
            **current,
            "skipped": [],
            "notes": NOTES,
        }
        if args.before:
            payload["before"] = dict(current)
            # The latest run stays what it was if there is one from a later commit.
            if previous.get("commit") and previous.get("commit") != commit:
                payload.update({k: previous[k] for k in current if k in previous})
        elif previous.get("before"):
            payload["before"] = previous["before"]
        _write(payload, path)
        return payload

    for script in scripts:
        layout = SCRIPTS[script][1]
        for size in ladder[layout]:
            folder = manifests[layout, size]["path"]
            row = time_first_step(script, folder, size, args.timeout, wait_for_first_step)
            current["results"] = _merge(current["results"], [row])
            save()
            if not row["reached"] and args.stop_after_timeout:
                log(f"    larger rungs of {script} skipped: this one did not reach the marker")
                break
    for model in models:
        layout = PIPELINE_MODELS[model][0]
        size = pipeline_sizes[layout]
        row = measure_pipeline(
            model,
            manifests[layout, size]["path"],
            size,
            args.timeout,
            args.warmup_batches,
            args.batches,
            args.budget,
            args.pipeline_flag,
            xla=not args.pipeline_without_xla,
        )
        current["pipeline"] = _merge(current["pipeline"], [row])
        save()
    payload = save()
    log(f"wrote {path}")
    if not quick and not args.no_readme:
        update_readme(payload)
    return payload


def _merge_datasets(old, new):
    merged = {item["path"]: item for item in old}
    for manifest in new:
        item = {key: value for key, value in manifest.items() if key != "reused"}
        merged[item["path"]] = item
    return sorted(
        merged.values(), key=lambda item: (item["recipe"]["layout"], item["recipe"]["size"])
    )


NOTES = [
    "Each script runs in a fresh process with a fresh --output-dir, as a user runs it; it is "
    "stopped once the marker line is printed.",
    "Peak memory: the largest resident memory of the process tree, polled every 0.2 s from "
    "/proc (VmRSS summed over the tree, or the largest VmHWM if higher).",
    "Projections are linear in items through the two largest rungs that reached the marker; a "
    "rung that timed out fails the projection.",
    "Images beyond the pool of distinct ones are hard links; all files were in the page cache, "
    "so disk reads are not part of these times.",
]


# README table.


def _cell(value, digits=1, unit=""):
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "**no**"
    return f"{value:,.{digits}f}{unit}"


def run_tables(run, heading):
    """Markdown of one run: first-step rows, projections, pipeline rows."""
    machine = run.get("machine", {})
    changes = " (with local changes)" if run.get("commit_dirty") else ""
    lines = [
        f"#### {heading}",
        "",
        f"Commit `{run.get('commit', '?')[:12]}`{changes}, "
        f"measured {machine.get('date_utc', '?')} UTC: {machine.get('cpu', '?')}, "
        f"{machine.get('usable_cores', '?')} usable cores, load average "
        f"{machine.get('load_average')} at the start and "
        f"{machine.get('load_average_end')} at the end; TensorFlow "
        f"{machine.get('tensorflow', '?')}, Keras {machine.get('keras', '?')}.",
        "",
        "| script | data set | items | to `Epoch 1/` s | to first step s | peak GiB | load |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in sorted(
        run.get("results", []),
        key=lambda r: (list(SCRIPTS).index(r["config"]["script"]), r["config"]["size"]),
    ):
        config = row["config"]
        epoch = (
            _cell(row["seconds_to_epoch"])
            if row["reached"] or row["seconds_to_epoch"]
            else (f"not reached ({row.get('not_reached', '')})")
        )
        lines.append(
            f"| {config['script']} | {config['layout']} | {config['size']:,} | {epoch} | "
            f"{_cell(row['seconds_to_first_step'])} | {_cell(row['peak_rss_gib'], 2)} | "
            f"{row['load_average_1min'][0]:.1f} |"
        )
    lines += [
        "",
        "| script | projected to | from rungs | seconds | target s | peak GiB | target GiB "
        "| time met | memory met |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for projection in run.get("projections", []):
        rungs = ", ".join(f"{n:,}" for n in projection.get("from_sizes", [])) or projection.get(
            "reason", ""
        )
        lines.append(
            f"| {projection['script']} | {projection['full_size']} | {rungs} | "
            f"{_cell(projection['projected_seconds'], 0)} | {projection['target_seconds']:.0f} | "
            f"{_cell(projection['projected_peak_gib'], 2)} | {projection['target_peak_gib']:.0f} | "
            f"{_cell(projection['passes_time'])} | {_cell(projection['passes_memory'])} |"
        )
    if run.get("pipeline"):
        lines += [
            "",
            "| model | data set | batch | data and model s | step compile s | delivered ex/s "
            "| consumed ex/s | delivered / consumed | met (>= 2) |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for row in run["pipeline"]:
            config = row["config"]
            if not row.get("measured"):
                lines.append(
                    f"| {config['model']} | {config['layout']} {config['size']:,} | - | - | - "
                    f"| - | - | not measured: {row.get('reason', '')} | - |"
                )
                continue
            lines.append(
                f"| {config['model']} | {config['layout']} {config['size']:,} | "
                f"{row['batch_size']} | {row['setup_s']:.0f} | "
                f"{row['consumed']['first_call_s']:.0f} | "
                f"{row['delivered']['examples_per_s']:,.0f} | "
                f"{row['consumed']['examples_per_s']:,.0f} | {row['ratio']:.2f} | "
                f"{_cell(row['passes'])} |"
            )
    return "\n".join(lines) + "\n"


def readme_tables(payload):
    """The generated part of the README section: the latest run, and the "before" run."""
    parts = []
    before = payload.get("before")
    same = (
        before
        and before.get("commit") == payload.get("commit")
        and before.get("results") == payload.get("results")
    )
    if not same:
        parts.append(run_tables(payload, "Latest run"))
    if before:
        parts.append(run_tables(before, "Before (the code the task APIs are rewriting)"))
    return "\n".join(parts)


def update_readme(payload, readme=README):
    """Rewrites the text between the data-at-scale markers of `readme`."""
    with open(readme) as handle:
        text = handle.read()
    if BEGIN not in text or END not in text:
        raise ValueError(
            f"`readme` must contain the markers {BEGIN} and {END}. Received: readme={readme!r}"
        )
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(readme, "w") as handle:
        handle.write(head + BEGIN + "\n\n" + readme_tables(payload) + "\n" + END + tail)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="tens of items; JSON to results/quick/"
    )
    parser.add_argument(
        "--sizes",
        nargs="+",
        metavar="LAYOUT=N,N",
        help=f"rungs per layout (default: {LADDER})",
    )
    parser.add_argument("--scripts", nargs="*", choices=list(SCRIPTS), default=None)
    parser.add_argument("--pipeline-models", nargs="*", choices=list(PIPELINE_MODELS), default=None)
    parser.add_argument(
        "--pipeline-sizes", nargs="+", metavar="LAYOUT=N", help=f"default {PIPELINE_SIZES}"
    )
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    parser.add_argument("--data-root", default=None, help=f"default {scale_datasets.DEFAULT_ROOT}")
    parser.add_argument("--results-dir", default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--before", action="store_true", help='store this run as "before" too')
    parser.add_argument(
        "--merge", action="store_true", help="keep the JSON's rows of other scripts and sizes"
    )
    parser.add_argument(
        "--stop-after-timeout",
        action="store_true",
        help="skip a script's larger rungs once one does not reach the marker",
    )
    parser.add_argument(
        "--wait-for-first-step",
        choices=("auto", "yes", "no"),
        default="auto",
        help="wait for the 'first training step' line (auto: if the scripts print it)",
    )
    parser.add_argument("--warmup-batches", type=int, default=5)
    parser.add_argument("--batches", type=int, default=100)
    parser.add_argument("--budget", type=float, default=60.0, help="seconds per rate measurement")
    parser.add_argument(
        "--pipeline-without-xla",
        action="store_true",
        help="train the step without XLA (quick checks only: not as the scripts compile it)",
    )
    parser.add_argument(
        "--pipeline-flag",
        action="append",
        default=[],
        metavar="FLAG",
        help="a flag for the pipeline models' parsers, e.g. --pipeline-flag=--hidden-dim=16",
    )
    parser.add_argument("--generate-only", action="store_true")
    parser.add_argument("--readme-only", action="store_true")
    parser.add_argument("--no-readme", action="store_true")
    parser.add_argument(
        "--commit",
        default=None,
        help="measure this commit's files (extracted under the data root) instead of the checkout",
    )
    parser.add_argument("--code", default=None, help=argparse.SUPPRESS)
    parser.add_argument(
        "--pipeline-child", nargs=2, metavar=("MODEL", "FOLDER"), help=argparse.SUPPRESS
    )
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.code:
        CODE["root"] = os.path.abspath(args.code)
        sys.path.insert(0, CODE["root"])  # its keras_attention, not the editable install's
    if args.pipeline_child:
        os.environ.setdefault("KERAS_BACKEND", "tensorflow")
        model, folder = args.pipeline_child
        pipeline_child(
            model,
            folder,
            args.warmup_batches,
            args.batches,
            args.budget,
            args.pipeline_flag,
            xla=not args.pipeline_without_xla,
        )
        return None
    if args.readme_only:
        with open(os.path.join(args.results_dir or RESULTS_DIR, f"{NAME}.json")) as handle:
            payload = json.load(handle)
        update_readme(payload)
        return payload
    # Stopped with SIGTERM, a run still stops the script it is watching (`finally`).
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    try:
        return run(args)
    finally:
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    main()
