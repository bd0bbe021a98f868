"""Loading the example scripts (which are not a package) as modules in tests."""

import importlib.util
import pathlib

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"


def load_example(name, prefix="_example"):
    """`examples/<name>.py` as a fresh module named `<prefix>_<name>`."""
    spec = importlib.util.spec_from_file_location(f"{prefix}_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
