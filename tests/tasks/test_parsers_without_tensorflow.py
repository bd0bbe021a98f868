"""The example scripts' parsers load without TensorFlow, so `--help` answers at once."""

import pathlib
import subprocess
import sys

import pytest

_PROBE = """
import sys
import importlib
module = importlib.import_module({module!r})
module.{builder}().parse_args([])
print("TENSORFLOW", "tensorflow" in sys.modules, "KERAS", "keras" in sys.modules)
"""


@pytest.mark.parametrize(
    "module, builder",
    [
        ("keras_attention.tasks.translation.flags", "build_translation_parser"),
        ("keras_attention.tasks.captioning.flags", "build_captioning_parser"),
        ("keras_attention.tasks.image_classification.flags", "build_vit_parser"),
    ],
)
def test_parser_modules_import_no_tensorflow(module, builder):
    result = subprocess.run(
        [sys.executable, "-c", _PROBE.format(module=module, builder=builder)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.stdout.split() == ["TENSORFLOW", "False", "KERAS", "False"], result.stderr


_HELP = """
import runpy, sys
sys.argv = [{script!r}, "--help"]
try:
    runpy.run_path({script!r}, run_name="__main__")
except SystemExit:
    pass
print("TENSORFLOW", "tensorflow" in sys.modules)
"""


@pytest.mark.parametrize(
    "script",
    [
        "quickstart",
        "train_nmt",
        "train_captioning",
        "train_vit",
        "keras_attention.export",
        "keras_attention.convert",
    ],
)
def test_every_command_answers_help_without_loading_tensorflow(script):
    if script.startswith("keras_attention"):
        code = _PROBE.format(module=script, builder="build_parser").replace(
            ".parse_args([])", ".print_help()"
        )
    else:
        path = pathlib.Path(__file__).resolve().parents[2] / "examples" / f"{script}.py"
        code = _HELP.format(script=str(path))
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert "usage:" in result.stdout and "--" in result.stdout
    assert "TENSORFLOW False" in result.stdout
    assert result.stderr == ""  # no TensorFlow log lines
