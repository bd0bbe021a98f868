"""A quick GPU benchmark run on a machine without a GPU (no timing checks).

It runs in its own process, apart from the quick CPU run of every benchmark
(tests/benchmarks/test_benchmark_smoke.py), in a file of its own so that the
two long runs can go to different test workers.
"""

import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_a_quick_gpu_run_without_a_gpu_runs_on_the_cpu_and_says_so(tmp_path):
    """The GPU configuration (bf16, the ViT case) is checked before any GPU is at hand.

    The layer benchmarks train in bf16 there, which the float32 quick run does not
    (the attention layer stands for both layer benchmarks: they share that code).
    """
    environment = dict(os.environ, CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="3")
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.run_all",
            "--quick",
            "--device",
            "gpu",
            "--only",
            "attention_layer",
            "end_to_end",
            "--results-dir",
            str(tmp_path),
            "--no-readme",
        ],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "No GPU is visible" in completed.stdout + completed.stderr
    payload = json.loads((tmp_path / "end_to_end.json").read_text())
    assert payload["machine"]["device"].startswith("cpu standing in for gpu")
    vit_cases = [r for r in payload["results"] if r["case"].startswith("ViT-Ti/16")]
    assert len(vit_cases) == 1 and vit_cases[0]["config"]["policy"] == "mixed_bfloat16"
    assert vit_cases[0]["images_per_second"] > 0
    layer_payload = json.loads((tmp_path / "attention_layer.json").read_text())
    assert layer_payload["results"]
