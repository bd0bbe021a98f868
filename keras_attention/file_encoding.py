"""Text data files that are not UTF-8 lines, told apart by their first bytes.

Spreadsheet programs on Windows save "Unicode text" as UTF-16, whose every
other byte is NUL. Read as UTF-8, such a file still splits into lines and
tab-separated fields, each letter followed by a NUL: a translator or
captioner would train on it without a single decoding error. A file
compressed with gzip whose name lacks `.gz` would be read as one malformed
line. A file saved as Latin-1 or Windows-1252 (older editors, Excel's CSV)
would lose every line with an accent as "not UTF-8" and train on the rest
(a stray bad line in UTF-8 text is still only skipped and named by the
readers: the file is refused only when none of its first bytes is UTF-8
beyond ASCII and several lines are not). So every reader checks the first
bytes of a text file before reading it, and refuses these in one line that
names the file and the fix. It reads
4 KiB of a file, whatever its size, and imports nothing heavy (the scripts
call it while parsing their flags, before TensorFlow loads).

Example:

>>> import os, tempfile
>>> from keras_attention.file_encoding import check_text_file
>>> path = os.path.join(tempfile.mkdtemp(), "pairs.tsv")
>>> _ = open(path, "wb").write("hello\\thola\\n".encode("utf-16"))
>>> check_text_file(path)
Traceback (most recent call last):
...
ValueError: .../pairs.tsv is UTF-16 text (it starts with the byte-order mark FF FE); ...UTF-8...
"""

import codecs
import gzip
import os
import zlib

# Bytes looked at: enough for a header line and a few rows, read at any file size.
HEAD_BYTES = 4096
GZIP_MAGIC = b"\x1f\x8b"
# UTF-16 of Latin text is half NUL bytes; UTF-8 text has at most a stray one (kept, as text).
NUL_SHARE = 0.2
# A head with this many bytes that are not UTF-8, on this many lines, and no character
# that is, is a whole file in a one-byte encoding (Latin-1, Windows-1252), not a stray
# bad line in UTF-8 text (the readers skip and name those).
LEGACY_BAD_BYTES = 3
LEGACY_BAD_LINES = 2
# Longest first: the UTF-32 little-endian mark starts with the UTF-16 one.
_BYTE_ORDER_MARKS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)


def _head(path):
    """The first `HEAD_BYTES` of the file's text: uncompressed when its name ends in `.gz`."""
    with open(path, "rb") as file:
        head = file.read(HEAD_BYTES)
    if not str(path).endswith(".gz"):
        return head, None
    if not head.startswith(GZIP_MAGIC):
        return head, "is not gzip-compressed although its name ends in .gz: rename it"
    try:
        with gzip.open(path, "rb") as file:
            return file.read(HEAD_BYTES), None
    except (OSError, EOFError, zlib.error) as error:
        return head, f"cannot be uncompressed ({error}): it may be cut short; download it again"


def text_file_problem(path):
    """Why the file at `path` cannot be read as UTF-8 text lines, from its first bytes.

    Args:
        path: a text file (uncompressed first when its name ends in `.gz`).

    Returns:
        None for a file that can be read (it may still hold lines that are
        not UTF-8: the readers name those); otherwise the reason, a phrase
        that follows the file's path.

    Example:

    >>> import os, tempfile
    >>> from keras_attention.file_encoding import text_file_problem
    >>> folder = tempfile.mkdtemp()
    >>> _ = open(os.path.join(folder, "ok.txt"), "wb").write(b"\\xef\\xbb\\xbfcaf\\xc3\\xa9\\n")
    >>> text_file_problem(os.path.join(folder, "ok.txt")) is None
    True
    >>> _ = open(os.path.join(folder, "nul.txt"), "wb").write("a\\tb".encode("utf-16-le"))
    >>> text_file_problem(os.path.join(folder, "nul.txt"))
    'is 3 NUL bytes in its first 6: UTF-16 text without a byte-order mark, or not text'
    """
    return _diagnosis(path)[0]


def _diagnosis(path):
    """`(problem, encoding)`: `text_file_problem`'s phrase, and the encoding `iconv` converts.

    The encoding is "UTF-16", "UTF-32", "WINDOWS-1252" or None.
    """
    head, problem = _head(path)
    if problem:
        return problem, None
    for mark, encoding in _BYTE_ORDER_MARKS:
        if head.startswith(mark):
            marked = mark.hex(" ").upper()
            return f"is {encoding} text (it starts with the byte-order mark {marked})", encoding
    if head.startswith(GZIP_MAGIC):
        return "is gzip-compressed but its name does not end in .gz: rename it", None
    nul_bytes = head.count(b"\x00")
    if nul_bytes and nul_bytes >= NUL_SHARE * len(head):
        return (
            f"is {nul_bytes} NUL bytes in its first {len(head)}: UTF-16 text without a "
            "byte-order mark, or not text",
            None,
        )
    return _one_byte_encoding(head)


def _one_byte_encoding(head):
    """`(problem, "WINDOWS-1252")` when `head` reads as a one-byte encoding, not UTF-8.

    Decoded with `surrogateescape`, each byte that is not UTF-8 becomes one
    lone surrogate; a character cut by the end of the head is left out.
    """
    text = codecs.getincrementaldecoder("utf-8")("surrogateescape").decode(head, final=False)
    lines = text.split("\n")
    bad_lines = [line for line in lines if any("\udc80" <= c <= "\udcff" for c in line)]
    bad_bytes = sum(0xDC80 <= ord(c) <= 0xDCFF for c in text)
    utf8_characters = sum(ord(c) > 0x7F and not 0xDC80 <= ord(c) <= 0xDCFF for c in text)
    if bad_bytes < LEGACY_BAD_BYTES or len(bad_lines) < LEGACY_BAD_LINES or utf8_characters:
        return None, None
    # How the first such line reads in Windows-1252 (Latin-1 and more), the usual culprit.
    raw = bad_lines[0].encode("utf-8", "surrogateescape")
    shown = raw.decode("cp1252", "replace").strip()[:60]
    return (
        f"is not UTF-8 (its first {len(head)} bytes hold {bad_bytes} that are not, on "
        f"{len(bad_lines)} lines, and no UTF-8 character beyond ASCII); read as Windows-1252 "
        f"(Latin-1), its line {lines.index(bad_lines[0]) + 1} is {shown!r}",
        "WINDOWS-1252",
    )


def check_text_file(path):
    """Raises a `ValueError` naming the file and the fix when it is not UTF-8 text lines.

    See `text_file_problem`; UTF-16, UTF-32 and Windows-1252 (Latin-1) files
    get the `iconv` command that converts them.
    """
    problem, encoding = _diagnosis(path)
    if problem is None:
        return
    message = f"{path} {problem}"
    if encoding:
        converted = "utf8" + (os.path.splitext(str(path))[1] or ".txt")
        message += (
            f"; data files must be UTF-8: convert it, e.g. "
            f"`iconv -f {encoding} -t UTF-8 {path} > {converted}`"
        )
    raise ValueError(message + ".")
