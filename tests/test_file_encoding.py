"""Text data files that are not UTF-8 lines, refused from their first bytes with the fix."""

import gzip

import pytest

from keras_attention.file_encoding import HEAD_BYTES
from keras_attention.file_encoding import check_text_file
from keras_attention.file_encoding import text_file_problem

PAIRS = "hello\thola\nthank you\tgracias\n"
# gzip.compress(..., mtime=0) everywhere: the bytes are part of the test ids, and a header
# holding the time of collection gave the two pytest-xdist workers different ids.


@pytest.mark.parametrize(
    "name, data",
    [
        ("plain.tsv", PAIRS.encode()),
        ("bom.tsv", b"\xef\xbb\xbf" + PAIRS.encode()),
        ("accents.tsv", "café\tcafé\n".encode()),
        ("pairs.tsv.gz", gzip.compress(PAIRS.encode(), mtime=0)),
        ("empty.tsv", b""),
        # A stray NUL is a character of UTF-8 text: left to the line readers.
        ("stray_nul.tsv", b"a\x00b\tc\n" + PAIRS.encode()),
        ("late_nuls.tsv", PAIRS.encode() * (HEAD_BYTES // len(PAIRS) + 1) + b"\x00" * 100),
        # UTF-8 with bad lines is left to the readers, which skip and name them: one bad
        # line, or bad bytes beside real UTF-8 characters.
        ("one_bad_line.tsv", "hello\thola\ncafé\tcafé crème\n".encode("latin-1")),
        ("mixed.tsv", "façade\tfachada\n".encode() + "café\tcafé\nlà\tallí\n".encode("latin-1")),
        # A character cut in two by the end of the head is UTF-8 all the same.
        ("cut_character.tsv", b"a" * (HEAD_BYTES - 1) + "é".encode() + b"\n"),
    ],
)
def test_utf8_text_passes(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    assert text_file_problem(path) is None
    check_text_file(path)


@pytest.mark.parametrize(
    "name, data, problem",
    [
        (
            "excel.tsv",
            PAIRS.encode("utf-16"),
            "is UTF-16 text (it starts with the byte-order mark FF FE)",
        ),
        (
            "big.tsv",
            b"\xfe\xff" + PAIRS.encode("utf-16-be"),
            "is UTF-16 text (it starts with the byte-order mark FE FF)",
        ),
        (
            "wide.tsv",
            PAIRS.encode("utf-32"),
            "is UTF-32 text (it starts with the byte-order mark FF FE 00 00)",
        ),
        (
            "nobom.tsv",
            PAIRS.encode("utf-16-le"),
            "is 29 NUL bytes in its first 58: UTF-16 text without",
        ),
        (
            "packed.tsv",
            gzip.compress(PAIRS.encode(), mtime=0),
            "is gzip-compressed but its name does not end in .gz",
        ),
        ("plain.tsv.gz", PAIRS.encode(), "is not gzip-compressed although its name ends in .gz"),
        ("cut.tsv.gz", gzip.compress(PAIRS.encode() * 50, mtime=0)[:30], "cannot be uncompressed"),
        ("excel.tsv.gz", gzip.compress(PAIRS.encode("utf-16"), mtime=0), "is UTF-16 text"),
        (
            "latin1.tsv",
            "Go.\tVe.\nCafé.\tCafé.\nJe suis là.\tEstoy aquí.\n".encode("latin-1"),
            "is not UTF-8 (its first 44 bytes hold 4 that are not, on 2 lines, and no UTF-8 "
            "character beyond ASCII); read as Windows-1252 (Latin-1), its line 2 is "
            "'Café.\\tCafé.'",
        ),
        (
            "quotes.csv.gz",
            gzip.compress("“Hi”,“Hola”\n‘x’,—\n".encode("cp1252"), mtime=0),
            "hold 7 that are not, on 2 lines",
        ),
    ],
)
def test_files_that_are_not_utf8_lines_are_named_with_the_reason(tmp_path, name, data, problem):
    path = tmp_path / name
    path.write_bytes(data)
    assert problem in text_file_problem(path)
    with pytest.raises(ValueError, match="^" + str(path).replace(".", r"\.") + " "):
        check_text_file(path)


@pytest.mark.parametrize(
    "name, data, encoding",
    [
        ("captions.tsv", "a.jpg\ta cat\n".encode("utf-16"), "UTF-16"),
        ("pairs.tsv", "Où?\tWhere?\nÉté.\tSummer.\n".encode("latin-1"), "WINDOWS-1252"),
    ],
)
def test_a_file_in_another_encoding_gets_the_command_that_converts_it(
    tmp_path, name, data, encoding
):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(ValueError) as error:
        check_text_file(path)
    assert str(error.value).endswith(
        f"data files must be UTF-8: convert it, e.g. `iconv -f {encoding} -t UTF-8 {path} > "
        "utf8.tsv`."
    )
