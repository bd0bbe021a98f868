"""XLA's CPU scheduler: independent operations at once, against one after another.

XLA's CPU runtime runs the operations of a compiled program that do not
depend on each other at the same time, each one spread over the same thread
pool, and its default scheduler orders the program to allow as much of that as
it can. With two threads, two large matrix products at once compete for them:
traced by `operation_profile attention_layer_ours`, MultiHeadAttention's
training step at T=256 has two or more operations running for about 24 of its
92 ms and spends 104-109 thread-ms; under
`--xla_cpu_enable_concurrency_optimized_scheduler=false`, the scheduler that
orders for memory instead, the same operations overlap for 7 ms, spend 80-85
thread-ms and the call takes 80 ms. Untraced, that gain does not hold (see
benchmarks/README.md): this benchmark is what measures it.

This benchmark times the same compiled steps under both schedulers. The flag
only takes effect before TensorFlow starts, so every measurement is a child
process: for each case, `--pairs` pairs of children, one per scheduler, the
order alternating from pair to pair; each child times ours and the peer in
alternating rounds (`timing.compare`). Reported per case and scheduler: the
median over children of each step's median time, and of ours/peer (each
child's median of per-round ratios); and each step's time under the
memory-ordered scheduler over its time under the default one (median over
pairs).

    python -m benchmarks.xla_cpu_scheduler                 # every case, 5 pairs each
    python -m benchmarks.xla_cpu_scheduler --quick         # tiny sizes: checks that it runs
    python -m benchmarks.xla_cpu_scheduler --cases "MultiHeadAttention T=256"

JSON in `results/xla_cpu_scheduler.json`.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

import numpy as np

SERIAL_FLAG = "--xla_cpu_enable_concurrency_optimized_scheduler=false"
SCHEDULERS = {"concurrent (default)": "", "memory-ordered": SERIAL_FLAG}
CASES = (
    "MultiHeadAttention T=256",
    "encoder block T=256",
    "ViT step batch 64",
    "chunked attention T=4096 forward",
)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_args(argv=None):
    """The benchmark's flags (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes: checks that it works")
    parser.add_argument("--cases", nargs="+", choices=CASES, default=list(CASES))
    parser.add_argument("--pairs", type=int, default=5, help="pairs of child processes a case")
    parser.add_argument("--rounds", type=int, default=15, help="timed rounds in each child")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--results-dir", default=None)
    parser.add_argument("--child", choices=CASES, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def _vit_steps(quick):
    """Our ViT's and keras-hub's `train_on_batch` of `torch_vit_step`'s sizes."""
    from benchmarks import torch_vit_step

    batch = 4 if quick else 64
    rng = np.random.default_rng(0)
    side = torch_vit_step.SIZES["image"]
    images = rng.uniform(0, 255, (batch, side, side, 3)).astype("float32")
    labels = rng.integers(0, torch_vit_step.SIZES["classes"], batch)
    return {
        "ours": torch_vit_step.our_step(images, labels),
        "keras_hub": torch_vit_step.keras_hub_step(images, labels),
    }


def case_steps(case, quick):
    """`{"ours": step, peer: step}` (or ours alone) for `case`, compiled with XLA."""
    from benchmarks import attention_layer
    from benchmarks import encoder_block
    from benchmarks import layer_comparison
    from benchmarks import operation_profile

    if case.startswith("MultiHeadAttention"):
        return layer_comparison.plain_xla_steps(attention_layer, 256, quick)
    if case.startswith("encoder block"):
        return layer_comparison.plain_xla_steps(encoder_block, 256, quick)
    if case.startswith("ViT"):
        return _vit_steps(quick)
    return {"ours": operation_profile.attention_call(128 if quick else 4096, backward=False)}


def measure(case, quick, rounds, threads):
    """One child's measurement: each step's median ms, and ours/peer if there is a peer."""
    from benchmarks import timing

    timing.set_tensorflow_threads(threads)
    steps = case_steps(case, quick)
    samples = timing.compare(steps, warmup=0 if quick else 2, repeats=2 if quick else rounds)
    measured = {"ms": {label: 1000 * statistics.median(samples[label]) for label in samples}}
    peers = [label for label in samples if label != "ours"]
    if peers:
        measured["ours_over_peer"] = samples.ratio("ours", peers[0])["ratio"]
        measured["peer"] = peers[0]
    return measured


def _child(case, scheduler, args):
    """Runs `measure` in a fresh process under `scheduler`; returns its result."""
    environment = dict(os.environ, KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="2")
    flags = environment.get("XLA_FLAGS", "").replace(SERIAL_FLAG, "").strip()
    environment["XLA_FLAGS"] = f"{flags} {SCHEDULERS[scheduler]}".strip()
    command = [sys.executable, "-m", "benchmarks.xla_cpu_scheduler", "--child", case]
    command += ["--rounds", str(args.rounds), "--threads", str(args.threads)]
    command += ["--quick"] if args.quick else []
    completed = subprocess.run(
        command, capture_output=True, text=True, env=environment, cwd=ROOT, check=False
    )
    if completed.returncode != 0:
        raise RuntimeError(f"{case} under {scheduler} failed:\n{completed.stderr[-3000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def run_case(case, args):
    """Every pair of children of `case`; returns its JSON row."""
    from benchmarks import timing

    runs = {scheduler: [] for scheduler in SCHEDULERS}
    for pair in range(args.pairs):
        order = list(SCHEDULERS) if pair % 2 == 0 else list(SCHEDULERS)[::-1]
        for scheduler in order:
            timing.log(f"{case}: pair {pair + 1} of {args.pairs}, {scheduler}")
            runs[scheduler].append(_child(case, scheduler, args))
    labels = list(runs["concurrent (default)"][0]["ms"])
    row = {"case": case, "peer": runs["concurrent (default)"][0].get("peer"), "schedulers": {}}
    for scheduler, measured in runs.items():
        summary = {
            f"{label}_ms": statistics.median(run["ms"][label] for run in measured)
            for label in labels
        }
        if row["peer"]:
            summary["ours_over_peer"] = statistics.median(run["ours_over_peer"] for run in measured)
        row["schedulers"][scheduler] = summary
    pairs = zip(runs["memory-ordered"], runs["concurrent (default)"])
    ratios = [{label: a["ms"][label] / b["ms"][label] for label in labels} for a, b in pairs]
    row["memory_ordered_over_default"] = {
        label: statistics.median(ratio[label] for ratio in ratios) for label in labels
    }
    row["children"] = runs
    return row


def run(args):
    """Measures every case of `args.cases`; returns the JSON payload."""
    from benchmarks import timing

    results = [run_case(case, args) for case in args.cases]
    settings = {"threads": args.threads, "pairs": args.pairs, "rounds": args.rounds}
    settings["flag"] = SERIAL_FLAG
    return timing.make_payload(
        "xla_cpu_scheduler", "XLA's CPU scheduler: concurrent against memory-ordered", results,
        args.quick, "cpu", settings,
    )  # fmt: skip


def main(argv=None):
    """Runs the benchmark (or one child), writes its JSON, prints the table."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.child:
        print(json.dumps(measure(args.child, args.quick, args.rounds, args.threads)))
        return None
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    from benchmarks import timing

    payload = run(args)
    path = timing.write_json(payload, timing.results_directory(args.results_dir, args.quick))
    print("| case | step | default ms | memory-ordered ms | memory-ordered/default |")
    print("|---|---|---|---|---|")
    for row in payload["results"]:
        default, ordered = (row["schedulers"][name] for name in SCHEDULERS)
        for label, ratio in row["memory_ordered_over_default"].items():
            print(
                f"| {row['case']} | {label} | {default[label + '_ms']:.1f} | "
                f"{ordered[label + '_ms']:.1f} | {ratio:.2f} |"
            )
        if row["peer"]:
            print(
                f"| {row['case']} | ours/{row['peer']} | {default['ours_over_peer']:.2f} | "
                f"{ordered['ours_over_peer']:.2f} | |"
            )
    timing.log(f"wrote {path}")
    return path


if __name__ == "__main__":
    main()
