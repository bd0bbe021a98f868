"""outside_links: symbolic links that lead out of a data set's folder, found without a stat per file."""

import os

import pytest

from keras_attention.data import outside_links
from keras_attention.data.outside_links import OutsideLinks
from keras_attention.data.outside_links import listed_links_outside
from keras_attention.data.outside_links import refuse_outside_links


@pytest.fixture
def counted_realpath(monkeypatch):
    """The paths `os.path.realpath` is called with while the test runs."""
    calls = []
    realpath = os.path.realpath

    def counted(path, *args, **kwargs):
        calls.append(str(path))
        return realpath(path, *args, **kwargs)

    monkeypatch.setattr(outside_links.os.path, "realpath", counted)
    return calls


def test_plain_files_cost_one_resolve_per_folder_not_per_file(tmp_path, counted_realpath):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        for number in range(200):
            (tmp_path / folder / f"{number}.png").write_bytes(b"")
    paths = [str(tmp_path / folder / f"{n}.png") for folder in ("a", "b") for n in range(200)]
    assert listed_links_outside(str(tmp_path), paths) == []
    assert len(counted_realpath) == 3  # the folder and its two image folders


def test_the_first_linked_folder_on_the_way_out_is_named(tmp_path):
    root, outside = tmp_path / "data", tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / "1.png").write_bytes(b"")
    (root / "images").mkdir(parents=True)
    os.symlink(outside, root / "images" / "linked")
    path = str(root / "images" / "linked" / "deep" / "1.png")
    assert listed_links_outside(str(root), [path]) == [
        (str(root / "images" / "linked"), str(outside))
    ]


def test_a_folder_that_is_itself_a_link_and_links_inside_it_are_fine(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "1.png").write_bytes(b"")
    os.symlink(tmp_path / "real" / "1.png", tmp_path / "real" / "2.png")
    os.symlink(tmp_path / "real", tmp_path / "data")
    paths = [str(tmp_path / "data" / name) for name in ("1.png", "2.png", "missing.png")]
    assert listed_links_outside(str(tmp_path / "data"), paths) == []
    # A folder that cannot be listed is left to the check for missing images.
    assert listed_links_outside(str(tmp_path / "data"), [str(tmp_path / "data/none/1.png")]) == []


def test_outside_links_resolves_links_alone_and_refuses_naming_them(tmp_path, counted_realpath):
    (tmp_path / "data").mkdir()
    for number in range(50):
        (tmp_path / "data" / f"{number}.png").write_bytes(b"")
    os.symlink("/", tmp_path / "data" / "root.png")
    links = OutsideLinks(str(tmp_path / "data"))
    for entry in os.scandir(tmp_path / "data"):
        links.add(entry)
    assert links.found == [(str(tmp_path / "data" / "root.png"), "/")]
    assert len(counted_realpath) == 2  # the folder, then the one link
    with pytest.raises(
        ValueError,
        match=r"^1 symbolic link\(s\) under .*data lead outside it: root\.png -> /\. .*"
        r"pass --allow-outside-links \(allow_outside_links=True\) to read them anyway\.$",
    ):
        links.refuse()
    allowed = OutsideLinks(str(tmp_path / "data"), allowed=True)
    for entry in os.scandir(tmp_path / "data"):
        allowed.add(entry)
    assert allowed.found == []
    allowed.refuse()


def test_a_long_list_of_links_names_ten_and_counts_the_rest():
    links = [(f"/d/{n}.png", f"/x/{n}.png") for n in range(12)]
    with pytest.raises(
        ValueError, match=r"^12 symbolic .*9\.png -> /x/9\.png, \.\.\. \(2 more\)\."
    ):
        refuse_outside_links("/d", links)


def test_a_link_to_nothing_is_called_broken_not_outside(tmp_path):
    (tmp_path / "data").mkdir()
    os.symlink(tmp_path / "gone" / "a.png", tmp_path / "data" / "a.png")
    os.symlink("/", tmp_path / "data" / "root.png")
    links = OutsideLinks(str(tmp_path / "data"))
    for entry in sorted(os.scandir(tmp_path / "data"), key=lambda entry: entry.name):
        links.add(entry)
    assert len(links.found) == 2
    with pytest.raises(
        ValueError,
        match=r"^1 symbolic link\(s\) under .*data lead to nothing \(the file they name does "
        r"not exist\): a\.png -> .*gone/a\.png\. Fix or remove them\.$",
    ):
        links.refuse()
