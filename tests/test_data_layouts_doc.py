"""docs/data_layouts.md stays true: every example on it is built from its blocks and read.

Each section with a `files` block is a small data set: the files it lists are
written under a temporary folder (the text files with exactly the contents of
their blocks, the others as images), the section's command is parsed for its
`--dataset` and flags, the library's reader for that script loads it, and
what it reads must be what the section's "**Reads:**" line says.
"""

import io
import pathlib
import re
import shlex
import warnings

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "data_layouts.md"
FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```$", flags=re.DOTALL | re.MULTILINE)
IMAGE_SIZES = ((12, 16), (20, 10), (9, 9))  # images of a data set may differ in size


def _sections():
    """`{heading: text}` of the page's `## ` sections."""
    parts = re.split(r"^## ", PAGE.read_text(encoding="utf-8"), flags=re.MULTILINE)[1:]
    return {part.split("\n", 1)[0].strip(): part for part in parts}


def _examples():
    return {heading: text for heading, text in _sections().items() if "```text files" in text}


def _blocks(section):
    """`(info, body)` of each fenced block of a section."""
    return [(match.group(1).strip(), match.group(2)) for match in FENCE.finditer(section)]


def _example_files(section):
    """`(listed paths, {path: text})`: the `files` block, and the blocks that give contents."""
    listed, contents = None, {}
    for info, body in _blocks(section):
        if info == "text files":
            listed = body.split()
        elif info.split()[0] in ("text", "json") and body.split("\n", 1)[0].endswith(":"):
            path, text = body.split("\n", 1)
            contents[path[:-1]] = text
    return listed, contents


def _image_bytes(path, index):
    from PIL import Image

    height, width = IMAGE_SIZES[index % len(IMAGE_SIZES)]
    pixels = np.random.default_rng(index).integers(0, 256, (height, width, 3), dtype=np.uint8)
    buffer = io.BytesIO()
    kind = "JPEG" if path.lower().endswith((".jpg", ".jpeg")) else "PNG"
    Image.fromarray(pixels).save(buffer, kind)
    return buffer.getvalue()


def _build(section, folder):
    listed, contents = _example_files(section)
    assert listed, "a `files` block lists the example's files"
    assert set(contents) <= set(listed), f"blocks of files the list lacks: {set(contents)}"
    for index, name in enumerate(listed):
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if name in contents:
            path.write_text(contents[name], encoding="utf-8")
        else:
            path.write_bytes(_image_bytes(name, index))
    return listed, contents


def _command(section):
    """`(script, {flag: value})` of the section's one `bash` block."""
    commands = [body for info, body in _blocks(section) if info == "bash"]
    assert len(commands) == 1, "one command per example"
    words = shlex.split(commands[0])
    assert words[0] == "python" and words[1].startswith("examples/"), words
    flags = dict(zip(words[2::2], words[3::2]))
    assert all(flag.startswith("--") for flag in flags), words
    return pathlib.Path(words[1]).stem, flags


def _reads(section, pattern):
    match = re.search(r"^\*\*Reads:\*\* " + pattern + r"$", section, flags=re.MULTILINE)
    assert match, f"no '**Reads:**' line of the form {pattern!r}"
    return match.groups()


def _count(dataset):
    return sum(1 for _ in dataset)


def _load_captions(flags, section):
    from keras_attention.tasks.captioning.sources import load_caption_dataset

    images, captions, *sizes = _reads(
        section,
        r"(\d+) images, (\d+) captions: train (\d+), validation (\d+), test (\d+) images\.",
    )
    splits = load_caption_dataset(
        flags.pop("--dataset"),
        8,
        image_column=flags.pop("--image-column", "image"),
        caption_column=flags.pop("--caption-column", "caption"),
    )
    names = ("train", "validation", "test")
    assert [splits.sizes[name] for name in names] == [int(size) for size in sizes]
    assert sum(splits.sizes.values()) == int(images)
    # Every image decodes: each split yields one element per caption.
    assert [_count(splits[name]) for name in names] == [splits.elements[name] for name in names]
    assert sum(splits.elements.values()) == int(captions)


def _load_images(flags, section):
    from keras_attention.tasks.image_classification.sources import load_image_classification_dataset

    images, classes, class_names, *sizes = _reads(
        section,
        r"(\d+) images of (\d+) classes \(([^)]*)\): train (\d+), validation (\d+), "
        r"test (\d+) images\.",
    )
    data = load_image_classification_dataset(flags.pop("--dataset"), 8)
    names = ("train", "validation", "test")
    assert data.class_names == class_names.split(", ") and len(data.class_names) == int(classes)
    assert [data.split_sizes[name] for name in names] == [int(size) for size in sizes]
    assert [_count(data.splits[name]) for name in names] == [int(size) for size in sizes]
    assert sum(data.split_sizes.values()) == int(images)


def _load_pairs(flags, section):
    from keras_attention.tasks.translation.sources import load_translation_pairs

    pairs, *sizes = _reads(
        section, r"(\d+) sentence pairs: train (\d+), validation (\d+), test (\d+) pairs\."
    )
    splits = load_translation_pairs(
        flags.pop("--dataset"),
        source_lang=flags.pop("--source-lang", None),
        target_lang=flags.pop("--target-lang", None),
    )
    names = ("train", "validation", "test")
    counted = [_count(splits[name]) for name in names]
    assert counted == [int(size) for size in sizes] and sum(counted) == int(pairs)
    return splits


LOADERS = {"train_captioning": _load_captions, "train_vit": _load_images, "train_nmt": _load_pairs}


def test_the_page_has_examples_of_every_kind():
    scripts = {_command(section)[0] for section in _examples().values()}
    assert scripts == set(LOADERS)
    assert len(_examples()) >= 10


@pytest.mark.parametrize("heading", sorted(_examples()))
def test_each_example_reads_as_the_page_says(heading, tmp_path, monkeypatch):
    section = _examples()[heading]
    _build(section, tmp_path)
    script, flags = _command(section)
    monkeypatch.chdir(tmp_path)  # the page's paths are relative to where the command runs
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        LOADERS[script](flags, section)
    said = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert not said, f"the example reads with warnings: {said}"
    assert not flags, f"flags the test does not pass on: {flags}"


def test_the_tab_separated_examples_hold_tabs():
    for heading, section in _examples().items():
        for name, text in _example_files(section)[1].items():
            if name.endswith((".tsv", ".token.txt")):
                lines = [line for line in text.splitlines() if line]
                assert all("\t" in line for line in lines), (heading, name)


def test_the_datasets_folder_example_reads(tmp_path, monkeypatch):
    pytest.importorskip("datasets")
    section = _sections()["Translation: a `datasets` folder"]
    code = [body for info, body in _blocks(section) if info == "python"]
    monkeypatch.chdir(tmp_path)
    exec(compile(code[0], "docs/data_layouts.md", "exec"), {"__name__": "__docs__"})
    _load_pairs(_command(section)[1], section)


def test_the_contents_list_every_section():
    text = PAGE.read_text(encoding="utf-8")
    contents = _sections()["Contents"]
    links = re.findall(r"^- \[(.+)\]\(#([^)]+)\)$", contents, flags=re.MULTILINE)
    headings = [heading for heading in _sections() if heading != "Contents"]
    assert [title for title, _ in links] == headings
    anchors = {_anchor(heading) for heading in re.findall(r"^#+ (.+)$", text, re.MULTILINE)}
    assert all(anchor in anchors for _, anchor in links), links


def _anchor(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def test_the_readme_links_the_page():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "(docs/data_layouts.md)" in readme
