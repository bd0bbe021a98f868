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


# train_nmt.py's settings for tests: tiny models and few held-out sentences keep the XLA
# compilations short. --max-length 12 is shorter than most pairs of a vocabulary this small:
# they are cut.
NMT_TINY_FLAGS = [
    "--long-pairs",
    "truncate",
    "--hidden-dim",
    "8",
    "--num-layers",
    "1",
    "--num-heads",
    "2",
    "--batch-size",
    "8",
    "--max-length",
    "12",
    "--vocabulary-size",
    "300",
    "--eval-sentences",
    "4",
    "--samples",
    "2",
    "--plots",
    "1",
]
