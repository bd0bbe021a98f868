"""The example scripts' parsers load without TensorFlow, so `--help` answers at once."""

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
