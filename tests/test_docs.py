"""Every docstring example runs as written; the README's links and commands hold.

The README's code blocks run in tests/test_readme_code_blocks.py.
"""

import doctest
import importlib
import pathlib
import pkgutil
import re
import shlex

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


def _github_anchor(heading):
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as dashes."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _level_two_headings(text):
    """The `## ` headings outside fenced code blocks."""
    outside = re.sub(r"^```.*?^```", "", text, flags=re.DOTALL | re.MULTILINE)
    return re.findall(r"^## (.+)$", outside, flags=re.MULTILINE)


def test_readme_contents_link_every_section_in_order():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    contents = text[text.index("\nContents:\n") : text.index("\n## ")]
    links = re.findall(r"\[([^\]]+)\]\(#([^)]+)\)", contents)
    headings = _level_two_headings(text)
    assert [title for title, _ in links] == headings
    assert [anchor for _, anchor in links] == [_github_anchor(h) for h in headings]


def test_readme_links_to_files_that_exist():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    outside = re.sub(r"^```.*?^```", "", text, flags=re.DOTALL | re.MULTILINE)
    anchors = {_github_anchor(h) for h in re.findall(r"^#+ (.+)$", outside, flags=re.MULTILINE)}
    prose = re.sub(r"`[^`\n]*`", "", outside)  # code spans hold no links
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", prose):
        if not target.startswith(("http://", "https://", "mailto:")):
            assert (ROOT / target).exists(), f"README links to {target}, which does not exist"
    for anchor in re.findall(r"\]\(#([^)]+)\)", prose):
        assert anchor in anchors, f"README links to #{anchor}, which no heading has"


def test_the_export_commands_are_in_the_readme_as_installed():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    setup = (ROOT / "setup.cfg").read_text(encoding="utf-8")
    commands = re.findall(r"^\s+(keras-attention-[\w-]+) = ", setup, flags=re.MULTILINE)
    assert sorted(commands) == ["keras-attention-convert", "keras-attention-export"]
    for command in commands:
        assert f"\n{command} " in text, f"no README example runs {command}"


def _documented_commands():
    """`(file, words)` of each command line the README and docs/ give for the example scripts
    and the installed commands; `[...]` optional parts and `# ...` comments dropped."""
    commands = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        blocks = re.findall(r"^```([^\n]*)\n(.*?)^```$", text, flags=re.DOTALL | re.MULTILINE)
        for body in [body for info, body in blocks if info.strip() in ("bash", "")]:
            for line in body.replace("\\\n", " ").splitlines():
                line = re.sub(r"\s+#.*$", "", re.sub(r"\[[^\]]*\]", "", line)).strip()
                if re.match(r"(python examples/|keras-attention-)", line):
                    commands.append((path.name, shlex.split(line)))
    return commands


def _command_parser(words):
    import importlib.util

    if words[0] == "python":
        path = ROOT / words[1]
        spec = importlib.util.spec_from_file_location(f"_documented_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if hasattr(module, "build_parser"):
            return module.build_parser(), words[2:]
        return None, words[2:]  # the quickstart parses in parse_args
    module = importlib.import_module(words[0].replace("keras-attention-", "keras_attention."))
    return module.build_parser(), words[1:]


def test_documented_commands_parse():
    commands = _documented_commands()
    assert {words[0] for _, words in commands} >= {"python", "keras-attention-export"}
    for name, words in commands:
        parser, arguments = _command_parser(words)
        try:
            if parser is None:
                _load_example("quickstart").parse_args(arguments)
            else:
                parser.parse_args(arguments)
        except SystemExit as error:
            raise AssertionError(f"{name}: `{shlex.join(words)}` does not parse") from error


def _load_example(name):
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        f"_example_{name}", ROOT / "examples" / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
