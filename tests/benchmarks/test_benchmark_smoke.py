"""Every benchmark runs at tiny sizes and writes the documented JSON (no timing checks)."""

import json
import math
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import run_all  # noqa: E402

PAYLOAD_KEYS = {"benchmark", "title", "quick", "machine", "settings", "results", "skipped", "notes"}
RESULT_KEYS = {"case", "config", "timings", "ratios", "ratio_spread", "cpu_ratios"}


def _check_ratio(value, where):
    assert isinstance(value, float) and math.isfinite(value) and value > 0, where


def test_every_benchmark_runs_quick_and_writes_its_json(tmp_path):
    paths = run_all.main(["--quick", "--results-dir", str(tmp_path), "--no-readme"])

    assert sorted(pathlib.Path(p).name for p in paths) == sorted(
        f"{name}.json" for name in run_all.BENCHMARKS
    )
    for path in paths:
        payload = json.loads(pathlib.Path(path).read_text())
        name = payload["benchmark"]
        assert PAYLOAD_KEYS <= set(payload), name
        assert payload["quick"] is True
        assert payload["machine"]["device"] == "cpu"
        assert payload["machine"]["cpu_count"] >= 1
        assert payload["results"], f"{name} measured nothing: {payload['skipped']}"
        with_ratios = 0
        for result in payload["results"]:
            assert RESULT_KEYS <= set(result), name
            for label, stats in result["timings"].items():
                assert stats["repeats"] >= 2, (name, label)
                assert 0 < stats["min_s"] <= stats["median_s"] <= stats["max_s"], (name, label)
            for ratio_name, value in result["ratios"].items():
                _check_ratio(value, (name, result["case"], ratio_name))
                low, high = result["ratio_spread"].get(ratio_name, (value, value))
                assert low <= value <= high, (name, ratio_name)
            # Only a model with no keras or keras-hub counterpart may lack ratios.
            has_peer = result.get("peer", "keras") is not None
            assert result["ratios"] or not has_peer, (name, result["case"])
            with_ratios += bool(result["ratios"])
        assert with_ratios, name

    # The README table is rebuilt from these files.
    table = run_all.results_table(json.loads(pathlib.Path(paths[0]).read_text()))
    assert "| case |" in table
