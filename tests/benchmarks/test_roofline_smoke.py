"""The roofline benchmark runs quick and writes its JSON (no timing checks)."""

import json
import math
import pathlib
import statistics
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import roofline  # noqa: E402


def test_a_quick_run_measures_every_path_against_the_matmul_rate(tmp_path):
    path = roofline.main(["--quick", "--results-dir", str(tmp_path), "--repeats", "1"])
    payload = json.loads(pathlib.Path(path).read_text())
    assert payload["benchmark"] == "roofline" and payload["settings"]["matmul_rate"] > 0
    cases = {(row["path"], row["mode"], row["length"]) for row in payload["results"]}
    assert len(cases) == 12  # 3 paths x 2 modes x 2 lengths
    size = payload["settings"]["reference_size"]
    for row in payload["results"]:
        assert row["flops"] > 0 and row["seconds"] > 0
        rounds = row["rounds"]
        # Each round's fraction: our FLOP/s over the square product's in that round.
        expected = [
            (row["flops"] / ours) / (2 * size**3 / matmul)
            for ours, matmul in zip(rounds["ours_s"], rounds["matmul_s"])
        ]
        assert all(map(math.isclose, rounds["fraction_of_matmul_rate"], expected))
        assert math.isclose(row["fraction_of_matmul_rate"], statistics.median(expected))
        # PyTorch's columns exactly where torch is installed.
        assert ("ours_over_torch" in row) == (
            roofline.torch_attention("xla", "forward", 8) is not None
        )
