"""How far each attention kernel is from the machine's own limit, and from PyTorch's SDPA.

In one process, with the same threads for everyone (`--threads`, default 2):

1. the machine's dense float32 matmul rate: XLA-compiled square products
   (N = 1024 and 2048), the best rate of a sweep at the start, for the
   record; and, in every round of every case below, N = 2048 again;
2. each attention path of `keras_attention.ops.dot_product_attention` (B=1,
   4 heads, head_dim 64, float32, XLA): "xla" and "chunked" not causal,
   "banded" (causal, a window of 256 keys, chunked), forward and
   forward+backward, at T = 1024 and 4096. Its FLOPs are counted from the
   formula (`flop_counts.attention_flops`, `banded_attention_flops`: the two
   matrix products, 2 FLOPs a multiply-add, the backward 2.5x the forward),
   and its achieved FLOP/s given as a fraction of the matmul rate measured
   in the same round;
3. where PyTorch is installed, `torch.nn.functional.scaled_dot_product_attention`
   on the same shapes, values and threads (eager, its CPU kernel; the
   banded case with the band as a boolean mask), its output first checked
   equal to ours, and the ratio of times ours / torch (below 1: ours faster).

Every case runs in alternating rounds (the square product, ours, torch; the
order reversed every other round, `timing.compare`): a shared or throttled
machine slows all three alike, and the figures are medians of the per-round
fractions and ratios. (A rate measured once at the start, as an earlier
version did, moved by 1.8x between runs of this 2-core machine.)

    python -m benchmarks.roofline                 # results/roofline.json
    python -m benchmarks.roofline --quick         # tiny sizes, a smoke run
"""

import argparse
import os
import statistics
import sys
import time

import numpy as np

HEADS, HEAD_DIM, WINDOW = 4, 64, 256
# The square product timed in every round beside the attention kernels.
REFERENCE_SIZE = 2048


def parse_args(argv=None):
    """The benchmark's flags (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes: checks that it works")
    parser.add_argument("--threads", type=int, default=2, help="threads for TensorFlow and torch")
    parser.add_argument("--repeats", type=int, default=5, help="timed calls per case")
    parser.add_argument("--results-dir", default=None, help="where the JSON goes")
    return parser.parse_args(argv)


def best_seconds(function, repeats):
    """The fastest of `repeats` timed calls, after one untimed call (tracing, compiling)."""
    function()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def matmul_rate(sizes, repeats):
    """The best float32 FLOP/s of XLA-compiled `(N, N) @ (N, N)` over `sizes`, and per size."""
    rates = {}
    for size in sizes:
        product, flops = square_product(size)
        rates[size] = flops / best_seconds(product, repeats)
    return max(rates.values()), rates


def our_attention(path, mode):
    """An XLA-compiled call of our kernel for `path`; returns the output's sum (and gradients)."""
    import tensorflow as tf

    from keras_attention.ops.attention import dot_product_attention

    def attend(q, k, v):
        if path == "banded":
            return dot_product_attention(
                q, k, v, is_causal=True, sliding_window=WINDOW, implementation="chunked"
            )
        return dot_product_attention(q, k, v, implementation=path)

    def forward(q, k, v):
        return attend(q, k, v)

    def forward_backward(q, k, v):
        with tf.GradientTape() as tape:
            tape.watch([q, k, v])
            loss = tf.reduce_sum(attend(q, k, v))
        return tape.gradient(loss, [q, k, v])

    return tf.function(forward if mode == "forward" else forward_backward, jit_compile=True)


def torch_attention(path, mode, length):
    """PyTorch's SDPA on `(B, H, T, D)` tensors for `path` and `mode`, or None without torch."""
    try:
        import torch
    except ImportError:
        return None
    import torch.nn.functional as functional

    mask = None
    if path == "banded":
        rows = torch.arange(length)[:, None]
        columns = torch.arange(length)[None, :]
        mask = (columns <= rows) & (columns > rows - WINDOW)  # True = may attend

    def forward(q, k, v):
        with torch.no_grad():
            return functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)

    def forward_backward(q, k, v):
        q, k, v = (t.detach().requires_grad_(True) for t in (q, k, v))
        functional.scaled_dot_product_attention(q, k, v, attn_mask=mask).sum().backward()
        return q.grad, k.grad, v.grad

    return forward if mode == "forward" else forward_backward


def attention_flops_of(path, mode, length):
    """FLOPs of one call, from the formulas of `flop_counts`."""
    from benchmarks.flop_counts import attention_flops
    from benchmarks.flop_counts import banded_attention_flops

    backward = mode == "forward+backward"
    if path == "banded":
        return banded_attention_flops(1, HEADS, length, WINDOW, HEAD_DIM, backward=backward)
    return attention_flops(1, HEADS, length, length, HEAD_DIM, backward=backward)


def square_product(size):
    """An XLA-compiled `(N, N) @ (N, N)` float32 call and its FLOPs: the reference rate."""
    import tensorflow as tf

    a = tf.random.normal((size, size), seed=0)
    b = tf.random.normal((size, size), seed=1)
    product = tf.function(lambda x, y: tf.reduce_sum(tf.matmul(x, y)), jit_compile=True)
    return (lambda: product(a, b).numpy()), 2 * size**3


def measure_case(path, mode, length, repeats, torch_threads, reference_size=REFERENCE_SIZE):
    """One row, timed in alternating rounds with the square product (and torch's SDPA).

    Each round times the reference matmul, our kernel and torch's once, in
    alternating order, so the machine's drift reaches all three alike; the
    fraction of the matmul rate and the ratio to torch are medians of the
    per-round values.
    """
    import tensorflow as tf

    from benchmarks import timing

    rng = np.random.default_rng(length)
    q, k, v = (rng.standard_normal((1, length, HEADS, HEAD_DIM)).astype("float32") for _ in "qkv")
    ours = our_attention(path, mode)
    tensors = [tf.constant(x) for x in (q, k, v)]
    matmul, matmul_flops = square_product(reference_size)
    candidates = {
        "matmul": matmul,
        "ours": lambda: [np.asarray(t) for t in tf.nest.flatten(ours(*tensors))],
    }
    theirs = torch_attention(path, mode, length)
    if theirs is not None:
        import torch

        torch.set_num_threads(torch_threads)
        # (B, T, H, D) -> (B, H, T, D), PyTorch's layout.
        tq, tk, tv = (torch.from_numpy(x.transpose(0, 2, 1, 3).copy()) for x in (q, k, v))
        if mode == "forward":
            expected = theirs(tq, tk, tv).numpy().transpose(0, 2, 1, 3)
            np.testing.assert_allclose(np.asarray(ours(*tensors)), expected, atol=2e-4)
        candidates["torch"] = lambda: theirs(tq, tk, tv)
    samples = timing.compare(candidates, warmup=1, repeats=repeats, min_repeats=min(3, repeats))
    flops = attention_flops_of(path, mode, length)
    round_fractions = [
        (flops / ours_s) / (matmul_flops / matmul_s)
        for ours_s, matmul_s in zip(samples["ours"], samples["matmul"])
    ]
    seconds = statistics.median(samples["ours"])
    row = {
        "path": path,
        "mode": mode,
        "length": length,
        "flops": flops,
        "seconds": seconds,
        "flops_per_s": flops / seconds,
        "matmul_rate": matmul_flops / statistics.median(samples["matmul"]),
        "fraction_of_matmul_rate": statistics.median(round_fractions),
        "rounds": {
            "ours_s": samples["ours"],
            "matmul_s": samples["matmul"],
            "fraction_of_matmul_rate": round_fractions,
        },
    }
    if "torch" in samples:
        row["rounds"]["torch_s"] = samples["torch"]
        row.update(
            torch_seconds=statistics.median(samples["torch"]),
            ours_over_torch=samples.ratio("ours", "torch")["ratio"],
        )
    return row


def run(quick=False, threads=2, repeats=5):
    """Measures the matmul rate, then every case; returns the JSON payload."""
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")

    from benchmarks import timing

    tensorflow_threads = timing.set_tensorflow_threads(threads)
    lengths = (128, 256) if quick else (1024, 4096)
    reference_size = 256 if quick else REFERENCE_SIZE
    peak, rates = matmul_rate((256,) if quick else (1024, 2048), 2 if quick else repeats)
    timing.log(f"matmul rate: {peak / 1e9:.1f} GFLOP/s")
    results = []
    for length in lengths:
        for path in ("xla", "chunked", "banded"):
            for mode in ("forward", "forward+backward"):
                row = measure_case(
                    path, mode, length, 2 if quick else repeats, threads, reference_size
                )
                timing.log(
                    f"{path} {mode} T={length}: {row['fraction_of_matmul_rate']:.2f} of peak"
                )
                results.append(row)
    settings = {
        "threads": threads,
        "tensorflow_threads": tensorflow_threads,
        "heads": HEADS,
        "head_dim": HEAD_DIM,
        "window": WINDOW,
        "matmul_rates": {str(size): rate for size, rate in rates.items()},
        "matmul_rate": peak,
        "reference_size": reference_size,
    }
    return timing.make_payload("roofline", "Roofline", results, quick, "cpu", settings)


def results_table(payload):
    """The Markdown table of a payload."""
    lines = [
        "| path | mode | T | ms | GFLOP/s | matmul GFLOP/s | of matmul rate | torch ms "
        "| ours/torch |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in payload["results"]:
        torch_ms = f"{1000 * row['torch_seconds']:.1f}" if "torch_seconds" in row else "-"
        ratio = f"{row['ours_over_torch']:.2f}" if "ours_over_torch" in row else "-"
        lines.append(
            f"| {row['path']} | {row['mode']} | {row['length']} | {1000 * row['seconds']:.1f} | "
            f"{row['flops_per_s'] / 1e9:.1f} | {row['matmul_rate'] / 1e9:.1f} | "
            f"{row['fraction_of_matmul_rate']:.2f} | "
            f"{torch_ms} | {ratio} |"
        )
    return "\n".join(lines)


def main(argv=None):
    """Runs the benchmark, writes its JSON, prints the table."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from benchmarks import timing

    payload = run(args.quick, args.threads, args.repeats)
    path = timing.write_json(payload, timing.results_directory(args.results_dir, args.quick))
    print(f"matmul rate {payload['settings']['matmul_rate'] / 1e9:.1f} GFLOP/s (float32, XLA)")
    print(results_table(payload))
    timing.log(f"wrote {path}")
    return path


if __name__ == "__main__":
    main()
