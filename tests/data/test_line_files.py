"""count_lines, read_lines_at, sample_lines, line_dataset: text files counted, sampled, streamed."""

import gzip

import numpy as np
import pytest

from keras_attention.data import line_files
from keras_attention.data.line_files import clean_line
from keras_attention.data.line_files import clean_lines
from keras_attention.data.line_files import count_lines
from keras_attention.data.line_files import line_dataset
from keras_attention.data.line_files import read_lines_at
from keras_attention.data.line_files import sample_lines

BOM = b"\xef\xbb\xbf"


def write(path, data):
    """Writes `data` to `path`, gzip-compressed when the name ends in `.gz`."""
    if str(path).endswith(".gz"):
        with gzip.open(path, "wb") as file:
            file.write(data)
    else:
        path.write_bytes(data)
    return str(path)


def text_lines(path):
    """The lines of a file as Python's text mode reads them."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as file:
        return file.read().splitlines()


def byte_lines(data):
    """The lines of `data` split at "\\n" by plain Python, a last line without one kept."""
    lines = data.split(b"\n")
    return lines[:-1] if data.endswith(b"\n") or not data else lines


def random_text(seed, num_lines, longest=40, final_newline=True):
    """Lines of ASCII letters, spaces and a few multi-byte letters, some of them empty."""
    rng = np.random.default_rng(seed)
    alphabet = [*"abcdefghij KLMNOP", "é", "ß", "漢"]
    lines = [
        "".join(rng.choice(alphabet, rng.integers(0, longest + 1))).encode()
        for _ in range(num_lines)
    ]
    return b"\n".join(lines) + (b"\n" if final_newline and lines else b"")


def numbered(prefix, num_lines, final_newline=True):
    data = "\n".join(f"{prefix} {n}" for n in range(1, num_lines + 1)).encode()
    return data + (b"\n" if final_newline else b"")


COUNTED = {
    "final newline": b"one\ntwo\nthree\n",
    "no final newline": b"one\ntwo\nthree",
    "empty": b"",
    "one newline": b"\n",
    "blank lines": b"\n\n\nx\n\n",
    "one line without newline": b"x",
    "crlf": b"one\r\ntwo\r\n\r\nfour\r\n",
    "crlf without final": b"one\r\ntwo",
    "utf-8": "été\n漢字\nstraße".encode(),
}


@pytest.mark.parametrize("suffix", ["", ".gz"])
@pytest.mark.parametrize("name", list(COUNTED))
def test_count_lines_counts_what_python_splits(tmp_path, name, suffix):
    path = write(tmp_path / f"lines.txt{suffix}", COUNTED[name])
    assert count_lines(path) == len(text_lines(path))


@pytest.mark.parametrize("final_newline", [True, False])
def test_count_lines_across_many_small_blocks(tmp_path, monkeypatch, final_newline):
    data = random_text(1, 700, final_newline=final_newline)
    for suffix in ("", ".gz"):
        path = write(tmp_path / f"lines.txt{suffix}", data)
        expected = len(text_lines(path))
        assert expected == 700
        assert count_lines(path) == expected
        monkeypatch.setattr(line_files, "_BLOCK_BYTES", 7)
        assert count_lines(path) == expected
        monkeypatch.setattr(line_files, "_BLOCK_BYTES", 1)
        assert count_lines(path) == expected
        monkeypatch.undo()


@pytest.mark.parametrize("block_bytes", [7, 64, 1 << 24])
@pytest.mark.parametrize("final_newline", [True, False])
def test_read_lines_at_random_indices(tmp_path, monkeypatch, block_bytes, final_newline):
    monkeypatch.setattr(line_files, "_BLOCK_BYTES", block_bytes)
    data = random_text(2, 1000, longest=60, final_newline=final_newline)
    expected_lines = byte_lines(data)
    assert len(expected_lines) == 1000
    rng = np.random.default_rng(block_bytes)
    for suffix in ("", ".gz"):
        path = write(tmp_path / f"lines.txt{suffix}", data)
        for size in (1, 10, 300, 1000):
            indices = np.sort(rng.choice(1000, size, replace=False))
            assert read_lines_at(path, indices) == [expected_lines[i] for i in indices]
        assert read_lines_at(path, [0, 999]) == [expected_lines[0], expected_lines[-1]]
        assert read_lines_at(path, []) == []


def test_read_lines_at_keeps_carriage_returns_and_long_lines(tmp_path, monkeypatch):
    monkeypatch.setattr(line_files, "_BLOCK_BYTES", 7)
    lines = [b"a\r", b"", b"x" * 100, b"\r", b"last line, no newline"]
    path = write(tmp_path / "lines.txt", b"\n".join(lines))
    assert read_lines_at(path, range(5)) == lines
    assert read_lines_at(path, [2, 4]) == [lines[2], lines[4]]


def test_read_lines_at_across_the_16_mib_block_boundary(tmp_path):
    assert line_files._BLOCK_BYTES == 1 << 24
    rng = np.random.default_rng(3)
    # About 17 MiB of lines of 0 to 60 letters.
    lengths = rng.integers(0, 61, 560_000)
    letters = rng.integers(ord("a"), ord("z") + 1, int(lengths.sum()), dtype=np.uint8)
    ends = np.cumsum(lengths)
    data = b"\n".join(letters[end - length : end].tobytes() for end, length in zip(ends, lengths))
    assert len(data) > (1 << 24) + 100_000
    path = write(tmp_path / "big.txt", data)  # no final newline
    expected = byte_lines(data)
    boundary = data[: 1 << 24].count(b"\n")  # the line that the first block cuts
    indices = sorted(
        {0, boundary - 1, boundary, boundary + 1, len(expected) - 1}
        | set(rng.choice(len(expected), 200, replace=False).tolist())
    )
    assert read_lines_at(path, indices) == [expected[i] for i in indices]
    assert count_lines(path) == len(expected)


def test_a_small_file_is_sampled_whole_in_line_order(tmp_path):
    path = write(tmp_path / "a.txt", numbered("line", 57))
    sample = sample_lines([path], 57)
    assert sample.num_lines == 57 and sample.is_whole
    assert [number for number, _ in sample.lines] == list(range(1, 58))
    assert sample.lines == [(n, (f"line {n}".encode(),)) for n in range(1, 58)]
    assert sample.paths == (path,)
    assert sample_lines([path], 1000).lines == sample.lines


@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_a_large_file_gives_exactly_sample_size_distinct_lines(tmp_path, suffix):
    path = write(tmp_path / f"a.txt{suffix}", numbered("line", 5000, final_newline=False))
    sample = sample_lines([path], 300, seed=4)
    assert sample.num_lines == 5000 and not sample.is_whole
    numbers = [number for number, _ in sample.lines]
    assert len(numbers) == len(set(numbers)) == 300
    assert numbers == sorted(numbers)
    assert 1 <= numbers[0] and numbers[-1] <= 5000
    # Each line is the file's line at its number.
    assert all(texts == (f"line {number}".encode(),) for number, texts in sample.lines)
    assert sample_lines([path], 300, seed=4).lines == sample.lines
    other = [number for number, _ in sample_lines([path], 300, seed=5).lines]
    assert other != numbers
    assert len(set(other) & set(numbers)) < 100  # two draws of 300 of 5000 share about 18


def test_files_read_side_by_side_are_sampled_at_the_same_lines(tmp_path):
    english = write(tmp_path / "train.en", numbered("en", 3000))
    german = write(tmp_path / "train.de.gz", numbered("de", 3000))
    sample = sample_lines([english, german], 250, seed=1)
    assert sample.num_lines == 3000 and len(sample.lines) == 250
    assert sample.paths == (english, german)
    for number, texts in sample.lines:
        assert texts == (f"en {number}".encode(), f"de {number}".encode())
    numbers = [number for number, _ in sample.lines]
    assert numbers == [number for number, _ in sample_lines([english], 250, seed=1).lines]


def test_every_carriage_return_and_a_bom_starting_a_line_are_removed(tmp_path):
    # As tf.data.TextLineDataset reads lines (it drops every carriage return); a byte-order
    # mark may start any line of files joined with `cat`.
    data = BOM + b"first\r\nsecond\r\n" + BOM + b"third\nfour\rth\r\r\n" + BOM + b"\r\n"
    path = write(tmp_path / "a.txt", data)
    sample = sample_lines([path], 100)
    expected = [b"first", b"second", b"third", b"fourth", b""]
    assert [texts for _, texts in sample.lines] == [(line,) for line in expected]
    assert [clean_line(line) for line in data.split(b"\n")[:-1]] == expected


def test_line_dataset_streams_the_lines_that_sample_lines_reads(tmp_path):
    data = BOM + b"one\r\ntwo\n\nthree  \r\nfour\xc3\xa9\r\n\tfi\rve\n" + BOM + b"last"
    path = write(tmp_path / "a.txt.gz", data)
    streamed = [clean_lines(line).numpy() for line in line_dataset(path)]
    assert streamed == [b"one", b"two", b"", b"three  ", "fouré".encode(), b"\tfive", b"last"]
    assert streamed == [texts[0] for _, texts in sample_lines([path], 100).lines]


def test_files_of_different_lengths_are_refused_naming_both(tmp_path):
    english = write(tmp_path / "train.en", numbered("en", 12))
    german = write(tmp_path / "train.de", numbered("de", 11, final_newline=False))
    with pytest.raises(ValueError) as error:
        sample_lines([english, german], 5)
    message = str(error.value)
    assert f"{english} with 12 lines" in message
    assert f"{german} with 11 lines" in message


@pytest.mark.parametrize("sample_size", [0, -3, 2.5, True, "10", None])
def test_sample_size_must_be_a_positive_int(tmp_path, sample_size):
    path = write(tmp_path / "a.txt", b"x\n")
    with pytest.raises(ValueError, match="`sample_size` must be a positive int") as error:
        sample_lines([path], sample_size)
    assert f"sample_size={sample_size!r}" in str(error.value)


def test_empty_files_give_an_empty_whole_sample(tmp_path):
    path = write(tmp_path / "a.txt", b"")
    sample = sample_lines([path, write(tmp_path / "b.txt.gz", b"")], 10)
    assert (sample.num_lines, sample.lines, sample.is_whole) == (0, [], True)


def test_the_sample_is_uniform_over_the_file(tmp_path):
    num_lines, sample_size = 100_000, 2_000
    path = write(tmp_path / "a.txt", numbered("line", num_lines))
    middle = (num_lines + 1) / 2
    pooled = []
    for seed in range(5):
        numbers = np.array([number for number, _ in sample_lines([path], sample_size, seed).lines])
        # The mean of 2,000 uniform line numbers is within 1.3% of the middle, one sigma.
        assert abs(numbers.mean() - middle) < 0.04 * middle, seed
        pooled.append(numbers)
    # Each tenth of the file holds a tenth of the 10,000 draws (sigma 30).
    tenths = np.bincount((np.concatenate(pooled) - 1) * 10 // num_lines, minlength=10)
    assert np.all(np.abs(tenths - 1_000) < 150), tenths.tolist()
    assert len(np.unique(np.concatenate(pooled))) > 9_000  # seeds draw different lines
