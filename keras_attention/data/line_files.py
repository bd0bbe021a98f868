"""Text files of one item a line, as large as users bring them: counted, sampled and streamed.

A parallel corpus of millions of lines is never held in Python lists:
`sample_lines` counts the lines of the files and reads a uniform random
sample of them, line `n` of each file together, from which a run learns
its vocabularies and length limits; training then streams the files with
`tf.data` (`line_dataset`).

Example:

>>> import os, tempfile
>>> from keras_attention.data.line_files import sample_lines
>>> folder = tempfile.mkdtemp()
>>> for name, text in (("a.en", "one\\ntwo\\nthree\\n"), ("a.de", "eins\\nzwei\\ndrei\\n")):
...     _ = open(os.path.join(folder, name), "w").write(text)
>>> sample = sample_lines([os.path.join(folder, "a.en"), os.path.join(folder, "a.de")], 10)
>>> sample.num_lines, sample.lines
(3, [(1, (b'one', b'eins')), (2, (b'two', b'zwei')), (3, (b'three', b'drei'))])
"""

import dataclasses
import gzip
import numbers

import numpy as np
import tensorflow as tf

from keras_attention.file_encoding import check_text_file

_BOM = b"\xef\xbb\xbf"
_LEADING_BOM = "^\ufeff"
_LINE_END = ord("\n")
# Bytes read at once: large enough that NumPy, not Python, does the work per line.
_BLOCK_BYTES = 1 << 24
# The end of a file kept while counting, where its trailing blank lines are told.
_TAIL_BYTES = 1 << 16
_ASCII_WHITESPACE = b" \t\n\r\f\v"


def open_lines(path):
    """The file at `path` opened for reading bytes, gzip-compressed when its name ends in `.gz`.

    A file that is not UTF-8 text lines (UTF-16, gzip without `.gz`) is refused first
    (`check_text_file`).
    """
    check_text_file(path)
    return gzip.open(path, "rb") if str(path).endswith(".gz") else open(path, "rb")


def line_dataset(path):
    """A `tf.data.Dataset` of the raw lines of `path` (`.gz` read compressed).

    Lines are read raw by `tf.data.TextLineDataset`, which already drops
    the line ends and every carriage return; `clean_lines` removes the rest
    (a byte-order mark starting a line) and is cheapest on batches of lines.

    Example:

    >>> import os, tempfile
    >>> from keras_attention.data.line_files import clean_lines, line_dataset
    >>> path = os.path.join(tempfile.mkdtemp(), "a.txt")
    >>> _ = open(path, "wb").write(b"\\xef\\xbb\\xbfone\\r\\ntwo\\n")
    >>> [clean_lines(line).numpy() for line in line_dataset(path)]
    [b'one', b'two']
    """
    path = str(path)
    check_text_file(path)
    return tf.data.TextLineDataset(path, compression_type="GZIP" if path.endswith(".gz") else "")


def clean_line(line):
    """A line's bytes as the streams read them: without its carriage returns and leading BOM.

    `tf.data.TextLineDataset` drops every carriage return of a line (not
    only the one of a `\\r\\n` end); a byte-order mark may start any line
    of files joined with `cat`. The sample and the stream must read a line
    alike: the vocabularies, lengths and the split a line falls in come
    from the sample.

    Example:

    >>> from keras_attention.data.line_files import clean_line
    >>> clean_line(b"\\xef\\xbb\\xbfa\\rb\\r")
    b'ab'
    """
    return line.replace(b"\r", b"").removeprefix(_BOM)


def clean_lines(lines):
    """`clean_line` of a string tensor of lines read by `line_dataset`."""
    return tf.strings.regex_replace(lines, _LEADING_BOM, "")


@dataclasses.dataclass
class LineSample:
    """A uniform random sample of the lines of one or more files read side by side.

    Args:
        num_lines: the number of lines of each file (they are equal).
        lines: `[(line number, (bytes of each file's line n))]`, in line
            order, line ends removed; every line when the files have at
            most the sample's size.
        paths: the files, in the order of each line's bytes.
    """

    num_lines: int
    lines: list
    paths: tuple = ()

    @property
    def is_whole(self):
        """Whether the sample holds every line of the files."""
        return len(self.lines) == self.num_lines


def count_lines(path):
    """The lines of a text file (`.gz` read compressed); a last line without a line end counts.

    Example:

    >>> import os, tempfile
    >>> from keras_attention.data.line_files import count_lines
    >>> path = os.path.join(tempfile.mkdtemp(), "a.txt")
    >>> _ = open(path, "wb").write(b"one\\ntwo\\nthree")
    >>> count_lines(path)
    3
    """
    return _count_lines_and_blank_tail(path)[0]


def _count_lines_and_blank_tail(path):
    """`(lines, blank tail)`: `count_lines`, and how many of the last lines are blank.

    Blank: ASCII whitespace alone. The tail is looked for in the last
    `_TAIL_BYTES` only; a file that ends in more blank lines than those
    bytes hold counts as ending in none.
    """
    count, tail, size = 0, b"", 0
    with open_lines(path) as file:
        while block := file.read(_BLOCK_BYTES):
            count += block.count(b"\n")
            size += len(block)
            tail = (tail + block[-_TAIL_BYTES:])[-_TAIL_BYTES:]
    cut = size > len(tail)
    count += bool(tail) and not tail.endswith(b"\n")
    content = tail.rstrip(_ASCII_WHITESPACE)
    if not content:
        return count, 0 if cut else count
    after = tail[len(content) :]  # the end of the last line with text, then blank lines
    if b"\n" not in after:
        return count, 0
    rest = after[after.index(b"\n") + 1 :]
    return count, rest.count(b"\n") + (bool(rest) and not rest.endswith(b"\n"))


def read_lines_at(path, indices):
    """The lines of `path` at the sorted 0-based `indices`, as bytes with their line ends removed.

    The file is read in blocks whose line ends NumPy finds, so only the
    lines asked for become Python objects, and only up to the last of them.

    Example:

    >>> import os, tempfile
    >>> from keras_attention.data.line_files import read_lines_at
    >>> path = os.path.join(tempfile.mkdtemp(), "a.txt")
    >>> _ = open(path, "wb").write(b"zero\\none\\ntwo\\nthree")
    >>> read_lines_at(path, [1, 3])
    [b'one', b'three']
    """
    indices = np.asarray(indices, dtype=np.int64)
    lines, carry, first, taken = [], b"", 0, 0
    with open_lines(path) as file:
        while True:
            block = file.read(_BLOCK_BYTES)
            data = carry + block
            ends = np.flatnonzero(np.frombuffer(data, np.uint8) == _LINE_END)  # (lines,)
            if not block and data and (len(ends) == 0 or ends[-1] != len(data) - 1):
                ends = np.append(ends, len(data))  # a last line without a line end
            wanted = np.searchsorted(indices, first + len(ends))
            for index in indices[taken:wanted] - first:
                begin = ends[index - 1] + 1 if index else 0
                lines.append(data[begin : ends[index]])
            taken, first = wanted, first + len(ends)
            carry = data[ends[-1] + 1 :] if len(ends) else data
            if not block or taken == len(indices):  # the rest of the file is not wanted
                return lines


def sample_indices(count, sample_size, seed):
    """`sample_size` distinct indices below `count` drawn at random, sorted; all when fewer.

    Example:

    >>> from keras_attention.data.line_files import sample_indices
    >>> sample_indices(3, 5, seed=0).tolist(), len(sample_indices(100, 5, seed=0))
    ([0, 1, 2], 5)
    """
    if count <= sample_size:
        return np.arange(count)
    return np.sort(np.random.default_rng(seed).choice(count, sample_size, replace=False))


def sample_lines(paths, sample_size, seed=0):
    """Counts the lines of `paths` and reads a uniform random sample of them.

    Files read side by side (a parallel corpus: line `n` of one translates
    line `n` of the other) are sampled at the same line numbers. Two passes
    over each file, in blocks, with no Python step per line: a file of
    millions of lines takes seconds.

    Args:
        paths: one or more text files (`.gz` read compressed).
        sample_size: the most lines kept, a positive int.
        seed: the sample's seed.

    Returns:
        a `LineSample`.

    Raises:
        ValueError: the files have different numbers of lines (the message
            names both files and their counts); blank lines ending a file
            do not count (an editor's or a `cat`'s extra line end).
    """
    if (
        isinstance(sample_size, bool)
        or not isinstance(sample_size, numbers.Integral)
        or sample_size < 1
    ):
        raise ValueError(
            f"`sample_size` must be a positive int. Received: sample_size={sample_size!r}"
        )
    sample_size = int(sample_size)
    paths = tuple(str(path) for path in paths)
    counts, blank_tails = zip(*map(_count_lines_and_blank_tail, paths)) if paths else ((), ())
    num_lines = min(counts, default=0)
    if any(count - blank > num_lines for count, blank in zip(counts, blank_tails)):
        shown = " and ".join(
            f"{path} with {count - blank} lines" + (f" (then {blank} blank)" if blank else "")
            for path, count, blank in zip(paths, counts, blank_tails)
        )
        raise ValueError(
            "`paths` read side by side must have one line per item each. "
            f"Received: paths={list(paths)!r}: {shown}"
        )
    indices = sample_indices(num_lines, sample_size, seed)
    columns = [read_lines_at(path, indices) for path in paths]
    lines = [
        (int(index) + 1, tuple(clean_line(line) for line in texts))
        for index, *texts in zip(indices, *columns)
    ]
    return LineSample(num_lines, lines, paths)
