"""The RNN translator's attention variants, one against the other, on long targets.

Usage:

    python -m benchmarks.rnn_translator_variants                       # every variant and set
    python -m benchmarks.rnn_translator_variants --data number_words_dutch \
        --variants bahdanau coverage location
    python -m benchmarks.rnn_translator_variants --seeds 0 1 2

Each variant is `examples/train_nmt.py --model rnn` with the flags of
`VARIANTS` added and nothing else (the script derives sequence length,
batch size, epochs and schedule), trained on a translation data set of
`benchmarks.learning` (written there with seed 0, held out with seed 1),
exported, and scored on the held-out pairs through the SavedModel
(`benchmarks.learning_scores.score_translator`: exact strings, BLEU, chrF).
The Transformer with its defaults runs beside them as the mark to reach.
Every wrong translation is kept in the JSON (`benchmarks/results/
rnn_translator_variants.json`), so that a repeated or skipped part can be
read there; results of variants not run this time are kept from earlier runs.

Example (the commands, without running them):

>>> from benchmarks.rnn_translator_variants import VARIANTS
>>> VARIANTS["coverage"]
['--model', 'rnn', '--location-features', 'coverage']
>>> VARIANTS["bahdanau"]
['--model', 'rnn', '--location-features', 'none']
"""

import argparse
import dataclasses
import json
import os
import shutil
import sys
import time

from benchmarks import learning
from benchmarks import learning_scores
from benchmarks import timing

RESULTS_PATH = os.path.join(
    learning.REPOSITORY, "benchmarks", "results", "rnn_translator_variants.json"
)
# Every RNN variant names its location features, so that the rows keep their meaning
# whatever the script's default.
_RNN = ["--model", "rnn"]
VARIANTS = {
    # Bahdanau's additive attention from the previous state, as published.
    "bahdanau": _RNN + ["--location-features", "none"],
    # Luong's: the new state attends, its attentional vector fed back to the cell.
    "luong_input_feeding": _RNN + ["--attention-style", "luong", "--location-features", "none"],
    "luong_general_input_feeding": _RNN
    + ["--attention-style", "luong", "--attention", "general", "--location-features", "none"],
    # Which part of Luong's fails to lock on: the scaled dot score in place of general.
    "luong_scaled_dot_input_feeding": _RNN
    + ["--attention-style", "luong", "--attention", "scaled_dot", "--location-features", "none"],
    # Luong's at a third of the RNN's default peak rate (3e-3), where it did not lock on.
    "luong_general_input_feeding_1e-3": _RNN
    + ["--attention-style", "luong", "--attention", "general", "--location-features", "none"]
    + ["--learning-rate", "1e-3"],
    # The scores see the past alignments: their sum, or the previous one convolved.
    "coverage": _RNN + ["--location-features", "coverage"],
    "location": _RNN + ["--location-features", "location"],
    # Is it the schedule? Twice the 20 epochs the script derives for 3,000 pairs.
    "bahdanau_40_epochs": _RNN + ["--location-features", "none", "--epochs", "40"],
    "transformer": ["--model", "transformer"],
}
DEFAULT_DATA = ("number_words_dutch", "number_words_finnish")
MAX_ERRORS_KEPT = 40


def _data_set(name):
    for data in learning.DATA_SETS:
        if data.name == name and data.family == "nmt":
            return data
    names = [data.name for data in learning.DATA_SETS if data.family == "nmt"]
    raise ValueError(f"`--data` must name translation sets of {names}. Received: {name!r}")


def run_variant(data, variant, seed, output_dir):
    """Trains, exports and scores one variant; returns its JSON record."""
    made = learning.make_data(data, os.path.join(output_dir, "data"), quick=False)
    run_dir = os.path.join(output_dir, "runs", f"{data.name}_{data.train}_{variant}_seed{seed}")
    if os.path.isdir(run_dir):
        shutil.rmtree(run_dir)  # a leftover backup would resume an old run
    os.makedirs(os.path.dirname(run_dir), exist_ok=True)
    export = os.path.join(run_dir, "export")
    command = [
        sys.executable,
        learning.SCRIPTS["nmt"],
        "--dataset",
        f"tsv:{made['train']['path']}",
        "--output-dir",
        run_dir,
        "--export",
        export,
        "--seed",
        str(seed),
        *VARIANTS[variant],
    ]
    print(f"{data.name} {variant} seed {seed}: {' '.join(command)}", file=sys.stderr, flush=True)
    code, wall, cpu, tail = learning.run_command(command, run_dir + ".log", timeout=None)
    record = {
        "data": data.name,
        "variant": variant,
        "seed": seed,
        "train_pairs": data.train,
        "flags": VARIANTS[variant],
        "cpu_s": round(cpu, 1),
        "wall_s": round(wall, 1),
        "trained_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "script_metrics": learning.read_run_metrics(run_dir),
        "scores": None,
        "error": None,
    }
    if code != 0 or not os.path.isdir(export):
        record["error"] = f"exit {code}: " + "\n".join(tail)
        return record
    sources, targets = learning.held_out_pairs(made["train"], made["held_out"])
    serve = learning_scores.load_serving(export)
    record["scores"] = learning_scores.score_translator(
        serve, sources, targets, max_errors=MAX_ERRORS_KEPT
    )
    return record


def _merge(path, records):
    """Earlier records of other (data, variant, seed) triples, then these."""
    if not os.path.exists(path):
        return records
    with open(path) as handle:
        earlier = json.load(handle).get("results", [])

    def key(record):
        return record["data"], record.get("train_pairs"), record["variant"], record["seed"]

    fresh = {key(r) for r in records}
    return [r for r in earlier if key(r) not in fresh] + records


def summary_lines(records):
    """One line per record: data, variant, seed, exact, chrF, CPU s."""
    lines = []
    for r in records:
        scores = r["scores"] or {}
        exact = scores.get("exact_match")
        lines.append(
            f"{r['data']:22s} {r.get('train_pairs', ''):>6} {r['variant']:28s} seed {r['seed']}  "
            + (f"exact {exact:.3f} chrF {scores['chrf']:.1f}" if exact is not None else "failed")
            + f"  ({r['cpu_s']:.0f} CPU s)"
        )
    return lines


def markdown_table(records):
    """Exact matches per data set and variant: every seed's, their mean and the worst.

    Example:

    >>> from benchmarks.rnn_translator_variants import markdown_table
    >>> record = lambda variant, seed, exact: {"data": "d", "train_pairs": 30,
    ...     "variant": variant, "seed": seed, "scores": {"exact_match": exact, "count": 9}}
    >>> print(markdown_table([record("bahdanau", 0, 0.5), record("bahdanau", 1, 1.0)]))
    | data set | pairs | variant | exact, each seed | mean | worst | held out |
    |---|---|---|---|---|---|---|
    | d | 30 | bahdanau | 0.500, 1.000 | 0.750 | 0.500 | 9 |
    """
    groups = {}
    for record in records:
        if record.get("scores"):
            key = (record["data"], record.get("train_pairs"), record["variant"])
            groups.setdefault(key, []).append(record)
    order = list(VARIANTS)
    lines = [
        "| data set | pairs | variant | exact, each seed | mean | worst | held out |",
        "|---|---|---|---|---|---|---|",
    ]
    for key in sorted(groups, key=lambda k: (k[0], k[1] or 0, order.index(k[2]))):
        runs = sorted(groups[key], key=lambda r: r["seed"])
        exact = [r["scores"]["exact_match"] for r in runs]
        lines.append(
            f"| {key[0]} | {key[1]} | {key[2]} | {', '.join(f'{e:.3f}' for e in exact)} | "
            f"{sum(exact) / len(exact):.3f} | {min(exact):.3f} | {runs[0]['scores']['count']} |"
        )
    return "\n".join(lines)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="+", default=list(DEFAULT_DATA), help="translation sets")
    parser.add_argument(
        "--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS), metavar="NAME"
    )
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument(
        "--train-pairs",
        type=int,
        default=None,
        help="training pairs to write instead of the data set's own number",
    )
    parser.add_argument("--output-dir", default=os.path.join(learning.REPOSITORY, "runs", "rnn"))
    parser.add_argument("--results", default=RESULTS_PATH, help="JSON file to write")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    data_sets = [_data_set(name) for name in args.data]
    if args.train_pairs:
        data_sets = [dataclasses.replace(data, train=args.train_pairs) for data in data_sets]
    records = []
    for data in data_sets:
        for variant in args.variants:
            for seed in args.seeds:
                records.append(run_variant(data, variant, seed, args.output_dir))
                payload = {
                    "benchmark": "rnn_translator_variants",
                    "machine": timing.machine_description(),
                    "results": _merge(args.results, records),
                }
                os.makedirs(os.path.dirname(os.path.abspath(args.results)), exist_ok=True)
                with open(args.results, "w") as handle:
                    json.dump(payload, handle, indent=1, ensure_ascii=False)
                print(summary_lines(records[-1:])[0], file=sys.stderr, flush=True)
    print("\n".join(summary_lines(records)))
    with open(args.results) as handle:
        print(markdown_table(json.load(handle)["results"]))
    return args.results


if __name__ == "__main__":
    main()
