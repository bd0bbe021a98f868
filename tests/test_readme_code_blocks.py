"""The README's code blocks run as written, one after the other in one namespace.

Kept apart from the docstring examples (tests/test_docs.py): each takes minutes, and
separate files can run on separate test workers.
"""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _readme_python_blocks():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)


def test_readme_has_code_examples():
    assert len(_readme_python_blocks()) >= 4


def test_readme_code_blocks_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__readme__"}
    for index, block in enumerate(_readme_python_blocks()):
        try:
            exec(compile(block, f"README.md python block {index}", "exec"), namespace)
        except Exception as error:  # re-raise with the block for a readable failure
            raise AssertionError(f"README python block {index} failed:\n{block}") from error
