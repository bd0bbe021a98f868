"""The operation profile runs quick in its own process and writes its JSON (no timing checks)."""

import json
import math
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_a_quick_profile_splits_the_thread_time_by_operation(tmp_path):
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks.operation_profile", "chunked_forward", "--quick"]
        + ["--calls", "1", "--results-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    payload = json.loads((tmp_path / "operation_profile_chunked_forward.json").read_text())
    settings, rows = payload["settings"], payload["results"]
    assert settings["wall_ms"] > 0 and settings["thread_ms"] > 0
    assert math.isclose(settings["busy_threads"], settings["thread_ms"] / settings["wall_ms"])
    kinds = {row["kind"] for row in rows}
    # Operations of the program (fusions, dots), not events of the runtime.
    assert kinds and not any(kind.startswith(("ThunkExecutor", "end: ")) for kind in kinds)
    assert not any(kind[-1].isdigit() and "." in kind for kind in kinds)  # numbers stripped
    assert math.isclose(sum(row["share"] for row in rows), 1.0, rel_tol=1e-9)
    assert "threads busy" in completed.stdout
    running = settings["operations_running_ms"]
    assert set(running) == {"0", "1", "2+"}
    assert math.isclose(sum(running.values()), settings["wall_ms"], rel_tol=1e-9)


def test_concurrency_splits_an_execution_by_how_many_operations_ran_at_once():
    from benchmarks.operation_profile import concurrency

    # Execution 0-100: an operation 10-50, another 30-70, a third 60-65 and one
    # outside (200-210); execution 300-310 with nothing running.
    executions = [(0, 100), (300, 310)]
    operations = [(10, 50), (30, 70), (60, 65), (200, 210)]
    # none: 0-10, 70-100, 300-310; one: 10-30, 50-60, 65-70; two or more: 30-50, 60-65.
    assert concurrency(executions, operations) == {"0": 50, "1": 35, "2+": 25}
