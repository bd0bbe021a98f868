"""The serving-throughput benchmark runs quick and writes its JSON (no timing checks)."""

import json
import pathlib
import sys
import threading
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import serving_throughput  # noqa: E402


def test_a_quick_run_measures_every_model_and_client_count(tmp_path):
    path = serving_throughput.main(["--quick", "--results-dir", str(tmp_path)])
    payload = json.loads(pathlib.Path(path).read_text())
    assert payload["benchmark"] == "serving_throughput" and payload["quick"] is True
    rows = {(row["model"], row["clients"]): row for row in payload["results"]}
    assert set(rows) == {(m, c) for m in ("translator", "classifier") for c in (1, 4, 16)}
    for row in rows.values():
        for mode in ("direct", "batched"):
            stats = row[mode]
            assert stats["requests"] > 0 and stats["requests_per_s"] > 0
            assert 0 < stats["p50_ms"] <= stats["p99_ms"]
        assert 1 <= row["batched"]["mean_batch"] <= 16
    # One client never has company: each of its batches holds its one request.
    assert rows[("classifier", 1)]["batched"]["mean_batch"] == 1


def test_the_batcher_answers_each_request_with_its_own_row():
    calls = []

    def serve(batch):
        calls.append(len(batch))
        time.sleep(0.05)  # the requests that arrive meanwhile queue up for the next call
        return {"double": batch * 2}

    batcher = serving_throughput.Batcher(serve, np.stack, max_batch=4, window_s=0.05)
    answers = {}

    def ask(value):
        answers[value] = batcher(np.asarray([value]))["double"]

    threads = [threading.Thread(target=ask, args=(value,)) for value in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert {value: int(answer[0]) for value, answer in answers.items()} == {
        value: 2 * value for value in range(8)
    }
    assert sum(calls) == 8 and max(calls) <= 4 and len(calls) < 8
