"""The lines of the text files data sets come in, and the bad ones named.

Every caption, token, split-list and sentence file is read here: as UTF-8,
with a byte-order mark at its start dropped (editors on Windows write one,
and it would otherwise stick to the first file name), `.gz` files
uncompressed, and each line that is not UTF-8 skipped with a warning naming
the file and the line (an error with `strict`), never a `UnicodeDecodeError`
naming a byte position.

Example:

>>> import os, tempfile
>>> from keras_attention.data.text_lines import read_text_lines
>>> path = os.path.join(tempfile.mkdtemp(), "captions.tsv")
>>> _ = open(path, "wb").write(b"\\xef\\xbb\\xbfa.png\\tone\\r\\nb.png\\ttwo\\n")
>>> read_text_lines(path)
[(1, 'a.png\\tone'), (2, 'b.png\\ttwo')]
"""

import gzip
import warnings

from keras_attention.file_encoding import check_text_file

# Line numbers named in one message before "and N more".
MAX_NAMED_LINES = 10
_BOM = "\ufeff"


def _read_bytes(path):
    check_text_file(path)
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as file:
        return file.read()


def decode_lines(path):
    """Every line of the file at `path` as text, None for a line that is not UTF-8.

    Line ends (`\\n`, `\\r\\n`) are removed; a byte-order mark at the start of
    the file is dropped; a last empty line after the final line end is not
    a line.

    Args:
        path: a text file, gzip-compressed when its name ends in `.gz`.

    Returns:
        list of str or None; line `n` of the file is item `n - 1`.

    Example:

    >>> import gzip, os, tempfile
    >>> from keras_attention.data.text_lines import decode_lines
    >>> path = os.path.join(tempfile.mkdtemp(), "train.en.gz")
    >>> with gzip.open(path, "wb") as file:
    ...     _ = file.write(b"caf\\xc3\\xa9\\nbad \\xff byte\\n\\nlast")
    >>> decode_lines(path)
    ['café', None, '', 'last']
    """
    data = _read_bytes(path)
    raw_lines = data.split(b"\n")
    if raw_lines and raw_lines[-1] == b"":
        raw_lines.pop()
    lines = []
    for raw in raw_lines:
        try:
            lines.append(raw.decode("utf-8").removesuffix("\r"))
        except UnicodeDecodeError:
            lines.append(None)
    if lines and lines[0] is not None:
        lines[0] = lines[0].removeprefix(_BOM)
    return lines


def line_numbers_text(numbers, max_named=MAX_NAMED_LINES):
    """ "lines 2, 5 and 3 more": the first `max_named` line numbers and the count of the rest.

    Example:

    >>> from keras_attention.data.text_lines import line_numbers_text
    >>> line_numbers_text([4]), line_numbers_text(range(1, 14))
    ('line 4', 'lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 3 more')
    """
    numbers = list(numbers)
    shown = ", ".join(str(number) for number in numbers[:max_named])
    more = len(numbers) - max_named
    return (
        ("line " if len(numbers) == 1 else "lines ")
        + shown
        + (f" and {more} more" if more > 0 else "")
    )


def report_lines(path, numbers, problem, strict=False, stacklevel=3):
    """Warns that the lines `numbers` of `path` were skipped, or raises with `strict`.

    Args:
        path: the file, named in the message.
        numbers: line numbers (1-based); nothing is said when empty.
        problem: what is wrong with them, e.g. "are not UTF-8".
        strict: raise a ValueError instead of warning.
        stacklevel: passed to `warnings.warn`.

    Example:

    >>> from keras_attention.data.text_lines import report_lines
    >>> report_lines("captions.tsv", [3], "are not UTF-8", strict=True)
    Traceback (most recent call last):
    ...
    ValueError: 1 line(s) of captions.tsv are not UTF-8: line 3. Fix them, ...
    """
    numbers = list(numbers)
    if not numbers:
        return
    lines = line_numbers_text(numbers)
    if strict:
        raise ValueError(
            f"{len(numbers)} line(s) of {path} {problem}: {lines}. "
            "Fix them, or run without --strict to skip them."
        )
    warnings.warn(
        f"Skipped {len(numbers)} line(s) of {path} that {problem}: {lines}.",
        stacklevel=stacklevel,
    )


def read_text_lines(path, strict=False):
    """`[(line number, text)]` of the UTF-8 lines of `path`; the others reported and left out.

    Args:
        path: a text file (`.gz` for a compressed one).
        strict: a line that is not UTF-8 raises a ValueError naming the file
            and the line, instead of a warning naming them.

    Returns:
        list of `(int, str)`, blank lines included.
    """
    lines = decode_lines(path)
    report_lines(
        path,
        [number for number, line in enumerate(lines, start=1) if line is None],
        "are not UTF-8",
        strict,
        stacklevel=3,
    )
    return [(number, line) for number, line in enumerate(lines, start=1) if line is not None]
