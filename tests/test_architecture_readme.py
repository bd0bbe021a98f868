"""README's "Architecture" tree against the package on disk, so that the two cannot drift.

The tree is the fenced block of that section. A line that starts with names ending in
`/` or `.py` (several may share a line: `losses/, metrics/, callbacks/`) places them in
the folder two spaces to its left above it; the rest of the line, and the more indented
lines under it, describe it. A `*.py` name in a
description is a file of the folder described (of the file's own folder, for a file).
"""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "keras_attention"
README = ROOT / "README.md"

# Folders whose every sub-folder the tree must show, besides the package's own subpackages.
SHOWN_IN_FULL = ("layers", "models", "tasks")

_ENTRY_NAME = r"[\w.-]+(?:/|\.py)(?=[,\s]|$)"
_ENTRY = re.compile(rf"({_ENTRY_NAME}(?:,\s*{_ENTRY_NAME})*),?")
_FILE_MENTION = re.compile(r"(?<![\w./-])([\w/.-]+\.py)\b")


def architecture_tree(text):
    """The lines of the fenced block in the README's "## Architecture" section."""
    section = text.split("\n## Architecture\n", 1)[1].split("\n## ", 1)[0]
    return section.split("```", 2)[1].splitlines()[1:]


def tree_entries(lines):
    """`(entries, mentions)`: paths the tree places, and `*.py` paths its descriptions name.

    Both are repository-relative `pathlib.PurePosixPath`s, with the README line they come
    from; a folder entry's path ends with the folder's name.
    """
    entries, mentions = [], []
    folders = [(-2, pathlib.PurePosixPath("."))]  # (indent, folder) of the open folders
    described = pathlib.PurePosixPath(".")  # the folder a description's file names sit in
    for line in lines:
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        open_above = [folder for folder in folders if folder[0] < indent]
        match = _ENTRY.match(line.strip())
        # An entry sits one step (two spaces) inside its folder; deeper lines are descriptions.
        if match and indent == open_above[-1][0] + 2:
            folders = open_above
            parent = folders[-1][1]
            for name in re.split(r",\s*", match.group(1)):
                path = parent / name.rstrip("/")
                entries.append((path, name.endswith("/"), line))
                described = path if name.endswith("/") else parent
                if name.endswith("/"):
                    folders.append((indent, path))
            description = line.strip()[match.end() :]
        else:
            description = line
        for name in _FILE_MENTION.findall(description):
            mentions.append((described / name, line))
    return entries, mentions


def _package_folders(folder):
    return sorted(path for path in folder.iterdir() if path.is_dir() and any(path.glob("*.py")))


def expected_entries():
    """The package's top-level modules and subpackages, and the sub-folders of a few."""
    modules = [path for path in PACKAGE.glob("*.py") if path.name != "__init__.py"]
    folders = _package_folders(PACKAGE)
    for name in SHOWN_IN_FULL:
        folders += _package_folders(PACKAGE / name)
    return sorted(modules + folders)


def _relative(path):
    return pathlib.PurePosixPath(path.relative_to(ROOT).as_posix())


def test_the_readme_tree_shows_every_module_and_folder_it_should():
    entries, _ = tree_entries(architecture_tree(README.read_text(encoding="utf-8")))
    shown = {path for path, _, _ in entries}
    missing = [_relative(path) for path in expected_entries() if _relative(path) not in shown]
    advice = [
        f"add `{path.name}{'/' if (ROOT / path).is_dir() else ''}` to the tree under "
        f"`{path.parent}/`"
        for path in missing
    ]
    assert not missing, "README.md, Architecture: " + "; ".join(advice)


def test_every_file_and_folder_the_readme_tree_names_exists_where_it_says():
    entries, mentions = tree_entries(architecture_tree(README.read_text(encoding="utf-8")))
    wrong = []
    for path, is_folder, line in entries:
        on_disk = ROOT / path
        if not (on_disk.is_dir() if is_folder else on_disk.is_file()):
            wrong.append(
                f"remove or move `{path}{'/' if is_folder else ''}` (line: {line.strip()!r})"
            )
    for path, line in mentions:
        if not (ROOT / path).is_file():
            wrong.append(
                f"remove or correct `{path.name}`: no file {path} (line: {line.strip()!r})"
            )
    assert not wrong, "README.md, Architecture: " + "; ".join(wrong)


def test_the_tree_parser_reads_shared_lines_and_descriptions():
    entries, mentions = tree_entries(
        [
            "pkg/",
            "  a.py      one (b.py)",
            "  sub/      two: c.py, d.py",
            "    e.py, f.py,",
            "    g.py    three",
            "              head.py), more",
            "              i.py and j.py, too",
            "  x/, y/    four",
            "docs/",
        ]
    )
    path = pathlib.PurePosixPath
    assert [(str(p), folder) for p, folder, _ in entries] == [
        ("pkg", True),
        ("pkg/a.py", False),
        ("pkg/sub", True),
        ("pkg/sub/e.py", False),
        ("pkg/sub/f.py", False),
        ("pkg/sub/g.py", False),
        ("pkg/x", True),
        ("pkg/y", True),
        ("docs", True),
    ]
    assert [p for p, _ in mentions] == [
        path("pkg/b.py"),
        path("pkg/sub/c.py"),
        path("pkg/sub/d.py"),
        path("pkg/sub/head.py"),
        path("pkg/sub/i.py"),
        path("pkg/sub/j.py"),
    ]
