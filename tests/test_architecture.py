"""The package's import rules (README, "Architecture"), read from the source with `ast`."""

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "keras_attention"

# Which subpackages each one may import. Lower levels never import higher ones,
# and nothing outside `models` needs a model's classes to decode, export or draw.
ALLOWED_IMPORTS = {
    "validation": set(),
    "durable_files": set(),
    "backend_support": set(),
    "version": set(),
    # Imports the serializable subpackages by name (importlib), never by an import statement.
    "registration": set(),
    "ops": {"validation"},
    "layers": {"ops", "validation"},
    "text": {"validation"},
    "data": {"ops", "text", "validation"},
    "generation": {"backend_support", "ops", "validation"},
    "callbacks": {"durable_files", "validation"},
    "losses": {"validation"},
    "metrics": {"losses", "validation"},
    "visualization": {"text", "validation"},
    "serving": {"backend_support", "generation", "text", "validation"},
    "models": {
        "layers",
        "ops",
        "generation",
        "losses",
        "text",
        "serving",
        "callbacks",
        "validation",
    },
    "training": {
        "backend_support",
        "callbacks",
        "durable_files",
        "data",
        "losses",
        "metrics",
        "models",
        "text",
        "validation",
    },
}


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts == ("__init__",):
            continue
        yield path, parts[0], ast.parse(path.read_text(encoding="utf-8"))


def _imports(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield node.module, [alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, []


def test_every_subpackage_has_a_rule():
    subpackages = {level for _, level, _ in _modules()}
    assert subpackages == set(ALLOWED_IMPORTS)


@pytest.mark.parametrize("path, level, tree", list(_modules()), ids=lambda v: str(v)[-60:])
def test_imports_go_one_way_and_touch_no_private_names(path, level, tree):
    for module, names in _imports(tree):
        if not module.startswith("keras_attention."):
            continue
        target = module.split(".")[1]
        if target != level:
            assert target in ALLOWED_IMPORTS[level], f"{path.name} imports {module}"
        if module.split(".")[-1] != path.stem:
            private = [n for n in names if n.startswith("_")]
            assert not private, f"{path.name} imports private {private} from {module}"


def test_no_module_outside_models_looks_layers_up_by_name():
    for path, level, tree in _modules():
        if level == "models":
            continue
        calls = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get_layer"
        ]
        assert not calls, f"{path} calls get_layer"
