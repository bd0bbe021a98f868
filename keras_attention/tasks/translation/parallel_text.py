"""Parallel text files, one sentence a line per language: Multi30k, fairseq, WMT as text.

    DIR/
      train.en  train.de               (line n of one is the translation of line n of the other)
      valid.en  valid.de               (or val.*, dev.*)
      test2016.en  test2016.de         (any name starting with "test"; optional)

Files may be gzip-compressed (`train.en.gz`), not both `train.en` and
`train.en.gz`. The line counts of the two sides of a split must match,
blank lines ending one file aside. A pair with a blank side, or with a line
that is not UTF-8 on either side, is skipped with a warning naming the
files and lines (an error with `strict`), as the `tsv:` reader does; a line
blank on both sides is passed over. A file that is a
symbolic link leading outside DIR is refused, naming the link and its target,
unless `allow_outside_links`. Several test sets
(Multi30k's `test_2016_flickr`, `test_2017_flickr`, ...): the one named by
`test_prefix`, else an error listing them.

Example:

>>> import os, tempfile
>>> from keras_attention.tasks.translation.parallel_text import parallel_split_files
>>> folder = tempfile.mkdtemp()
>>> for name in ("train.en", "train.de", "val.en", "val.de", "test_2016.en", "test_2016.de"):
...     _ = open(os.path.join(folder, name), "w").write("x\\n")
>>> files = parallel_split_files(folder, "en", "de")
>>> {split: os.path.basename(pair[0]) for split, pair in files.items()}
{'train': 'train.en', 'validation': 'val.en', 'test': 'test_2016.en'}
"""

import os

from keras_attention.data.outside_links import listed_links_outside
from keras_attention.data.outside_links import refuse_outside_links
from keras_attention.data.text_lines import decode_lines
from keras_attention.data.text_lines import report_lines

PARALLEL_PREFIX = "parallel:"
VALIDATION_PREFIXES = ("valid", "val", "dev")
TEST_PREFIX = "test"


def _side(folder, prefix, lang):
    """The file `prefix.lang` (or `prefix.lang.gz`) in `folder`, or None; both are refused."""
    found = [
        os.path.join(folder, name)
        for name in (f"{prefix}.{lang}", f"{prefix}.{lang}.gz")
        if os.path.isfile(os.path.join(folder, name))
    ]
    if len(found) > 1:  # the same text twice, or an old copy beside a new download
        raise ValueError(
            f"{folder} holds both {prefix}.{lang} and {prefix}.{lang}.gz; keep one (a file "
            "uncompressed beside its .gz may be a different version of it)."
        )
    return found[0] if found else None


def _prefixes(folder):
    """`{prefix: {language}}` of the `prefix.lang[.gz]` files in `folder`."""
    found = {}
    for name in os.listdir(folder):
        stem = name.removesuffix(".gz")
        prefix, dot, lang = stem.rpartition(".")
        if dot and prefix and lang:
            found.setdefault(prefix, set()).add(lang)
    return found


def parallel_split_files(
    folder, source_lang, target_lang, test_prefix=None, allow_outside_links=False
):
    """`{split: (source path, target path)}` of the splits `folder` holds for two languages.

    Args:
        folder: the folder of `PREFIX.LANG` files.
        source_lang, target_lang: the languages' file suffixes, e.g. "en", "de".
        test_prefix: the test set's prefix where there are several.
        allow_outside_links: accept files that are symbolic links leading
            outside `folder`.

    Returns:
        dict with "train", and "validation" and "test" where present.

    Raises:
        ValueError: a language is missing or not given (the message lists
            those found), a side of a split is missing, several validation
            or test sets are present and none is chosen, a file is a link
            leading outside `folder`.
    """
    prefixes = _prefixes(folder)
    languages = sorted(prefixes.get("train", set()))
    if not source_lang or not target_lang or source_lang == target_lang:
        raise ValueError(
            f"`parallel:` data sets need two different --source-lang and --target-lang; "
            f"{folder} has train files for {', '.join(languages) or 'no language'}. "
            f"Received: source_lang={source_lang!r}, target_lang={target_lang!r}"
        )
    files = {}
    candidates = {
        "train": ["train"],
        "validation": [p for p in VALIDATION_PREFIXES if p in prefixes],
        "test": sorted(p for p in prefixes if p.startswith(TEST_PREFIX)),
    }
    if test_prefix is not None:
        if test_prefix not in prefixes:
            raise ValueError(
                f"{folder} has no {test_prefix}.* files; its test sets are "
                f"{', '.join(candidates['test']) or 'none'}. Received: test_prefix={test_prefix!r}"
            )
        candidates["test"] = [test_prefix]
    for split, names in candidates.items():
        if len(names) > 1:
            flag = " (choose one with --test-prefix)" if split == "test" else "; keep one"
            raise ValueError(f"{folder} has {len(names)} {split} sets: {', '.join(names)}{flag}.")
        for prefix in names:
            sides = [_side(folder, prefix, lang) for lang in (source_lang, target_lang)]
            if None in sides:
                missing = [
                    f"{prefix}.{lang}"
                    for lang, side in zip((source_lang, target_lang), sides)
                    if side is None
                ]
                raise ValueError(
                    f"{folder} must hold {' and '.join(missing)} (files found for {prefix}: "
                    f"{', '.join(sorted(prefixes.get(prefix, ()))) or 'none'})."
                )
            files[split] = tuple(sides)
    if not allow_outside_links:
        paths = [path for sides in files.values() for path in sides]
        refuse_outside_links(folder, listed_links_outside(folder, paths))
    return files


def read_parallel_pairs(source_path, target_path, strict=False):
    """`[(source, target)]` of two files read line by line, line `n` with line `n`.

    Args:
        source_path, target_path: the two sides (`.gz` allowed).
        strict: a blank or non-UTF-8 line raises a ValueError naming it.

    Raises:
        ValueError: the files have different numbers of lines; the message
            names both files and their counts.

    Example:

    >>> import os, tempfile
    >>> from keras_attention.tasks.translation.parallel_text import read_parallel_pairs
    >>> folder = tempfile.mkdtemp()
    >>> _ = open(os.path.join(folder, "a.en"), "w").write("one\\ntwo\\n")
    >>> _ = open(os.path.join(folder, "a.de"), "w").write("eins\\nzwei\\n")
    >>> read_parallel_pairs(os.path.join(folder, "a.en"), os.path.join(folder, "a.de"))
    [('one', 'eins'), ('two', 'zwei')]
    """
    sources, targets = decode_lines(source_path), decode_lines(target_path)
    for lines, other in ((sources, targets), (targets, sources)):
        while len(lines) > len(other) and not (lines[-1] or "").strip():
            lines.pop()  # blank lines ending one file only: an editor's extra line ends
    if len(sources) != len(targets):
        raise ValueError(
            "The two sides of a parallel split must have one line per sentence each. Received: "
            f"{source_path} with {len(sources)} lines and {target_path} with {len(targets)}"
        )
    pairs, bad = [], []
    for number, (source, target) in enumerate(zip(sources, targets), start=1):
        if source is not None and target is not None and not (source + target).strip():
            continue  # blank on both sides: no pair, and no mistake
        source, target = (source or "").strip(), (target or "").strip()
        if source and target:
            pairs.append((source, target))
        else:
            bad.append(number)
    report_lines(
        f"{source_path} / {os.path.basename(target_path)}",
        bad,
        "are blank or not UTF-8 on one side",
        strict,
        stacklevel=3,
    )
    return pairs
