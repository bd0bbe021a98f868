"""The code keeps to the project's ruff configuration (pyproject.toml): lint and format."""

import importlib.util
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
FOLDERS = ("keras_attention", "examples", "benchmarks", "tests")


def _ruff(*arguments):
    if importlib.util.find_spec("ruff") is None:
        pytest.skip("ruff is not installed: `pip install -e '.[test]'` installs it")
    return subprocess.run(
        [sys.executable, "-m", "ruff", *arguments, *FOLDERS],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )


def test_ruff_lint_is_clean():
    result = _ruff("check", "--output-format", "concise", "--no-cache")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_clean():
    result = _ruff("format", "--check", "--no-cache")
    assert result.returncode == 0, "run `ruff format .`:\n" + result.stdout + result.stderr
