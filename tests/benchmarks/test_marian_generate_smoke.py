"""The Marian-against-transformers benchmark runs quick and writes its JSON (no timing checks)."""

import importlib.util
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import marian_generate  # noqa: E402


def test_a_quick_run_compares_both_searches_or_says_why_not(tmp_path):
    path = marian_generate.main(["--quick", "--results-dir", str(tmp_path), "--batch", "4"])
    payload = json.loads(pathlib.Path(path).read_text())
    if not all(importlib.util.find_spec(name) for name in ("torch", "transformers")):
        assert payload["results"] == [] and "needs torch and transformers" in payload["skipped"][0]
        return
    rows = {row["search"]: row for row in payload["results"]}
    assert sorted(rows) == ["beam 4", "greedy", "tokenize only"]
    for row in rows.values():
        assert row["ours_ms_per_sentence"] > 0 and row["transformers_ms_per_sentence"] > 0
        # The same checkpoint gives the same ids and strings in both (random weights).
        assert row["same_strings"] == row["sentences"]
    assert rows["greedy"]["sentences"] == 4 and rows["tokenize only"]["sentences"] == 256
