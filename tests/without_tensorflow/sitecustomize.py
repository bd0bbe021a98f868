"""Makes a Python process act as if TensorFlow were not installed.

Put this folder first on PYTHONPATH: Python imports `sitecustomize` at start,
and from then on `import tensorflow` (and tensorflow_text) fails as it does on
a machine without them, such as a GPU machine with JAX alone. Nothing is put in
`sys.modules`, so code that asks whether TensorFlow was imported (keras does)
sees that it was not.
"""

import importlib.abc
import sys

MISSING = ("tensorflow", "tensorflow_text", "tf_keras")


class _NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in MISSING:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        return None


sys.meta_path.insert(0, _NotInstalled())
