"""PairFiles, parse_line, sample_pairs: one split's sentence pairs streamed from tsv or parallel files."""

import collections
import gzip

import numpy as np
import pytest

from keras_attention.data.skipped_items import SkippedItems
from keras_attention.tasks.translation.pair_files import HASH_RANGE
from keras_attention.tasks.translation.pair_files import PairFiles
from keras_attention.tasks.translation.pair_files import is_blank_line
from keras_attention.tasks.translation.pair_files import parse_line
from keras_attention.tasks.translation.pair_files import sample_pairs
from keras_attention.tasks.translation.pair_files import source_hashes

BOM = b"\xef\xbb\xbf"
ASCII_WHITESPACE = " \t\n\r\x0b\x0c"
# A line blank on every side: neither a pair nor malformed.
BLANK = ()
BLOCK = 1024  # lines parsed (and sharded) together

# Pieces of sides: words, blanks, whitespace of all kinds, bytes that are not UTF-8.
PIECES = [
    b"hello",
    b"a b",
    b" padded ",
    b"",
    b" ",
    b"\x0b\x0c",
    b"\xc2\xa0",  # no-break space: not ASCII whitespace, kept
    b"\xe3\x80\x80",  # ideographic space, kept
    b"\xc2\x85x",  # NEL, kept
    "ñandú".encode(),
    "漢字".encode(),
    b"\xff",  # not UTF-8
    b"caf\xe9",  # Latin-1, not UTF-8
    b"\xed\xa0\x80",  # a UTF-16 surrogate: not UTF-8
    b"\xc0\xaf",  # overlong: not UTF-8
    b"\x00nul",
]


def reference_pair(kind, raws):
    """`(source, target)` of cleaned raw line(s) by the documented rules; `BLANK` or None.

    `BLANK` (falsy, not None): ASCII whitespace alone on every side, passed over unnamed;
    None: malformed.
    """
    if not any(raw.strip(ASCII_WHITESPACE.encode()) for raw in raws):
        return BLANK
    try:
        texts = [raw.decode("utf-8") for raw in raws]
    except UnicodeDecodeError:
        return None
    if kind == "tsv":
        texts = texts[0].split("\t")
        if len(texts) not in (2, 3):
            return None
    source, target = (text.strip(ASCII_WHITESPACE) for text in texts[:2])
    return (source, target) if source and target else None


def random_side(rng, number):
    pieces = [PIECES[i] for i in rng.integers(0, len(PIECES), rng.integers(1, 3))]
    if rng.random() < 0.7:
        pieces.append(f" w{number}".encode())  # most sides hold their line number
    return b"".join(pieces)


def random_tsv_lines(rng, count):
    lines = []
    for number in range(1, count + 1):
        fields = int(rng.choice([1, 2, 2, 2, 2, 2, 3, 3, 4, 0]))
        lines.append(b"\t".join(random_side(rng, number) for _ in range(fields)))
    return lines


def file_bytes(lines, rng, bom=True):
    """The lines joined with "\\n" or "\\r\\n", a BOM first, the last one maybe without an end."""
    ends = [b"\r\n" if rng.random() < 0.3 else b"\n" for _ in lines]
    if rng.random() < 0.5:
        ends[-1] = b""
    return (BOM if bom else b"") + b"".join(line + end for line, end in zip(lines, ends))


def write(path, data):
    if str(path).endswith(".gz"):
        with gzip.open(path, "wb") as file:
            file.write(data)
    else:
        path.write_bytes(data)
    return str(path)


def raw_lines(path):
    """The lines of a file by plain Python: split at "\\n", one "\\r" and line 1's BOM removed."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as file:
        data = file.read()
    lines = data.split(b"\n")
    if data.endswith(b"\n") or not data:
        lines.pop()
    lines = [line.removesuffix(b"\r") for line in lines]
    if lines:
        lines[0] = lines[0].removeprefix(BOM)
    return lines


def reference_split(files):
    """`{line number: pair or None}` of every line of `files` (None: malformed)."""
    sides = [raw_lines(path) for path in files.paths]
    return {
        number: reference_pair(files.kind, raws) for number, raws in enumerate(zip(*sides), start=1)
    }


def streamed(files, skipped=None, shard=(1, 0)):
    skipped = skipped or SkippedItems("malformed lines")
    return [
        (source.decode(), target.decode())
        for source, target in files.dataset(skipped, shard).as_numpy_iterator()
    ]


def log_lines(path):
    with open(path, encoding="utf-8") as file:
        return file.read().splitlines()


# parse_line


def test_parse_line_reads_two_or_three_tab_fields():
    assert parse_line("tsv", (b"hello\thola",)) == ("hello", "hola")
    assert parse_line("tsv", (b"hello\thola\tCC-BY 2.0 (France) Attribution",)) == (
        "hello",
        "hola",
    )
    assert parse_line("tsv", (b"hello\thola\t",)) == ("hello", "hola")  # an empty third field
    assert parse_line("tsv", (b"a\tb\tc\td",)) is None  # four fields
    assert parse_line("tsv", (b"a\t\tb",)) is None  # three fields, the second blank
    assert parse_line("tsv", (b"hello",)) is None
    assert parse_line("tsv", (b"",)) is None
    assert parse_line("tsv", (b"\t",)) is None


def test_parse_line_refuses_blank_sides_after_stripping_ascii_whitespace_only():
    assert parse_line("tsv", (b" \thola",)) is None
    assert parse_line("tsv", (b"hello\t \x0b\x0c\r\n",)) is None
    assert parse_line("tsv", (b"\x0b hello \x0c\t\r hola  ",)) == ("hello", "hola")
    nbsp = "\xa0"
    assert parse_line("tsv", (f"{nbsp}\thola".encode(),)) == (nbsp, "hola")
    assert parse_line("tsv", (f" {nbsp}hi{nbsp} \tok".encode(),)) == (f"{nbsp}hi{nbsp}", "ok")
    assert parse_line("tsv", ("\u3000\t\x1c".encode(),)) == ("\u3000", "\x1c")
    assert parse_line("parallel", (b" hello ", b"\thola\t")) == ("hello", "hola")
    assert parse_line("parallel", (b"a\tb", b"c")) == ("a\tb", "c")  # no fields in parallel
    assert parse_line("parallel", (b"hello", b" ")) is None
    assert parse_line("parallel", (b"", b"hola")) is None


def test_parse_line_refuses_what_is_not_utf8():
    assert parse_line("tsv", ("ñandú\t漢字".encode(),)) == ("ñandú", "漢字")
    assert parse_line("tsv", (b"caf\xe9\tcoffee",)) is None
    assert parse_line("tsv", (b"hello\thola\t\xff",)) is None  # even in the ignored field
    assert parse_line("tsv", (b"\xed\xa0\x80\tx",)) is None
    assert parse_line("parallel", (b"ok", b"\xc0\xaf")) is None
    assert parse_line("parallel", (b"\xff", b"ok")) is None


def test_parse_line_agrees_with_the_rules_on_random_lines():
    rng = np.random.default_rng(0)
    blank = 0
    for line in random_tsv_lines(rng, 2000):
        expected = reference_pair("tsv", (line,))
        assert parse_line("tsv", (line,)) == (expected or None), line
        assert is_blank_line((line,)) == (expected == BLANK), line
        blank += expected == BLANK
    for number in range(2000):
        raws = (random_side(rng, number), random_side(rng, number))
        expected = reference_pair("parallel", raws)
        assert parse_line("parallel", raws) == (expected or None), raws
        assert is_blank_line(raws) == (expected == BLANK), raws
        blank += expected == BLANK
    assert blank > 50  # the rule is tried on blank lines too


# PairFiles


def test_pair_files_checks_its_kind_and_paths():
    with pytest.raises(ValueError, match=r"`kind` must be one of \('tsv', 'parallel'.*kind='csv'"):
        PairFiles("csv", ("a.csv",))
    with pytest.raises(ValueError, match=r"`paths` must hold 1 file\(s\) for kind 'tsv'"):
        PairFiles("tsv", ("a.tsv", "b.tsv"))
    with pytest.raises(ValueError, match=r"`paths` must hold 2 file\(s\) for kind 'parallel'"):
        PairFiles("parallel", ("train.en",))
    assert PairFiles("parallel", ("data/train.en", "data/train.de.gz")).describe() == (
        "train.en / train.de.gz"
    )


@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_a_tsv_file_streams_exactly_the_well_formed_pairs(tmp_path, suffix):
    rng = np.random.default_rng(1)
    lines = random_tsv_lines(rng, 400)
    path = write(tmp_path / f"pairs.tsv{suffix}", file_bytes(lines, rng))
    files = PairFiles("tsv", (path,))
    expected = reference_split(files)
    assert len(expected) == 400
    log = tmp_path / "skipped.txt"
    skipped = SkippedItems("malformed lines", log)
    assert streamed(files, skipped) == [pair for pair in expected.values() if pair]
    bad = [number for number, pair in expected.items() if pair is None]
    assert 50 < len(bad) < 300
    assert skipped.take_count() == len(bad)
    assert log_lines(log) == [f"pairs.tsv{suffix} line {number}" for number in bad]


@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_parallel_files_stream_exactly_the_well_formed_pairs(tmp_path, suffix):
    rng = np.random.default_rng(2)
    sources = [random_side(rng, number) for number in range(1, 301)]
    targets = [random_side(rng, number) for number in range(1, 301)]
    source_path = write(tmp_path / f"train.en{suffix}", file_bytes(sources, rng))
    target_path = write(tmp_path / f"train.de{suffix}", file_bytes(targets, rng))
    files = PairFiles("parallel", (source_path, target_path))
    expected = reference_split(files)
    assert len(expected) == 300
    log = tmp_path / "skipped.txt"
    skipped = SkippedItems("malformed lines", log)
    assert streamed(files, skipped) == [pair for pair in expected.values() if pair]
    bad = [number for number, pair in expected.items() if pair is None]
    assert 30 < len(bad) < 250
    assert skipped.take_count() == len(bad)
    name = f"train.en{suffix} / train.de{suffix}"
    assert log_lines(log) == [f"{name} line {number}" for number in bad]


def test_the_stream_reads_carriage_returns_and_boms_as_the_sample_does(tmp_path):
    # tf.data drops every "\r" of a line; a byte-order mark may start any line of files
    # joined with `cat`. The sample (vocabulary, source hash) reads them alike.
    data = BOM + b"one\tuno\r\n" + b"a\rb\tx\r\n" + BOM + b"two\tdos\n"
    path = write(tmp_path / "pairs.tsv", data)
    files = PairFiles("tsv", (path,))
    expected = [("one", "uno"), ("ab", "x"), ("two", "dos")]
    assert [(source, target) for _, source, target in sample_pairs(files, 100).pairs] == expected
    assert streamed(files) == expected


def test_a_file_that_does_not_report_bad_lines_names_none(tmp_path):
    path = write(tmp_path / "pairs.tsv", b"a\tb\nbroken\nc\td\n\t\n")
    log = tmp_path / "skipped.txt"
    skipped = SkippedItems("malformed lines", log)
    files = PairFiles("tsv", (path,), reports_bad_lines=False)
    assert streamed(files, skipped) == [("a", "b"), ("c", "d")]
    assert skipped.take_count() == 0
    assert not log.exists() or log_lines(log) == []


def test_the_two_parities_are_disjoint_halves_each_naming_its_own_bad_lines(tmp_path):
    rng = np.random.default_rng(3)
    lines = random_tsv_lines(rng, 2500)  # three blocks: line numbers run on across them
    path = write(tmp_path / "valid.tsv", file_bytes(lines, rng))
    expected = reference_split(PairFiles("tsv", (path,)))
    log = tmp_path / "skipped.txt"
    halves, bad_named = {}, {}
    for parity in (1, 0):
        skipped = SkippedItems("malformed lines", log)
        halves[parity] = streamed(PairFiles("tsv", (path,), parity=parity), skipped)
        bad = [n for n, pair in expected.items() if pair is None and n % 2 == parity]
        assert skipped.take_count() == len(bad)
        bad_named[parity] = bad
        assert halves[parity] == [pair for n, pair in expected.items() if pair and n % 2 == parity]
    named = collections.Counter(log_lines(log))
    assert named == collections.Counter(
        f"valid.tsv line {n}" for parity in (1, 0) for n in bad_named[parity]
    )
    together = collections.Counter(halves[1]) + collections.Counter(halves[0])
    assert together == collections.Counter(pair for pair in expected.values() if pair)
    assert abs(len(halves[1]) - len(halves[0])) < 0.1 * len(together)


def repeated_source_lines(rng, count, num_sources):
    """tsv lines whose sources repeat (several translations of a sentence), targets unique."""
    lines = []
    for number in range(1, count + 1):
        source = f"sentence {int(rng.integers(0, num_sources))}"
        if rng.random() < 0.2:
            source = f"  {source}\x0b"  # the same sentence, stripped
        lines.append(f"{source}\ttranslation {number}".encode())
        if rng.random() < 0.03:
            lines[-1] = f"broken line {number}".encode()
    return lines


def test_hash_ranges_partition_the_pairs_by_source_sentence(tmp_path):
    rng = np.random.default_rng(4)
    path = write(tmp_path / "pairs.tsv", file_bytes(repeated_source_lines(rng, 2000, 500), rng))
    expected = reference_split(PairFiles("tsv", (path,)))
    bounds = [0, HASH_RANGE // 5, HASH_RANGE // 2, HASH_RANGE]
    skipped = SkippedItems("malformed lines")
    ranges = [
        PairFiles("tsv", (path,), hash_range=(low, high), seed=7)
        for low, high in zip(bounds, bounds[1:])
    ]
    parts = [streamed(files, skipped) for files in ranges]
    # Every range names the malformed lines it meets: each is counted once per range.
    num_bad = sum(pair is None for pair in expected.values())
    assert num_bad > 20
    assert skipped.take_count() == len(ranges) * num_bad
    together = collections.Counter(pair for part in parts for pair in part)
    assert together == collections.Counter(pair for pair in expected.values() if pair)
    owner = {}
    for index, part in enumerate(parts):
        for source, _ in part:
            assert owner.setdefault(source, index) == index, source
    # The hash spreads the 500 sources over the ranges by their widths (1/5, 3/10, 1/2).
    shares = [len({source for source, _ in part}) / len(owner) for part in parts]
    assert shares == pytest.approx([0.2, 0.3, 0.5], abs=0.07), shares
    # Each range holds its sources' pairs in file order.
    for index, part in enumerate(parts):
        assert part == [pair for pair in expected.values() if pair and owner[pair[0]] == index]


def test_source_hashes_are_seeded_and_in_range():
    sources = [f"sentence {i}" for i in range(200)] + ["sentence 3"]
    hashes = source_hashes(sources, 0).numpy()
    assert hashes.dtype == np.int64
    assert hashes.min() >= 0 and hashes.max() < HASH_RANGE
    assert hashes[3] == hashes[-1]
    assert len(set(hashes.tolist())) == 200
    assert (source_hashes(sources, 0).numpy() == hashes).all()
    other = source_hashes(sources, 1).numpy()
    assert (other != hashes).sum() == 201


@pytest.mark.parametrize("num_workers", [2, 3])
def test_worker_shards_are_disjoint_shares_covering_the_split(tmp_path, num_workers):
    rng = np.random.default_rng(5)
    lines = random_tsv_lines(rng, 5000)  # blocks of 1024 lines: five, the last one short
    path = write(tmp_path / "pairs.tsv", file_bytes(lines, rng))
    log = tmp_path / "skipped.txt"
    files = PairFiles("tsv", (path,))
    expected = reference_split(files)
    whole = [pair for pair in expected.values() if pair]
    shares = []
    for index in range(num_workers):
        skipped = SkippedItems("malformed lines", log)
        share = streamed(files, skipped, (num_workers, index))
        # Worker `index` reads blocks index, index + num_workers, ...
        mine = [n for n in expected if (n - 1) // BLOCK % num_workers == index]
        assert share == [expected[n] for n in mine if expected[n]]
        assert skipped.take_count() == sum(expected[n] is None for n in mine)
        shares.append(share)
    assert collections.Counter(pair for share in shares for pair in share) == collections.Counter(
        whole
    )
    bad = [f"pairs.tsv line {n}" for n, pair in expected.items() if pair is None]
    assert collections.Counter(log_lines(log)) == collections.Counter(bad)


def test_worker_shards_of_parallel_files_and_of_a_hash_range(tmp_path):
    rng = np.random.default_rng(6)
    sources = [random_side(rng, n) for n in range(1, 3001)]
    targets = [random_side(rng, n) for n in range(1, 3001)]
    paths = (
        write(tmp_path / "train.en.gz", file_bytes(sources, rng)),
        write(tmp_path / "train.de", file_bytes(targets, rng)),
    )
    files = PairFiles("parallel", paths, hash_range=(HASH_RANGE // 3, HASH_RANGE), seed=2)
    whole = streamed(files)
    expected = reference_split(PairFiles("parallel", paths))
    hashes = dict(
        zip(
            [pair[0] for pair in expected.values() if pair],
            source_hashes([pair[0] for pair in expected.values() if pair], 2).numpy().tolist(),
        )
    )
    assert whole == [
        pair for pair in expected.values() if pair and hashes[pair[0]] >= HASH_RANGE // 3
    ]
    shares = [streamed(files, shard=(2, index)) for index in range(2)]
    assert collections.Counter(shares[0]) + collections.Counter(shares[1]) == collections.Counter(
        whole
    )
    assert all(len(share) > 0.3 * len(whole) for share in shares)


# sample_pairs


def test_sample_pairs_of_a_small_file_is_exact(tmp_path):
    rng = np.random.default_rng(7)
    path = write(tmp_path / "pairs.tsv.gz", file_bytes(random_tsv_lines(rng, 300), rng))
    files = PairFiles("tsv", (path,))
    expected = reference_split(files)
    sample = sample_pairs(files, 300)
    assert sample.is_whole and sample.num_lines == sample.num_sampled == 300
    assert sample.pairs == [(n, *pair) for n, pair in expected.items() if pair]
    assert sample.bad_lines == [n for n, pair in expected.items() if pair is None]
    assert sample.estimated_size() == len(sample.pairs)
    assert [(s, t) for _, s, t in sample.pairs] == streamed(files)
    # A split of the file: its sample is its own pairs, exactly as its stream gives them.
    half = PairFiles("tsv", (path,), hash_range=(0, HASH_RANGE // 2), seed=3)
    split_sample = sample_pairs(half, 1000)
    assert [(s, t) for _, s, t in split_sample.pairs] == streamed(half)
    assert split_sample.bad_lines == sample.bad_lines
    quiet = PairFiles("tsv", (path,), hash_range=(0, HASH_RANGE // 2), reports_bad_lines=False)
    assert sample_pairs(quiet, 1000).bad_lines == []
    odd = sample_pairs(PairFiles("tsv", (path,), parity=1), 1000)
    assert odd.bad_lines == [n for n in sample.bad_lines if n % 2]
    assert odd.pairs == [pair for pair in sample.pairs if pair[0] % 2]


def test_sample_pairs_of_a_large_file_is_a_true_sample(tmp_path):
    sources = [f"s{n}".encode() for n in range(1, 6001)]
    targets = [b"" if n % 10 == 0 else f"t{n}".encode() for n in range(1, 6001)]
    source_path = write(tmp_path / "train.en", b"\r\n".join(sources) + b"\r\n")
    target_path = write(tmp_path / "train.de.gz", b"\n".join(targets) + b"\n")
    files = PairFiles("parallel", (source_path, target_path))
    sample = sample_pairs(files, 600, seed=1)
    assert (sample.num_lines, sample.num_sampled, sample.is_whole) == (6000, 600, False)
    numbers = [n for n, _, _ in sample.pairs] + sample.bad_lines
    assert len(set(numbers)) == 600
    assert all(source == f"s{n}" and target == f"t{n}" for n, source, target in sample.pairs)
    assert all(n % 10 == 0 for n in sample.bad_lines)
    assert 30 < len(sample.bad_lines) < 90  # a tenth of the lines are blank on one side
    # Every tenth line is bad: the sample stands for about 5,400 good pairs.
    assert sample.estimated_size() == round(len(sample.pairs) * 6000 / 600)
    assert abs(sample.estimated_size() - 5400) < 250
    assert sample.estimated_size(60) == 600
    assert sample_pairs(files, 600, seed=1).pairs == sample.pairs
    assert sample_pairs(files, 600, seed=2).pairs != sample.pairs


def test_sample_pairs_refuses_parallel_files_of_different_lengths(tmp_path):
    source_path = write(tmp_path / "train.en", b"a\nb\nc\n")
    target_path = write(tmp_path / "train.de", b"x\ny\n")
    with pytest.raises(ValueError, match="with 3 lines and .*train.de with 2 lines"):
        sample_pairs(PairFiles("parallel", (source_path, target_path)), 10)


def test_sample_pairs_names_the_lines_with_text_when_parallel_files_differ(tmp_path):
    source_path = write(tmp_path / "train.en", b"a\nb\nc\n\n")
    target_path = write(tmp_path / "train.de", b"x\ny\n")
    with pytest.raises(ValueError, match=r"with 3 lines \(then 1 blank\) and .*de with 2 lines"):
        sample_pairs(PairFiles("parallel", (source_path, target_path)), 10)


@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_blank_lines_ending_one_parallel_file_are_no_lines(tmp_path, suffix):
    # An editor's extra line ends, past a block of lines (1,024) and then some.
    sources = [f"s{n}".encode() for n in range(1, 1_501)]
    targets = [f"t{n}".encode() for n in range(1, 1_501)] + [b"", b" \t"] * 600
    sources[700] = targets[700] = b"  "  # blank on both sides inside: passed over too
    source_path = write(tmp_path / f"train.en{suffix}", b"\n".join(sources) + b"\n")
    target_path = write(tmp_path / f"train.de{suffix}", b"\r\n".join(targets))
    files = PairFiles("parallel", (source_path, target_path))
    sample = sample_pairs(files, 100_000, show_progress=False)
    expected = [(f"s{n}", f"t{n}") for n in range(1, 1_501) if n != 701]
    assert sample.num_lines == 1_500 and sample.bad_lines == []
    assert [(source, target) for _, source, target in sample.pairs] == expected
    skipped = SkippedItems("malformed lines")
    assert streamed(files, skipped) == expected
    assert skipped.take_count() == 0
    # Reversed, the source file is the one that ends in blank lines.
    reversed_files = PairFiles("parallel", (target_path, source_path))
    assert streamed(reversed_files) == [(target, source) for source, target in expected]
