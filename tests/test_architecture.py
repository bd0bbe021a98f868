"""The package's import rules (README, "Architecture"), read from the source with `ast`.

Imports go one way: ops -> layers -> models -> tasks -> examples, with the
generic packages (generation, serving, text, data, losses, metrics,
callbacks, visualization, training) below tasks. Inside `layers` the kinds
have an order of their own; inside `models` and `tasks` each model family is
a room of its own that never imports another family.
"""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "keras_attention"
# One name per model family, the same in every room that has a module per family.
FAMILIES = ("translation", "captioning", "image_classification")

# Which subpackages each one may import. Lower levels never import higher ones,
# and nothing outside `models` needs a model's classes to decode, export or draw.
ALLOWED_IMPORTS = {
    "validation": set(),
    "durable_files": set(),
    # Progress bars and lines: for any long step, below everything that counts.
    "progress": set(),
    # Text data files that are not UTF-8 lines: for the readers and the flag checks.
    "file_encoding": set(),
    "backend_support": set(),
    # TensorFlow's start-up lines dropped from stderr: for scripts and the SentencePiece op.
    "native_start_up_lines": set(),
    "version": set(),
    # Imports the serializable subpackages by name (importlib), never by an import statement.
    "registration": set(),
    "ops": {"validation"},
    "layers": {"ops", "validation"},
    "text": {"native_start_up_lines", "progress", "validation"},
    "data": {"file_encoding", "progress", "validation"},
    "generation": {"backend_support", "ops", "validation"},
    "callbacks": {"durable_files", "validation"},
    "losses": {"validation"},
    "metrics": {"losses", "validation"},
    "visualization": {"text", "validation"},
    # Image bytes are decoded as the training pipeline decodes them (data.image_decoding).
    "serving": {"backend_support", "data", "generation", "text", "validation"},
    "training": {
        "backend_support",
        "callbacks",
        "data",
        "durable_files",
        "file_encoding",
        "progress",
        "validation",
    },
    "models": {"layers", "ops", "generation", "losses", "metrics", "text", "serving", "validation"},
    # `python -m keras_attention.export`: a command line over the tasks, as the examples are.
    "export": {"native_start_up_lines", "tasks", "training"},
    "convert": {"native_start_up_lines", "tasks", "training"},
    "tasks": {
        "backend_support",
        "callbacks",
        "data",
        "durable_files",
        "generation",
        "layers",
        "losses",
        "metrics",
        "models",
        "ops",
        "progress",
        "serving",
        "text",
        "training",
        "validation",
        "visualization",
    },
}

# Inside `layers`: which kinds each kind may import (positions feed attention,
# attention feeds the recurrent decoder and the blocks, all of them feed vision).
LAYER_KINDS = {
    "position": set(),
    "attention": {"position"},
    "recurrent": {"attention", "position"},
    "transformer": {"attention", "position"},
    "vision": {"attention", "position", "transformer"},
}

# What the example scripts may import: the families and the run plumbing,
# never the lower levels directly (a script is flags, wiring and a report).
EXAMPLE_IMPORTS = {"tasks", "training", "backend_support", "native_start_up_lines"}


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts == ("__init__",):
            continue
        yield path, parts, ast.parse(path.read_text(encoding="utf-8"))


def _imports(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield node.module, [alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, []


def _targets(module, names):
    """The package paths an import reaches: `from a.b import c` may import module a.b.c."""
    parts = module.split(".")[1:]
    yield parts
    for name in names:
        if (PACKAGE.joinpath(*parts, name).with_suffix(".py")).exists() or (
            PACKAGE.joinpath(*parts, name, "__init__.py")
        ).exists():
            yield parts + [name]


# Collected once, with ids that name the module: the same in every test process.
MODULES = list(_modules())
MODULE_IDS = [str(path.relative_to(PACKAGE)) for path, _, _ in MODULES]


def test_every_subpackage_has_a_rule():
    subpackages = {parts[0] for _, parts, _ in _modules()}
    assert subpackages == set(ALLOWED_IMPORTS)


def test_every_layer_module_sits_in_a_kind():
    kinds = {parts[1] for _, parts, _ in _modules() if parts[0] == "layers" and len(parts) > 2}
    loose = [
        parts
        for _, parts, _ in _modules()
        if parts[0] == "layers" and len(parts) == 2 and parts[1] != "__init__"
    ]
    assert kinds == set(LAYER_KINDS) and not loose


@pytest.mark.parametrize("path, parts, tree", MODULES, ids=MODULE_IDS)
def test_imports_go_one_way_and_touch_no_private_names(path, parts, tree):
    level = parts[0]
    for module, names in _imports(tree):
        if not module.startswith("keras_attention."):
            continue
        target = module.split(".")[1]
        if target != level:
            assert target in ALLOWED_IMPORTS[level], f"{path.name} imports {module}"
        if module.split(".")[-1] != path.stem:
            private = [n for n in names if n.startswith("_")]
            assert not private, f"{path.name} imports private {private} from {module}"


@pytest.mark.parametrize("path, parts, tree", MODULES, ids=MODULE_IDS)
def test_families_are_rooms_of_their_own(path, parts, tree):
    """A family never imports another family; the shared root never imports a family.

    Package `__init__` files, which only re-export their modules' names, are the exception.
    """
    if parts[0] not in ("models", "tasks", "layers") or path.name == "__init__.py":
        return
    for module, names in _imports(tree):
        for target in _targets(module, names):
            if len(target) < 2 or target[0] != parts[0] or target[1] == parts[1]:
                continue
            if parts[0] == "layers":
                assert target[1] in LAYER_KINDS[parts[1]], f"{path} imports {module}"
            else:
                assert target[1] not in FAMILIES, f"{path} imports {module}"


def test_every_room_names_the_families_alike():
    """models/, tasks/, serving/ and the explorer say "translation", "captioning" and
    "image_classification", never a second name (vision, vit, nmt, translator, caption)."""
    for room in ("models", "tasks"):
        folders = {
            p.name
            for p in (PACKAGE / room).iterdir()
            if p.is_dir() and (p / "__init__.py").exists()
        }
        assert set(FAMILIES) <= folders, f"{room}/ lacks {set(FAMILIES) - folders}"
        assert not folders - set(FAMILIES) - {"checkpoints"}, f"{room}/ has {folders}"
    exports = {p.stem for p in (PACKAGE / "serving").glob("*_export.py")}
    assert exports == {f"{family}_export" for family in FAMILIES}, exports
    explorer = {p.stem for p in (PACKAGE / "visualization" / "explorer").glob("*.py")}
    assert set(FAMILIES) <= explorer, explorer


def test_examples_use_only_the_families_and_the_run_plumbing():
    """A training script is flags, wiring and a report; the quickstart tours the public `ka.*`."""
    for path in sorted((ROOT / "examples").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        for module, _ in _imports(ast.parse(text)):
            if module.startswith("keras_attention."):
                assert module.split(".")[1] in EXAMPLE_IMPORTS, f"{path.name} imports {module}"
        if path.stem.startswith("train_"):
            assert "import keras_attention as" not in text, f"{path.name} reaches past tasks"


def test_examples_are_short():
    long_ones = {
        path.name: length
        for path in (ROOT / "examples").glob("*.py")
        if (length := len(path.read_text(encoding="utf-8").splitlines())) >= 150
    }
    assert not long_ones, f"examples of 150 lines or more: {long_ones}"


def _functions(root):
    """`(path, function node, lines of code after its docstring)` of every function under root."""
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                has_docstring = ast.get_docstring(node) is not None and len(node.body) > 1
                first = node.body[1 if has_docstring else 0].lineno
                yield path, node, node.end_lineno - first + 1


def test_long_functions_have_docstrings_and_very_long_ones_say_why():
    """Over 30 lines: a docstring; over 80 lines, docstring or code: one that says why.

    The reason is a sentence with "on purpose" in it: split a long function into
    named steps, or say there why it reads better whole (a long contract, one table).
    """
    undocumented, unexplained = [], []
    for root in (PACKAGE, ROOT / "examples"):
        for path, node, code_lines in _functions(root):
            docstring = ast.get_docstring(node) or ""
            name = f"{path.relative_to(ROOT)}:{node.name}"
            lines = node.end_lineno - node.lineno + 1
            if lines > 30 and not docstring:
                undocumented.append(name)
            if max(lines, code_lines) > 80 and "on purpose" not in docstring:
                unexplained.append(f"{name} ({lines} lines, {code_lines} of code)")
    assert not undocumented, f"functions over 30 lines without a docstring: {undocumented}"
    assert not unexplained, f"functions over 80 lines with no reason (on purpose): {unexplained}"


def test_the_command_line_of_every_family_imports_no_tensorflow():
    """`flags` modules are what `--help` loads: only the standard library and light modules."""
    heavy = {"tensorflow", "keras", "numpy", "keras_hub"}
    for family in ("translation", "captioning", "image_classification"):
        path = PACKAGE / "tasks" / family / "flags.py"
        top = {module.split(".")[0] for module, _ in _imports(ast.parse(path.read_text()))}
        assert not top & heavy, f"{path} imports {top & heavy}"


def test_no_module_outside_models_looks_layers_up_by_name():
    for path, parts, tree in _modules():
        if parts[0] == "models":
            continue
        calls = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get_layer"
        ]
        assert not calls, f"{path} calls get_layer"
