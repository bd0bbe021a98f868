"""keras_attention on Keras' JAX and PyTorch backends, each run in a process of its own.

Keras fixes its backend when it is imported, and this test session runs on
TensorFlow, so `backend_checks.py` runs once per backend in a subprocess with
KERAS_BACKEND set (both at once) and writes a report that the tests below read,
one test per check. A backend whose package is not installed is skipped,
naming it: `pip install -e ".[backends]"` installs both.
"""

import importlib.util
import json
import os
import subprocess
import sys
import time

import backend_checks
import pytest

import keras_attention as ka

# Keras backend -> the package it runs on.
BACKENDS = {"jax": "jax", "torch": "torch"}
# (backend, start of a check's name) -> why it fails there. The test expects the
# failure (strict): a fix upstream shows up as a failing test, to update this and
# the README's "Backends" table.
KNOWN_FAILURES = {
    ("torch", "model "): (
        "the models set their layers before keras.Model.__init__, which torch.nn.Module refuses"
    ),
    ("jax", "ops dot_product_attention fused value_dim"): (
        "keras.ops.dot_product_attention on JAX needs the value's head size to equal the key's"
    ),
}
# A check process that takes longer has hung.
CHECK_TIMEOUT_SECONDS = 900


def _missing_package(backend):
    package = BACKENDS[backend]
    if importlib.util.find_spec(package) is None:
        return f"{package} is not installed: pip install -e '.[backends]' to test KERAS_BACKEND={backend}"
    return None


def _backend_environment(backend):
    environment = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3")
    paths = [str(backend_checks.ROOT), environment.get("PYTHONPATH", "")]
    environment["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    return environment


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """Backend -> its report, from check processes started together on first use."""
    available = [backend for backend in BACKENDS if _missing_package(backend) is None]
    if not available:
        return {}
    saved = tmp_path_factory.mktemp("saved_on_tensorflow")
    backend_checks.save_every_layer_model(saved)
    running = {}
    for backend in available:
        folder = tmp_path_factory.mktemp(backend)
        report, log = folder / "report.json", folder / "log.txt"
        # A file, not a pipe: a process that writes much never waits on a full pipe.
        with open(log, "w", encoding="utf-8") as output:
            process = subprocess.Popen(
                [sys.executable, backend_checks.__file__, str(report), str(saved)],
                env=_backend_environment(backend),
                stdout=output,
                stderr=subprocess.STDOUT,
            )
        running[backend] = (process, report, log, time.perf_counter())
    results = {}
    for backend, (process, report, log, start) in running.items():
        try:
            process.wait(timeout=CHECK_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        seconds = time.perf_counter() - start
        if not report.exists():
            output = log.read_text(encoding="utf-8", errors="replace")
            pytest.fail(f"the {backend} check process wrote no report:\n{output[-5000:]}")
        results[backend] = json.loads(report.read_text(encoding="utf-8"))
        print(f"{backend} checks: {seconds:.0f} s")
    return results


def _report(reports, backend):
    missing = _missing_package(backend)
    if missing:
        pytest.skip(missing)
    return reports[backend]


@pytest.mark.parametrize("name", list(backend_checks.checks()))
@pytest.mark.parametrize("backend", list(BACKENDS))
def test_backend_check(reports, backend, name):
    entry = _report(reports, backend)[name]
    if entry["status"] == "skipped":
        pytest.skip(f"{backend}: {entry['message']}")
    known = [
        why for (b, start), why in KNOWN_FAILURES.items() if b == backend and name.startswith(start)
    ]
    if known:
        assert entry["status"] == "failed", f"{name} now passes on {backend}: update KNOWN_FAILURES"
        pytest.xfail(known[0])
    assert entry["status"] == "ok", f"{name} on {backend}:\n{entry['message']}"


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_every_public_layer_ran_on_the_backend(reports, backend):
    ran = {name.split()[1] for name in _report(reports, backend) if name.startswith("layer ")}
    missing = sorted(set(backend_checks.public_layer_names()) - ran)
    assert not missing, (
        f"public layers never built on {backend}: {missing}; give each a LayerSpec in "
        "tests/layers (its harness specs are the backend matrix)"
    )


def test_the_matrix_is_every_public_layer_of_the_package():
    aliases = {"GroupedQueryAttention"}  # keras' second name for GroupQueryAttention
    assert ka.layers.GroupedQueryAttention is ka.layers.GroupQueryAttention
    expected = set(ka.layers.__all__) - {"BaseAttention"} - aliases
    assert set(backend_checks.public_layer_names()) == expected
    assert len(backend_checks.public_layer_names()) >= 15
