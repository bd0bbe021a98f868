"""The scripts show this package's warnings as `warning: ...` lines, others as Python does."""

import subprocess
import sys
import textwrap
import warnings

import keras_attention.data.text_lines as package_module
from keras_attention.training.command_line import show_warnings_as_lines


def test_the_package_warnings_are_one_line_and_the_others_keep_pythons_format(monkeypatch):
    monkeypatch.setattr(warnings, "formatwarning", warnings.formatwarning)  # restored after
    show_warnings_as_lines()
    ours = warnings.formatwarning("Skipped 2 lines", UserWarning, package_module.__file__, 9, "x")
    assert ours == "warning: Skipped 2 lines\n"
    theirs = warnings.formatwarning("deprecated", UserWarning, "/usr/lib/keras/x.py", 9, "x()")
    assert theirs == "/usr/lib/keras/x.py:9: UserWarning: deprecated\n  x()\n"
    # Not a user-facing kind of warning: Python's format, even from the package.
    assert "DeprecationWarning" in warnings.formatwarning(
        "old", DeprecationWarning, package_module.__file__, 9, None
    )


def test_a_script_prints_the_warning_of_a_package_function_as_one_line(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(
        textwrap.dedent(
            """
            from keras_attention.data.text_lines import read_text_lines
            from keras_attention.training.command_line import show_warnings_as_lines

            show_warnings_as_lines()
            open("lines.txt", "wb").write(b"one\\n\\xff\\n")
            read_text_lines("lines.txt")
            """
        )
    )
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert result.returncode == 0, result.stderr
    # (TensorFlow's own start-up lines may come first: this script does not drop them.)
    assert result.stderr.splitlines()[-1] == (
        "warning: Skipped 1 line(s) of lines.txt that are not UTF-8: line 2."
    )
    assert "UserWarning" not in result.stderr and "read_text_lines(" not in result.stderr
