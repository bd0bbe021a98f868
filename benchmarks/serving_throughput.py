"""Serving throughput: one loaded SavedModel under 1, 4 and 16 concurrent clients.

Two exported models, with random weights (speed only): the translator of
`cold_start` (strings in, translations out, greedy search inside) and a
small Vision Transformer classifier (pixels in, probabilities and labels
out). Each is loaded with TensorFlow alone (`tf.saved_model.load`, after
`import tensorflow_text` for the translator's SentencePiece op), as a server
does, and its `serving_default` signature called by client threads,
one request (one sentence, one 32x32 image) at a time, for a fixed time:

- "direct": every client calls the signature itself;
- "batched": clients hand their request to one batching thread, which sends
  it at once when it is alone, and otherwise waits up to `--window-ms` for
  more (at most `--max-batch`), calls the signature once on the batch, and
  hands each client its row.

Before timing, the batched answers are checked equal to the direct ones
(the same translations; probabilities within 1e-5), and every batch size is
run once so that no request pays a first trace. Reported per model, mode and
clients: requests/s, p50 and p99 latency (ms), mean batch size; and the
ratio batched/direct of requests/s.

    python -m benchmarks.serving_throughput            # results/serving_throughput.json
    python -m benchmarks.serving_throughput --quick    # a smoke run
"""

import argparse
import os
import queue
import sys
import tempfile
import threading
import time

import numpy as np

CLIENTS = (1, 4, 16)
IMAGE_SIDE = 32


def parse_args(argv=None):
    """The benchmark's flags (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="short runs: checks that it works")
    parser.add_argument("--seconds", type=float, default=8.0, help="timed seconds per row")
    parser.add_argument("--max-batch", type=int, default=16, help="largest batch the batcher sends")
    parser.add_argument("--window-ms", type=float, default=2.0, help="how long a batch waits")
    parser.add_argument("--results-dir", default=None, help="where the JSON goes")
    return parser.parse_args(argv)


def export_classifier(folder):
    """A small ViT classifier exported with `export_image_classifier`; returns its path."""
    import keras

    from keras_attention.models.image_classification.vision_transformer import vision_transformer
    from keras_attention.serving.image_classification_export import export_image_classifier

    keras.utils.set_random_seed(0)
    model = vision_transformer(
        image_size=IMAGE_SIDE,
        patch_size=4,
        num_classes=10,
        hidden_dim=64,
        num_layers=4,
        num_heads=4,
        mlp_dim=128,
    )
    path = os.path.join(folder, "classifier")
    export_image_classifier(model, path, [f"class_{index}" for index in range(10)])
    return path


class Batcher:
    """Groups requests for a few milliseconds and answers them with one call.

    A request that finds the queue empty is sent at once; one that finds
    others waiting waits up to `window_s` for more, as they are arriving.

    Args:
        serve: `serve(batch) -> dict of (B, ...) arrays`, the signature.
        stack: `stack(requests) -> batch` for `serve`.
        max_batch: the most requests in one call.
        window_s: how long the first request of a batch waits for others.
    """

    def __init__(self, serve, stack, max_batch, window_s):
        self.serve, self.stack = serve, stack
        self.max_batch, self.window_s = max_batch, window_s
        self.requests = queue.Queue()
        self.batch_sizes = []
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def __call__(self, request):
        """Answers one request (blocking): the dict of its outputs, batch axis removed."""
        done, answer = threading.Event(), {}
        self.requests.put((request, done, answer))
        done.wait()
        return answer["outputs"]

    def _loop(self):
        while True:
            pending = [self.requests.get()]
            # Alone in the queue: nobody to wait for (one client gets no added latency);
            # otherwise requests are arriving, and the window gathers them.
            window = 0.0 if self.requests.empty() else self.window_s
            deadline = time.perf_counter() + window
            while len(pending) < self.max_batch:
                try:
                    pending.append(
                        self.requests.get(timeout=max(0.0, deadline - time.perf_counter()))
                    )
                except queue.Empty:
                    break
            outputs = self.serve(self.stack([request for request, _, _ in pending]))
            outputs = {name: np.asarray(value) for name, value in outputs.items()}
            self.batch_sizes.append(len(pending))
            for row, (_, done, answer) in enumerate(pending):
                answer["outputs"] = {name: value[row] for name, value in outputs.items()}
                done.set()


def load_client_functions(path, kind):
    """`(direct, stack)`: one request in, its outputs out; and how requests form a batch."""
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  the translator's SentencePiece op

    signature = tf.saved_model.load(path).signatures["serving_default"]
    name = "text" if kind == "translator" else "images"

    def serve(batch):
        return signature(**{name: tf.constant(batch)})

    def direct(request):
        outputs = serve(stack([request]))
        return {key: np.asarray(value)[0] for key, value in outputs.items()}

    if kind == "translator":

        def stack(requests):
            return np.asarray(requests, dtype=object)
    else:

        def stack(requests):
            return np.stack(requests)

    return serve, direct, stack


def check_batched_equals_direct(direct, batcher, requests, kind):
    """Raises AssertionError unless the batched answers are the direct ones."""
    answers = [None] * len(requests)

    def ask(index):
        answers[index] = batcher(requests[index])

    threads = [threading.Thread(target=ask, args=(index,)) for index in range(len(requests))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for request, answer in zip(requests, answers, strict=True):
        expected = direct(request)
        if kind == "translator":
            assert answer["translation"] == expected["translation"], (answer, expected)
        else:
            np.testing.assert_allclose(
                answer["probabilities"], expected["probabilities"], atol=1e-5
            )


def measure(call, requests, clients, seconds):
    """Requests/s, p50 and p99 (ms) of `clients` threads calling `call` for `seconds`."""
    latencies, lock = [], threading.Lock()
    stop_at = time.perf_counter() + seconds

    def client(offset):
        index = offset
        own = []
        while time.perf_counter() < stop_at:
            start = time.perf_counter()
            call(requests[index % len(requests)])
            own.append(time.perf_counter() - start)
            index += clients
        with lock:
            latencies.extend(own)

    start = time.perf_counter()
    threads = [threading.Thread(target=client, args=(offset,)) for offset in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - start
    milliseconds = np.asarray(latencies) * 1000
    return {
        "requests": len(latencies),
        "requests_per_s": len(latencies) / elapsed,
        "p50_ms": float(np.percentile(milliseconds, 50)),
        "p99_ms": float(np.percentile(milliseconds, 99)),
    }


def run(quick=False, seconds=8.0, max_batch=16, window_ms=2.0):
    """Exports both models, measures every row; returns the JSON payload."""
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    from benchmarks import cold_start
    from benchmarks import timing

    seconds = 0.5 if quick else seconds  # quick: enough for a few requests of every row
    rng = np.random.default_rng(0)
    results = []
    with tempfile.TemporaryDirectory() as folder:
        translator, sentences = cold_start.export_serving_translator(folder, quick)
        classifier = export_classifier(folder)
        images = rng.integers(0, 256, (64, IMAGE_SIDE, IMAGE_SIDE, 3)).astype("float32")
        cases = (
            ("translator", translator, sentences[:64]),
            ("classifier", classifier, list(images)),
        )
        for kind, path, requests in cases:
            serve, direct, stack = load_client_functions(path, kind)
            batcher = Batcher(serve, stack, max_batch, window_ms / 1000)
            for size in range(1, max_batch + 1):  # every batch shape traced before timing
                serve(stack(requests[:size]))
            check_batched_equals_direct(direct, batcher, requests[: 2 * max_batch], kind)
            for clients in CLIENTS:
                row = {"model": kind, "clients": clients}
                timing.log(f"{kind}, {clients} client(s): direct, then batched")
                row["direct"] = measure(direct, requests, clients, seconds)
                batcher.batch_sizes.clear()
                row["batched"] = measure(batcher, requests, clients, seconds)
                row["batched"]["mean_batch"] = float(np.mean(batcher.batch_sizes))
                row["batched_over_direct_requests_per_s"] = (
                    row["batched"]["requests_per_s"] / row["direct"]["requests_per_s"]
                )
                results.append(row)
    settings = {"seconds": seconds, "max_batch": max_batch, "window_ms": window_ms}
    notes = [
        "One request is one sentence (translator, greedy search) or one 32x32 image (ViT: "
        "4 layers, width 64, patch 4); random weights. Batched answers were checked equal to "
        "the direct ones before timing.",
    ]
    return timing.make_payload(
        "serving_throughput", "Serving throughput", results, quick, "cpu", settings, notes=notes
    )


def main(argv=None):
    """Runs the benchmark, writes its JSON, prints the table."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from benchmarks import timing

    payload = run(args.quick, args.seconds, args.max_batch, args.window_ms)
    path = timing.write_json(payload, timing.results_directory(args.results_dir, args.quick))
    print(results_table(payload))
    timing.log(f"wrote {path}")
    return path


def results_table(payload):
    """The Markdown table of a payload: one row per model and clients."""
    lines = [
        "| model | clients | direct req/s | p50 ms | p99 ms | batched req/s | p50 ms | p99 ms "
        "| mean batch | batched/direct |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in payload["results"]:
        direct, batched = row["direct"], row["batched"]
        lines.append(
            f"| {row['model']} | {row['clients']} | {direct['requests_per_s']:.1f} | "
            f"{direct['p50_ms']:.1f} | {direct['p99_ms']:.1f} | {batched['requests_per_s']:.1f} | "
            f"{batched['p50_ms']:.1f} | {batched['p99_ms']:.1f} | {batched['mean_batch']:.1f} | "
            f"{row['batched_over_direct_requests_per_s']:.2f} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
