"""benchmarks/gpu_jax.py at tiny sizes, on JAX with TensorFlow absent, as on the GPU machines."""

import importlib.util
import json
import math
import pathlib
import subprocess
import sys

import pytest
from without_tensorflow_environment import without_tensorflow_environment

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
SECTIONS = ("peaks", "vit_b16", "attention", "decoding", "models", "long_sequences")


@pytest.fixture(scope="module")
def sections(tmp_path_factory):
    if importlib.util.find_spec("jax") is None:
        pytest.skip("jax is not installed: pip install -e '.[backends]'")
    results = tmp_path_factory.mktemp("gpu_jax")
    environment = without_tensorflow_environment()
    command = [sys.executable, "-m", "benchmarks.gpu_jax", "--quick", "--results-dir", str(results)]
    completed = subprocess.run(
        command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=1200
    )
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-3000:]
    payloads = {name: json.loads((results / f"{name}.json").read_text()) for name in SECTIONS}
    payloads["directory"] = results
    return payloads


def _positive(value):
    return isinstance(value, float) and math.isfinite(value) and value > 0


@pytest.mark.parametrize("name", SECTIONS)
def test_every_section_ran_without_error(sections, name):
    payload = sections[name]
    assert "error" not in payload and "skipped" not in payload, payload
    assert payload["quick"] is True
    assert payload["machine"]["policy"] == "mixed_bfloat16"


def test_peaks_and_vit_rates_are_positive(sections):
    peaks = sections["peaks"]["results"]
    assert _positive(peaks["bf16_matmul_tflops"]) and _positive(peaks["copy_gb_per_s"])
    rows = sections["vit_b16"]["results"]["rows"]
    assert set(rows) == {"ours_auto", "ours_fused", "keras_hub"}
    for row in rows.values():
        assert _positive(row["images_per_second"]) and _positive(row["mfu_vs_measured_matmul"])


def test_attention_peers_agree_before_they_are_timed(sections):
    rows = sections["attention"]["results"]["rows"]
    assert rows["MultiHeadAttention"]["output_relative_error"] < 2e-2  # bfloat16
    for row in rows.values():
        ratio = next(value for key, value in row.items() if key.startswith("time ours/"))
        assert _positive(ratio)


def test_cached_decoding_equals_rerunning_the_model(sections):
    for case in sections["decoding"]["results"]["cases"]:
        assert case["cached_equals_rerun"] is True, case
        assert _positive(case["speedup rerun/cached"])


def test_every_model_family_fits_without_recompiling(sections):
    rows = sections["models"]["results"]["rows"]
    assert len(rows) == 7
    for name, row in rows.items():
        assert row["compiled"] is True, (name, row)
        assert row["loss_finite"], name
        assert row["compiles_in_first_epoch"] >= 1, name  # the counter sees compilations
        assert row["compiles_in_second_epoch"] == 0, name


def test_long_sequence_kernels_agree_and_report_memory(sections):
    results = sections["long_sequences"]["results"]
    for kernel, error in results["agreement"].items():
        assert error < 2e-2, kernel  # bfloat16 inputs
    kernels = {row["kernel"] for row in results["rows"]}
    assert kernels == {"auto", "chunked", "xla", "fused"}
    assert any(row["window"] for row in results["rows"])
    for row in results["rows"]:
        assert row["temp_gib"] is None or row["temp_gib"] >= 0
        assert _positive(row["tflops_per_second"])


def test_the_readme_tables_render_from_the_json(sections):
    from benchmarks import gpu_report

    markdown = gpu_report.gpu_markdown(str(sections["directory"]))
    for title, _ in gpu_report.RENDERERS.values():
        assert f"#### {title}" in markdown
    assert "Not measured" not in markdown
    assert markdown.count("| TransformerTranslator |") == 1
