"""Symbolic links in a data set's folder that lead outside it.

A name such as `train2014/a.jpg` stays in the data set's folder as text, yet
the file (or a folder on its way) may be a symbolic link to anywhere. Whether
a path is inside is decided on its resolved path (`os.path.realpath`, every
link followed) against the resolved folder, so a folder that is itself a
link (`~/data/coco -> /mnt/disk/coco`) is fine. A link that leads out is
refused, naming the link and its target, unless outside links are allowed
(`--allow-outside-links`).

The check costs no call per plain file: folders are listed with
`os.scandir`, whose entries tell a link without a `stat`, and only links are
resolved.

Example:

>>> import os, tempfile
>>> from keras_attention.data.outside_links import listed_links_outside
>>> base = tempfile.mkdtemp()
>>> os.mkdir(os.path.join(base, "data"))
>>> _ = open(os.path.join(base, "secret.png"), "wb").write(b"")
>>> os.symlink(os.path.join(base, "secret.png"), os.path.join(base, "data", "a.png"))
>>> links = listed_links_outside(os.path.join(base, "data"), [os.path.join(base, "data", "a.png")])
>>> [(os.path.basename(link), os.path.basename(target)) for link, target in links]
[('a.png', 'secret.png')]
"""

import os

# Links named in one message before "... (N more)".
MAX_NAMED_LINKS = 10


def is_inside(real_root, real_path):
    """Whether the resolved `real_path` is `real_root` or below it."""
    return os.path.commonpath([real_root, real_path]) == real_root


def outside_target(real_root, link):
    """The resolved target of `link` when it lies outside `real_root`, else None."""
    target = os.path.realpath(link)
    return None if is_inside(real_root, target) else target


def _leaving_link(root, real_root, folder):
    """`(link, target)`: the first folder from `root` down to `folder` that resolves outside."""
    parts = os.path.relpath(folder, root).split(os.sep)
    path = root
    for part in parts:
        path = os.path.join(path, part)
        target = outside_target(real_root, path)
        if target is not None:
            return path, target
    return folder, os.path.realpath(folder)


def listed_links_outside(root, paths):
    """`[(link, target)]` of the links on the way to `paths` that lead outside `root`.

    Each folder holding a listed path is resolved once and listed once
    (`os.scandir`); only the entries that are links are resolved. A folder
    that cannot be listed is passed over: its images are reported missing
    where they are looked for.

    Args:
        root: the data set's folder.
        paths: paths below `root`, as text (no `..`, not absolute).

    Returns:
        list of `(link path, resolved target)`, links under `root`.
    """
    real_root = os.path.realpath(root)
    names_by_folder = {}
    for path in paths:
        names_by_folder.setdefault(os.path.dirname(path), set()).add(os.path.basename(path))
    found = []
    for folder, names in names_by_folder.items():
        if not is_inside(real_root, os.path.realpath(folder)):
            found.append(_leaving_link(root, real_root, folder))
            continue
        try:
            entries = os.scandir(folder)
        except OSError:
            continue
        with entries:
            for entry in entries:
                if entry.name in names and entry.is_symlink():
                    target = outside_target(real_root, entry.path)
                    if target is not None:
                        found.append((entry.path, target))
    return found


class OutsideLinks:
    """The links met while listing a data set's folder that lead outside it.

    Give it each `os.DirEntry` that will be read (`add`); a plain entry
    costs nothing, a link is resolved. `refuse()` then raises naming them.

    Args:
        root: the data set's folder.
        allowed: accept such links (`add` records nothing).

    Example:

    >>> import os, tempfile
    >>> from keras_attention.data.outside_links import OutsideLinks
    >>> root = tempfile.mkdtemp()
    >>> os.symlink("/", os.path.join(root, "everything"))
    >>> links = OutsideLinks(root)
    >>> for entry in os.scandir(root):
    ...     links.add(entry)
    >>> links.found[0][1]
    '/'
    """

    def __init__(self, root, allowed=False):
        self.root = root
        self.allowed = allowed
        self.found = []
        self._real_root = os.path.realpath(root)

    def add(self, entry):
        """Records `entry` (an `os.DirEntry`) when it is a link that leads outside."""
        if not self.allowed and entry.is_symlink():
            target = outside_target(self._real_root, entry.path)
            if target is not None:
                self.found.append((entry.path, target))

    def refuse(self, source=None):
        """Raises a ValueError naming the links found, if any (`refuse_outside_links`)."""
        refuse_outside_links(self.root, self.found, source)


def refuse_outside_links(root, links, source=None):
    """Raises a ValueError naming `links` (`[(link, target)]`), if there are any.

    Example:

    >>> from keras_attention.data.outside_links import refuse_outside_links
    >>> refuse_outside_links("/d", [("/d/a", "/")], "list.tsv")
    Traceback (most recent call last):
    ...
    ValueError: 1 symbolic link(s) under /d (listed by list.tsv) lead outside it: a -> /. ...
    """
    if not links:
        return
    where = f" (listed by {source})" if source else ""
    # A link to nothing would fail however it is allowed: said first, as what to fix.
    broken = [(link, target) for link, target in links if not os.path.exists(target)]
    if broken:
        raise ValueError(
            f"{len(broken)} symbolic link(s) under {root}{where} lead to nothing (the file "
            f"they name does not exist): {_named(root, broken)}. Fix or remove them."
        )
    raise ValueError(
        f"{len(links)} symbolic link(s) under {root}{where} lead outside it: "
        f"{_named(root, links)}. A data set's files must resolve inside its folder; pass "
        "--allow-outside-links (allow_outside_links=True) to read them anyway."
    )


def _named(root, links):
    """`link -> target, ...` of the first `MAX_NAMED_LINKS` links, and how many more."""
    named = [f"{os.path.relpath(link, root)} -> {target}" for link, target in links]
    more = len(named) - MAX_NAMED_LINKS
    return ", ".join(named[:MAX_NAMED_LINKS]) + (f", ... ({more} more)" if more > 0 else "")
