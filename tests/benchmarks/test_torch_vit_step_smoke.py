"""The ViT-step benchmark against PyTorch runs quick and writes its JSON (no timing checks)."""

import importlib.util
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import torch_vit_step  # noqa: E402


def test_a_quick_run_measures_ours_and_says_what_it_skipped(tmp_path):
    path = torch_vit_step.main(["--quick", "--results-dir", str(tmp_path), "--batch", "8"])
    payload = json.loads(pathlib.Path(path).read_text())
    rows = {row["model"]: row for row in payload["results"]}
    assert rows["ours (TensorFlow, XLA)"]["ours_over_this"] == 1.0
    assert rows["keras-hub (TensorFlow, XLA)"]["ours_over_this"] > 0
    has_torch = all(importlib.util.find_spec(name) for name in ("torch", "transformers"))
    if not has_torch:
        assert payload["skipped"]
        assert list(rows) == ["ours (TensorFlow, XLA)", "keras-hub (TensorFlow, XLA)"]
    for row in rows.values():
        assert row["step_ms"] > 0 and row["images_per_s"] > 0
