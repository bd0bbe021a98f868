"""The scheduler benchmark runs quick, one child process per scheduler, and writes its JSON.

No timing checks: what is checked is that every child ran under the flag it
was meant to, and that the summary is built from the children's numbers.
"""

import json
import pathlib
import subprocess
import sys

from benchmarks import xla_cpu_scheduler

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_a_quick_run_times_the_case_under_both_schedulers(tmp_path):
    case = "MultiHeadAttention T=256"
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks.xla_cpu_scheduler", "--quick", "--cases", case]
        + ["--pairs", "1", "--results-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    payload = json.loads((tmp_path / "xla_cpu_scheduler.json").read_text())
    assert payload["quick"] and payload["settings"]["flag"] == xla_cpu_scheduler.SERIAL_FLAG
    (row,) = payload["results"]
    assert row["case"] == case and row["peer"] == "keras"
    assert set(row["schedulers"]) == set(xla_cpu_scheduler.SCHEDULERS)
    for scheduler, children in row["children"].items():
        (child,) = children
        assert child["ms"]["ours"] > 0 and child["ms"]["keras"] > 0
        summary = row["schedulers"][scheduler]
        assert summary["ours_ms"] == child["ms"]["ours"]
        assert summary["ours_over_peer"] == child["ours_over_peer"]
    default, ordered = (row["children"][name][0]["ms"] for name in xla_cpu_scheduler.SCHEDULERS)
    assert row["memory_ordered_over_default"]["keras"] == ordered["keras"] / default["keras"]
    assert "ours/keras" in completed.stdout


def test_a_child_gets_the_flag_only_under_the_memory_ordered_scheduler(monkeypatch):
    seen = []

    def fake_run(command, env, **kwargs):
        seen.append(env["XLA_FLAGS"])
        ms = {"ours": 2.0, "keras": 4.0} if xla_cpu_scheduler.SERIAL_FLAG in env["XLA_FLAGS"] else {
            "ours": 3.0, "keras": 5.0}  # fmt: skip
        result = {"ms": ms, "ours_over_peer": ms["ours"] / ms["keras"], "peer": "keras"}
        return subprocess.CompletedProcess(command, 0, stdout=json.dumps(result) + "\n", stderr="")

    monkeypatch.setenv("XLA_FLAGS", "--xla_dump_to=/nowhere " + xla_cpu_scheduler.SERIAL_FLAG)
    monkeypatch.setattr(xla_cpu_scheduler.subprocess, "run", fake_run)
    args = xla_cpu_scheduler.parse_args(["--pairs", "2"])
    row = xla_cpu_scheduler.run_case("MultiHeadAttention T=256", args)
    # Pairs alternate the order; the user's own flags are kept, the scheduler's set per child.
    assert seen == [
        "--xla_dump_to=/nowhere",
        "--xla_dump_to=/nowhere " + xla_cpu_scheduler.SERIAL_FLAG,
        "--xla_dump_to=/nowhere " + xla_cpu_scheduler.SERIAL_FLAG,
        "--xla_dump_to=/nowhere",
    ]
    assert row["memory_ordered_over_default"] == {"ours": 2.0 / 3.0, "keras": 4.0 / 5.0}
    assert row["schedulers"]["memory-ordered"]["ours_over_peer"] == 0.5
    assert row["schedulers"]["concurrent (default)"]["ours_over_peer"] == 0.6
