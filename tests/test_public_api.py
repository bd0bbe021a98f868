"""Every public layer is exported, registered, and checked by the shared harness."""

import importlib.util
import inspect
import pathlib
import sys

import keras

import keras_attention as ka

TESTS = pathlib.Path(__file__).resolve().parent
# Base classes to subclass, not layers to use as they are.
ABSTRACT = {"BaseAttention"}


def _public_layer_classes():
    classes = []
    for name in sorted(set(ka.layers.__all__) - ABSTRACT):
        obj = getattr(ka.layers, name)
        if inspect.isclass(obj) and issubclass(obj, keras.layers.Layer):
            classes.append(obj)
    return classes


def _harness_specs():
    specs = []
    # Layer test modules import their NumPy references from their own folder.
    sys.path.insert(0, str(TESTS / "layers"))
    for path in sorted((TESTS / "layers").rglob("test_*.py")):
        spec = importlib.util.spec_from_file_location(f"_harness_scan_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        specs.extend(getattr(module, "SPECS", []))
    sys.path.remove(str(TESTS / "layers"))
    return specs


def test_there_are_public_layers():
    assert len(_public_layer_classes()) >= 15


def test_every_public_layer_is_registered_under_the_package():
    for cls in _public_layer_classes():
        registered = keras.saving.get_registered_name(cls)
        assert registered == f"keras_attention>{cls.__name__}", registered
        assert keras.saving.get_registered_object(registered) is cls


def test_every_public_layer_has_a_harness_spec():
    covered = {spec.cls for spec in _harness_specs()}
    missing = [cls.__name__ for cls in _public_layer_classes() if cls not in covered]
    assert not missing, f"public layers without a harness spec: {missing}"


def test_every_public_layer_documents_a_runnable_example():
    for cls in _public_layer_classes():
        doc = inspect.getdoc(cls) or ""
        assert "Example" in doc and ">>>" in doc, f"{cls.__name__} has no runnable example"
        assert "Args:" in doc or not inspect.signature(cls.__init__).parameters, cls.__name__
