"""`ka.layers`, `ka.models` and the task packages load their modules on first use (PEP 562)."""

import importlib
import subprocess
import sys

import pytest

# The packages whose `__init__` names its exports instead of importing them.
LAZY_PACKAGES = (
    "keras_attention.layers",
    "keras_attention.models",
    "keras_attention.tasks.translation",
    "keras_attention.tasks.captioning",
    "keras_attention.tasks.image_classification",
)
# Modules that must import without Keras: the package alone, and the score names that the
# translation command line offers.
LIGHT_MODULES = (
    "keras_attention.layers",
    "keras_attention.models",
    "keras_attention.layers.attention.score_modes",
    *LAZY_PACKAGES[2:],
)

_PROBE = """
import importlib, sys
importlib.import_module({module!r})
print("HEAVY", sorted({{"keras", "tensorflow"}} & set(sys.modules)))
"""


@pytest.mark.parametrize("module", LIGHT_MODULES)
def test_importing_the_package_alone_loads_neither_keras_nor_tensorflow(module):
    result = subprocess.run(
        [sys.executable, "-c", _PROBE.format(module=module)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    assert "HEAVY []" in result.stdout, result.stdout


def _public_names(package):
    """`__all__` (`layers`, `models`), else the public names `dir()` lists (the task packages)."""
    if hasattr(package, "__all__"):
        assert package.__all__ == sorted(set(package.__all__)), "sorted, without repeats"
        assert set(package.__all__) <= set(dir(package))
        return package.__all__
    return [name for name in dir(package) if not name.startswith("_") and name != "lazy_exports"]


@pytest.mark.parametrize("package_name", LAZY_PACKAGES)
def test_every_exported_name_resolves_and_is_listed(package_name):
    package = importlib.import_module(package_name)
    names = _public_names(package)
    assert len(names) >= 10
    for name in names:
        value = getattr(package, name)
        assert getattr(value, "__module__", package_name).startswith(package_name), name
    with pytest.raises(AttributeError, match="no attribute 'NoSuchName'"):
        package.NoSuchName  # noqa: B018


def test_layer_and_model_exports_are_the_classes_of_their_modules():
    import keras_attention as ka
    from keras_attention.layers.attention.multi_head_attention import MultiHeadAttention
    from keras_attention.models.translation.transformer_translator import transformer_translator

    assert ka.layers.MultiHeadAttention is MultiHeadAttention
    assert ka.layers.GroupQueryAttention is ka.layers.GroupedQueryAttention
    assert ka.models.transformer_translator is transformer_translator
    assert len(ka.layers.__all__) == 29 and len(ka.models.__all__) == 27
