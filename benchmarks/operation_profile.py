"""Where the time of one XLA-compiled call goes, operation by operation, on the CPU.

XLA's CPU runtime can trace every operation it runs (`XLA_FLAGS=
--xla_cpu_enable_xprof_traceme=true`); this benchmark runs a case under
`tf.profiler`, reads the trace (TensorFlow's XPlane protocol buffer) and
sums the time of each kind of operation (the fusion's or dot's name without
its number) over the runtime's threads. It prints, per call: the wall time,
the thread time, how many threads were busy on average (thread time over
wall time), how long one, two or more operations ran at once, and each
kind's share of the thread time, e.g. how much of a chunked attention call is
tile products, exponentials and row reductions.
Tracing slows every operation a little, so the call takes longer than
untraced; read the shares and the busy threads, not the milliseconds.

    python -m benchmarks.operation_profile chunked_forward       # T=4096, B=1, 4 heads of 64
    python -m benchmarks.operation_profile greedy_decoding       # the decoding benchmark's search
    python -m benchmarks.operation_profile beam_decoding
    python -m benchmarks.operation_profile attention_layer_ours   # MultiHeadAttention step, T=256
    python -m benchmarks.operation_profile attention_layer_keras  # keras' layer, same step
    python -m benchmarks.operation_profile chunked_forward --quick   # tiny, checks that it runs

The flag must be set before TensorFlow starts, so run it as its own process.
JSON in `results/operation_profile_<case>.json`.
"""

import argparse
import collections
import glob
import os
import re
import sys
import tempfile

import numpy as np

TRACE_FLAG = "--xla_cpu_enable_xprof_traceme=true"
CASES = (
    "chunked_forward",
    "chunked_forward_backward",
    "greedy_decoding",
    "beam_decoding",
    "attention_layer_ours",
    "attention_layer_keras",
)
# Events of the runtime itself, not operations of the program.
RUNTIME_EVENTS = ("ThunkExecutor", "SlinkyThreadPool", "ThreadpoolListener", "end: ")


def parse_args(argv=None):
    """The benchmark's flags (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("case", choices=CASES)
    parser.add_argument("--quick", action="store_true", help="tiny sizes: checks that it works")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--calls", type=int, default=3, help="traced calls, after 2 untraced")
    parser.add_argument("--results-dir", default=None)
    return parser.parse_args(argv)


def attention_call(length, backward):
    """An XLA-compiled chunked attention call (B=1, 4 heads of 64, not causal)."""
    import tensorflow as tf

    from keras_attention.ops.attention import dot_product_attention

    rng = np.random.default_rng(0)
    q, k, v = (tf.constant(rng.standard_normal((1, length, 4, 64), "float32")) for _ in "qkv")

    def forward(q, k, v):
        return dot_product_attention(q, k, v, implementation="chunked")

    def forward_backward(q, k, v):
        with tf.GradientTape() as tape:
            tape.watch([q, k, v])
            loss = tf.reduce_sum(forward(q, k, v))
        return tape.gradient(loss, [q, k, v])

    compiled = tf.function(forward_backward if backward else forward, jit_compile=True)
    return lambda: [np.asarray(t) for t in tf.nest.flatten(compiled(q, k, v))]


def decoding_call(beam, quick):
    """The decoding benchmark's greedy or 4-beam search over its translator."""
    from benchmarks.decoding_setup import END_ID
    from benchmarks.decoding_setup import SMALL_TRANSLATOR
    from benchmarks.decoding_setup import START_ID
    from benchmarks.decoding_setup import TINY_TRANSLATOR
    from benchmarks.decoding_setup import decoding_sources
    from benchmarks.decoding_setup import translator_that_never_ends
    from keras_attention.generation.beam_search import beam_search
    from keras_attention.generation.greedy_search import greedy_search

    sizes = TINY_TRANSLATOR if quick else SMALL_TRANSLATOR
    model = translator_that_never_ends(sizes)
    sources = decoding_sources(sizes, 0)
    steps = sizes["tokens"]
    if beam:
        return lambda: np.asarray(
            beam_search(model, sources, START_ID, END_ID, steps, beam_width=4)[0]
        )
    return lambda: np.asarray(greedy_search(model, sources, START_ID, END_ID, steps)[0])


def attention_layer_call(peer, quick):
    """The attention-layer benchmark's training step (T=256, plain, XLA) of ours or keras'."""
    from benchmarks import attention_layer
    from benchmarks import layer_comparison

    steps = layer_comparison.plain_xla_steps(attention_layer, 256, quick)
    step = steps["keras" if peer else "ours"]
    return lambda: np.asarray(step())


def make_call(case, quick):
    """The zero-argument call that `case` profiles."""
    if case.startswith("attention_layer"):
        return attention_layer_call(case.endswith("keras"), quick)
    if case.startswith("chunked"):
        return attention_call(128 if quick else 4096, case.endswith("backward"))
    return decoding_call(case == "beam_decoding", quick)


def operation_times(xplane_path, calls):
    """`(wall_ms, {kind: thread_ms}, {running: ms})` per call from a trace of `calls` calls.

    Wall time is that of the compiled program's executions; thread time sums
    each operation's events over the runtime's threads; the last maps how
    many operations ran at once ("0", "1", "2+") to the wall time they did.
    """
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    with open(xplane_path, "rb") as handle:
        space.ParseFromString(handle.read())
    kinds = collections.Counter()
    executions, operations = [], []
    for plane in space.planes:
        names = {key: metadata.name for key, metadata in plane.event_metadata.items()}
        for line in plane.lines:
            start_ps = line.timestamp_ns * 1000
            for event in line.events:
                name = names.get(event.metadata_id, "")
                span = (start_ps + event.offset_ps, start_ps + event.offset_ps + event.duration_ps)
                if name == "CpuExecutable::ExecuteAsyncOnStream":
                    executions.append(span)
                if line.name.startswith("tf_numa") and not name.startswith(RUNTIME_EVENTS):
                    kinds[re.sub(r"\.\d+$", "", name)] += event.duration_ps
                    operations.append(span)
    to_ms = 1e-9 / calls
    wall_ps = sum(end - start for start, end in executions)
    running = {label: ps * to_ms for label, ps in concurrency(executions, operations).items()}
    return wall_ps * to_ms, {kind: ps * to_ms for kind, ps in kinds.items()}, running


def concurrency(executions, operations):
    """`{"0": ps, "1": ps, "2+": ps}`: time inside `executions` with that many `operations` running.

    Both are lists of (start, end) spans; operations outside every execution
    are ignored.
    """
    totals = collections.Counter({"0": 0, "1": 0, "2+": 0})
    for first, last in executions:
        # +1 where an operation starts, -1 where it ends, both clipped to the execution.
        edges = sorted(
            edge
            for start, end in operations
            if start < last and end > first
            for edge in ((max(start, first), 1), (min(end, last), -1))
        )
        running, previous = 0, first
        for time, change in edges + [(last, 0)]:
            totals["2+" if running >= 2 else str(running)] += time - previous
            running, previous = running + change, time
    return dict(totals)


def run(case, quick=False, threads=2, calls=3):
    """Profiles `calls` calls of `case`; returns the JSON payload."""
    import tensorflow as tf

    from benchmarks import timing

    if TRACE_FLAG not in os.environ.get("XLA_FLAGS", ""):
        raise RuntimeError(f"XLA_FLAGS must hold {TRACE_FLAG} before TensorFlow starts")
    tensorflow_threads = timing.set_tensorflow_threads(threads)
    call = make_call(case, quick)
    for _ in range(2):  # trace, compile, warm up
        call()
    with tempfile.TemporaryDirectory() as trace_dir:
        tf.profiler.experimental.start(trace_dir)
        for _ in range(calls):
            call()
        tf.profiler.experimental.stop()
        (xplane,) = glob.glob(os.path.join(trace_dir, "**", "*.xplane.pb"), recursive=True)
        wall_ms, kinds, running = operation_times(xplane, calls)
    thread_ms = sum(kinds.values())
    results = [
        {"kind": kind, "thread_ms": ms, "share": ms / thread_ms if thread_ms else 0.0}
        for kind, ms in sorted(kinds.items(), key=lambda item: -item[1])
    ]
    settings = {"case": case, "threads": threads, "tensorflow_threads": tensorflow_threads}
    settings.update(calls=calls, wall_ms=wall_ms, thread_ms=thread_ms)
    settings["busy_threads"] = thread_ms / wall_ms if wall_ms else 0.0
    settings["operations_running_ms"] = running
    return timing.make_payload(
        f"operation_profile_{case}", f"Operations of one call: {case}", results, quick, "cpu",
        settings,
    )  # fmt: skip


def main(argv=None):
    """Sets the trace flag, runs the case, writes its JSON, prints the split."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    flags = os.environ.get("XLA_FLAGS", "")
    if TRACE_FLAG not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} {TRACE_FLAG}".strip()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    from benchmarks import timing

    payload = run(args.case, args.quick, args.threads, args.calls)
    path = timing.write_json(payload, timing.results_directory(args.results_dir, args.quick))
    settings = payload["settings"]
    print(
        f"{args.case}: {settings['wall_ms']:.1f} ms a call, {settings['thread_ms']:.1f} thread-ms, "
        f"{settings['busy_threads']:.2f} of {args.threads} threads busy"
    )
    running = settings["operations_running_ms"]
    print(
        f"operations at once: none {running['0']:.1f} ms, one {running['1']:.1f} ms, "
        f"two or more {running['2+']:.1f} ms"
    )
    print("| operation | thread ms | share |\n|---|---|---|")
    for row in payload["results"][:15]:
        print(f"| {row['kind']} | {row['thread_ms']:.2f} | {row['share']:.1%} |")
    timing.log(f"wrote {path}")
    return path


if __name__ == "__main__":
    main()
