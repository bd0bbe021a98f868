"""Serving latency from a cold load: the first 100 requests against warm ones.

A `transformer_translator` with random weights (its vocabularies learned from
the built-in corpus) is exported with `export_translator`. Then, for each
way of loading, a fresh Python process (nothing cached, as a server that
starts) loads the SavedModel and sends requests one sentence at a time:

- "plain load": `import tensorflow_text` (its SentencePiece op) then
  `tf.saved_model.load(path).signatures["serving_default"]`, what a user of
  TensorFlow without keras_attention does;
- "load_translator (warmed)": `keras_attention.serving.load_translator`,
  which calls the loaded function once on a short sentence before returning.

For each it records the seconds to load (warm-up included), the latency of
each of the first 100 requests, and of 200 requests after those ("warm").
Reported: p50 and p99 of the first 100 and of the warm ones, and the ratios
cold / warm. The goal: the first requests after loading within 2x of warm.

    python -m benchmarks.cold_start            # writes benchmarks/results/cold_start.json
    python -m benchmarks.cold_start --quick    # a smoke run
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
MODES = ("plain load", "load_translator (warmed)")


def export_serving_translator(folder, quick):
    """The translator these benchmarks serve, exported under `folder`; `(path, sentences)`."""
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    import keras

    from keras_attention.models.translation.transformer_translator import transformer_translator
    from keras_attention.serving.translation_export import export_translator
    from keras_attention.tasks.translation.builtin_corpus import builtin_translation_pairs
    from keras_attention.text.reversible_tokenizer import ReversibleTokenizer

    keras.utils.set_random_seed(0)
    pairs = builtin_translation_pairs(400 if quick else 4000, seed=0)
    source = ReversibleTokenizer.train([s for s, _ in pairs], 600)
    target = ReversibleTokenizer.train([t for _, t in pairs], 600)
    length = 24
    sizes = dict(hidden_dim=64, num_layers=2, num_heads=4, intermediate_dim=128)
    model = transformer_translator(
        source_vocabulary_size=source.vocabulary_size,
        target_vocabulary_size=target.vocabulary_size,
        max_source_length=length,
        max_target_length=length,
        **sizes,
    )
    path = os.path.join(folder, "translator")
    export_translator(model, path, source, target, length, length)
    return path, [s for s, _ in pairs]


def _child(path, mode, sentences, cold_requests, warm_requests):
    """Runs in a fresh process; prints one JSON line."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    start = time.perf_counter()
    import tensorflow as tf

    if mode == "plain load":
        import tensorflow_text  # noqa: F401  registers the tokenizers' SentencePiece op

        serve = tf.saved_model.load(path).signatures["serving_default"]

        def translate(text):
            return serve(text=tf.constant([text]))

    else:
        from keras_attention.serving.translation_export import load_translator

        loaded = load_translator(path)

        def translate(text):
            return loaded([text])

    load_seconds = time.perf_counter() - start
    latencies = []
    for index in range(cold_requests + warm_requests):
        sentence = sentences[index % len(sentences)]
        begin = time.perf_counter()
        translate(sentence)["translation"].numpy()
        latencies.append(time.perf_counter() - begin)
    print(json.dumps({"load_seconds": load_seconds, "latencies": latencies}))


def _percentiles(seconds):
    values = np.asarray(seconds) * 1000.0
    return {
        "p50_ms": float(np.percentile(values, 50)),
        "p99_ms": float(np.percentile(values, 99)),
        "max_ms": float(values.max()),
    }


def run(quick=False):
    cold_requests, warm_requests = (10, 20) if quick else (100, 200)
    results = {
        "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cpus": os.cpu_count(),
        "load_average_before": [round(value, 2) for value in os.getloadavg()],
        "cold_requests": cold_requests,
        "warm_requests": warm_requests,
        "modes": {},
    }
    with tempfile.TemporaryDirectory() as folder:
        path, sentences = export_serving_translator(folder, quick)
        sentences_path = os.path.join(folder, "sentences.json")
        with open(sentences_path, "w") as file:
            json.dump(sentences[:500], file)
        for mode in MODES:
            output = (
                subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "benchmarks.cold_start",
                        "--child",
                        path,
                        mode,
                        sentences_path,
                        str(cold_requests),
                        str(warm_requests),
                    ],
                    capture_output=True,
                    text=True,
                    check=True,
                    cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                )
                .stdout.strip()
                .splitlines()[-1]
            )
            measured = json.loads(output)
            latencies = measured["latencies"]
            cold = _percentiles(latencies[:cold_requests])
            warm = _percentiles(latencies[cold_requests:])
            results["modes"][mode] = {
                "load_seconds": round(measured["load_seconds"], 3),
                "first_request_ms": round(latencies[0] * 1000.0, 1),
                "cold": cold,
                "warm": warm,
                "cold_over_warm_p50": cold["p50_ms"] / warm["p50_ms"],
                "cold_over_warm_p99": cold["p99_ms"] / warm["p99_ms"],
                "first_over_warm_p50": latencies[0] * 1000.0 / warm["p50_ms"],
            }
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--child", nargs=5, metavar=("PATH", "MODE", "SENTENCES", "COLD", "WARM"))
    args = parser.parse_args(argv)
    if args.child:
        path, mode, sentences_path, cold, warm = args.child
        with open(sentences_path) as file:
            sentences = json.load(file)
        _child(path, mode, sentences, int(cold), int(warm))
        return None
    results = run(args.quick)
    os.makedirs(RESULTS, exist_ok=True)
    name = "cold_start_quick.json" if args.quick else "cold_start.json"
    with open(os.path.join(RESULTS, name), "w") as file:
        json.dump(results, file, indent=2)
    for mode, numbers in results["modes"].items():
        print(
            f"{mode:28s} load {numbers['load_seconds']:.2f} s, first request "
            f"{numbers['first_request_ms']:.0f} ms; first {results['cold_requests']}: p50 "
            f"{numbers['cold']['p50_ms']:.1f} ms p99 {numbers['cold']['p99_ms']:.1f} ms max "
            f"{numbers['cold']['max_ms']:.0f} ms; warm: "
            f"p50 {numbers['warm']['p50_ms']:.1f} ms p99 {numbers['warm']['p99_ms']:.1f} ms; "
            f"cold/warm p50 {numbers['cold_over_warm_p50']:.2f}x "
            f"p99 {numbers['cold_over_warm_p99']:.2f}x"
        )
    return results


if __name__ == "__main__":
    main()
