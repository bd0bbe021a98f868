"""Run the benchmarks, write their JSON and the results table of benchmarks/README.md.

Usage:

    python -m benchmarks.run_all [--quick] [--only NAME ...] [--device cpu|gpu]

`--device gpu --quick` on a machine without a GPU runs the GPU configuration
(bf16, the ViT-B/16 case at tiny sizes) on the CPU, says so, and labels the
results as a stand-in, so the commands can be checked before a GPU run.

Each benchmark writes `benchmarks/results/<name>.json` (quick runs write to
`benchmarks/results/quick/` and leave the README alone). The table between
the markers of benchmarks/README.md is rebuilt from every full-run JSON file
in the results folder, so `--only` refreshes one benchmark and keeps the
others.
"""

import argparse
import glob
import importlib
import json
import os
import sys

BENCHMARKS = (
    "attention_layer",
    "encoder_block",
    "long_sequences",
    "decoding",
    "end_to_end",
    "tokenizers",
)
README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "README.md")
BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, few repetitions")
    parser.add_argument(
        "--only", nargs="+", choices=BENCHMARKS, default=None, help="run only these benchmarks"
    )
    parser.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    parser.add_argument("--results-dir", default=None, help="where the JSON files go")
    parser.add_argument("--no-readme", action="store_true", help="leave README.md unchanged")
    return parser.parse_args(argv)


def main(argv=None):
    """Run the selected benchmarks; returns the paths of the JSON files written."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from benchmarks import timing

    timing.configure_device(args.device, cpu_standin=args.quick)
    results_dir = timing.results_directory(args.results_dir, args.quick)
    paths = []
    for name in args.only or BENCHMARKS:
        module = importlib.import_module(f"benchmarks.{name}")
        timing.log(f"== {name} ({'quick' if args.quick else 'full'}, {args.device})")
        payload = module.run(quick=args.quick, device=args.device)
        paths.append(timing.write_json(payload, results_dir))
        timing.log(f"wrote {paths[-1]}")
    if not args.quick and not args.no_readme:
        update_readme(results_dir)
    return paths


def _load_payloads(results_dir):
    payloads = {}
    for path in glob.glob(os.path.join(results_dir, "*.json")):
        with open(path) as handle:
            payload = json.load(handle)
        # Other benchmarks (cold_start, roofline, ...) write their own tables.
        if payload.get("benchmark") in BENCHMARKS and not payload.get("quick"):
            payloads[payload["benchmark"]] = payload
    return [payloads[name] for name in BENCHMARKS if name in payloads]


def _number(value, digits=3):
    if value is None:
        return ""
    if isinstance(value, (int, float)):
        return f"{value:.{digits}f}" if abs(value) < 1000 else f"{value:.0f}"
    return str(value)


def results_table(payload):
    """Markdown of one benchmark: machine line, then one row per configuration."""
    machine = payload["machine"]
    lines = [
        f"### {payload['title']}",
        "",
        f"Measured {machine.get('date_utc', '')} UTC on {machine.get('device', 'cpu')}: "
        f"{machine.get('cpu', '')}, {machine.get('usable_cores', '?')} usable cores, "
        f"load average {machine.get('load_average')}; TensorFlow {machine.get('tensorflow')}, "
        f"Keras {machine.get('keras')}, keras-hub {machine.get('keras_hub')}.",
        "",
    ]
    results = payload["results"]
    # Each field's names over all rows, in the order they first appear.
    labels, ratio_names, memory_labels, extra_columns = (
        list(dict.fromkeys(name for result in results for name in result.get(field, {})))
        for field in ("timings", "ratios", "memory", "table_columns")
    )
    header = (
        ["case"]
        + [f"{label} ms" for label in labels]
        + [f"{label} MiB" for label in memory_labels]
        + extra_columns
        + ratio_names
    )
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---|" * len(header))
    for result in results:
        row = [result["case"]]
        for label in labels:
            stats = result.get("timings", {}).get(label)
            row.append(_number(1000 * stats["median_s"], 1) if stats else "")
        for label in memory_labels:
            memory = result.get("memory", {}).get(label)
            known = memory and memory["extra_mib"] is not None
            row.append(_number(memory["extra_mib"], 0) if known else "")
        for column in extra_columns:
            row.append(_number(result.get("table_columns", {}).get(column), 1))
        for name in ratio_names:
            value = result.get("ratios", {}).get(name)
            spread = result.get("ratio_spread", {}).get(name)
            cell = _number(value, 2)
            if spread:
                cell += f" [{spread[0]:.2f}, {spread[1]:.2f}]"
            row.append(cell)
        lines.append("| " + " | ".join(row) + " |")
    for skipped in payload.get("skipped", []):
        lines.append(f"\nSkipped: {skipped['case']}: {skipped['reason']}.")
    for note in payload.get("notes", []):
        lines.append(f"\nNote: {note}")
    return "\n".join(lines) + "\n"


def update_readme(results_dir, readme=README):
    """Rebuild the results section of `readme` from the JSON files of `results_dir`."""
    tables = "\n".join(results_table(payload) for payload in _load_payloads(results_dir))
    with open(readme) as handle:
        text = handle.read()
    if BEGIN not in text or END not in text:
        raise ValueError(
            f"`readme` must contain the markers {BEGIN} and {END}. Received: readme={readme!r}"
        )
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(readme, "w") as handle:
        handle.write(head + BEGIN + "\n\n" + tables + "\n" + END + tail)


if __name__ == "__main__":
    main()
