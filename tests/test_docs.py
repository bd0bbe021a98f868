"""The README's code blocks and every docstring example run as written."""

import doctest
import importlib
import pathlib
import pkgutil
import re

import pytest

import keras_attention

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _package_modules():
    names = []
    for module in pkgutil.walk_packages(keras_attention.__path__, "keras_attention."):
        names.append(module.name)
    return sorted(names)


@pytest.mark.parametrize("module_name", _package_modules())
def test_docstring_examples(module_name):
    module = importlib.import_module(module_name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False
    )
    # Examples run in a copy of the module's namespace, as `pytest --doctest-modules`.
    for test in finder.find(module, module_name):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {module_name}"


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
