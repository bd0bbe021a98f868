"""load_translation_pairs on tsv and parallel files larger than its sample: streamed, sized from it."""

import collections
import gzip
import warnings

import numpy as np
import pytest

from keras_attention.data.skipped_items import SkippedItems
from keras_attention.data.skipped_items import strict_errors_as_exit
from keras_attention.tasks.translation.pair_files import HASH_RANGE
from keras_attention.tasks.translation.pair_files import PairFiles
from keras_attention.tasks.translation.pair_files import sample_pairs
from keras_attention.tasks.translation.pair_files import source_hashes
from keras_attention.tasks.translation.sources import hash_thresholds
from keras_attention.tasks.translation.sources import load_translation_pairs

SPLITS = ("train", "validation", "test")


def write(path, lines, line_end=b"\n"):
    data = b"".join(line + line_end for line in lines)
    if str(path).endswith(".gz"):
        data = gzip.compress(data)
    path.write_bytes(data)
    return str(path)


def pairs_of(dataset):
    """The `(source, target)` strings of a split, read in batches (few Python steps)."""
    return [
        (source.decode(), target.decode())
        for sources, targets in dataset.batch(4096).as_numpy_iterator()
        for source, target in zip(sources, targets)
    ]


def tsv_lines(num_lines, num_sources, seed, bad_every=97):
    """tsv lines whose sources repeat (several translations each); every `bad_every`-th is broken."""
    rng = np.random.default_rng(seed)
    lines = []
    for number in range(1, num_lines + 1):
        if number % bad_every == 0:
            lines.append(f"no tab on line {number}".encode())
        else:
            source = int(rng.integers(0, num_sources))
            lines.append(f"sentence {source}\ttranslation {number}\tCC-BY".encode())
    return lines


def good_pairs(lines):
    """The pairs of the well-formed tsv lines, by plain Python."""
    found = []
    for line in lines:
        fields = line.decode().split("\t")
        if len(fields) in (2, 3) and fields[0].strip() and fields[1].strip():
            found.append((fields[0].strip(), fields[1].strip()))
    return found


def load_quietly(dataset, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the malformed lines of the sample are warned about
        return load_translation_pairs(dataset, **options)


def check_split_by_source(found, expected_pairs, seed):
    """The splits hold every pair once, no source in two, by hash: test < validation < train."""
    together = collections.Counter(pair for name in SPLITS for pair in found[name])
    assert together == collections.Counter(expected_pairs)
    sources = {name: {source for source, _ in found[name]} for name in SPLITS}
    assert not sources["train"] & sources["validation"]
    assert not sources["train"] & sources["test"]
    assert not sources["validation"] & sources["test"]
    hashes = {
        name: source_hashes(sorted(sources[name]), seed).numpy() for name in SPLITS if sources[name]
    }
    assert hashes["test"].max() < hashes["validation"].min()
    assert hashes["validation"].max() < hashes["train"].min()


@pytest.fixture(scope="module")
def large_tsv(tmp_path_factory):
    lines = tsv_lines(20_000, 14_000, seed=0)
    path = write(tmp_path_factory.mktemp("tsv") / "pairs.tsv", lines, b"\r\n")
    return path, lines


def test_a_large_tsv_file_is_sized_from_its_sample(large_tsv):
    path, lines = large_tsv
    expected_pairs = good_pairs(lines)
    skipped = SkippedItems("malformed lines")
    splits = load_quietly(
        f"tsv:{path}",
        sample_size=2_000,
        seed=3,
        validation_fraction=0.1,
        test_fraction=0.1,
        skipped=skipped,
    )
    assert splits.estimated
    assert splits.skipped == (skipped,)
    assert "about" in splits.summary()
    found = {name: pairs_of(splits[name]) for name in SPLITS}
    check_split_by_source(found, expected_pairs, seed=3)
    # Only the training stream names the malformed lines: once each.
    assert skipped.take_count() == len(lines) - len(expected_pairs) == 20_000 // 97
    true_sizes = {name: len(found[name]) for name in SPLITS}
    assert true_sizes["validation"] == pytest.approx(0.1 * len(expected_pairs), rel=0.3)
    # 2,000 sampled lines: about 1,600 training, 200 validation and 200 test pairs stand for
    # the others (relative sigma 2%, 7%, 7%).
    assert splits.sizes["train"] == pytest.approx(true_sizes["train"], rel=0.08)
    assert splits.sizes["validation"] == pytest.approx(true_sizes["validation"], rel=0.25)
    assert splits.sizes["test"] == pytest.approx(true_sizes["test"], rel=0.25)
    assert sum(splits.sizes.values()) == pytest.approx(len(expected_pairs), rel=0.02)
    # The sample: training pairs of the file only, at most sample_size of them.
    assert 1_400 < len(splits.sample) <= 2_000
    train = collections.Counter(found["train"])
    assert all(train[pair] > 0 for pair in splits.sample)
    assert len(set(splits.sample)) == len(splits.sample)  # targets are unique: no line twice


def test_the_hash_bounds_of_the_sample_give_the_splits(large_tsv):
    # The splits by plain Python: every well-formed line's source hashed, against the bounds
    # `hash_thresholds` takes from the hashes of the sampled sources.
    path, lines = large_tsv
    expected_pairs = good_pairs(lines)
    splits = load_quietly(
        f"tsv:{path}", sample_size=2_000, seed=5, validation_fraction=0.2, test_fraction=0.05
    )
    sample = sample_pairs(PairFiles("tsv", (path,)), 2_000, seed=5)
    assert sample.num_sampled == 2_000
    sampled_hashes = source_hashes([source for _, source, _ in sample.pairs], 5).numpy()
    test_end, validation_end = hash_thresholds(sampled_hashes, 0.2, 0.05)
    hashes = source_hashes([source for source, _ in expected_pairs], 5).numpy()
    by_hash = {
        "test": [pair for pair, h in zip(expected_pairs, hashes) if h < test_end],
        "validation": [
            pair for pair, h in zip(expected_pairs, hashes) if test_end <= h < validation_end
        ],
        "train": [pair for pair, h in zip(expected_pairs, hashes) if h >= validation_end],
    }
    found = {name: pairs_of(splits[name]) for name in SPLITS}
    assert found == by_hash
    in_train = [(s, t) for (_, s, t), h in zip(sample.pairs, sampled_hashes) if h >= validation_end]
    assert splits.sample == in_train
    for name, rel in (("train", 0.05), ("validation", 0.15), ("test", 0.3)):
        assert splits.sizes[name] == pytest.approx(len(by_hash[name]), rel=rel), name
    # The shares of distinct sources are about the fractions asked for.
    distinct = len({source for source, _ in expected_pairs})
    shares = {name: len({s for s, _ in by_hash[name]}) / distinct for name in SPLITS}
    assert shares["validation"] == pytest.approx(0.2, abs=0.03)
    assert shares["test"] == pytest.approx(0.05, abs=0.015)


def test_a_test_fraction_of_zero_leaves_the_test_split_empty(large_tsv):
    path, lines = large_tsv
    splits = load_quietly(
        f"tsv:{path}", sample_size=500, seed=0, validation_fraction=0.1, test_fraction=0.0
    )
    found = {name: pairs_of(splits[name]) for name in SPLITS}
    assert splits.sizes["test"] == 0
    assert found["test"] == []
    assert len(found["train"]) + len(found["validation"]) == len(good_pairs(lines))


def test_hash_thresholds_cut_the_distinct_hashes_at_their_fractions():
    hashes = list(range(100, 0, -1)) + [5, 5, 7]  # 100 distinct, given in any order, repeated
    ordered = sorted(set(hashes))
    # 10% test: the 10 lowest; 20% validation: the next 20.
    assert hash_thresholds(hashes, 0.2, 0.1) == (ordered[10], ordered[30])
    assert hash_thresholds(np.array(hashes, np.int64), 0.05, 0.5) == (ordered[50], ordered[55])
    # Three or more sources: at least one each for a fraction above zero.
    assert hash_thresholds([30, 10, 20], 0.01, 0.01) == (20, 30)
    assert hash_thresholds([42, 42], 0.01, 0.01) == (0, 0)  # one source: all training
    assert hash_thresholds([3, 1, 2], 0.0, 0.7) == (3, 3)  # two test sources, no validation
    assert hash_thresholds([3, 1, 2], 0.7, 0.0) == (0, 3)  # no test source: an empty range
    assert hash_thresholds([3, 1, 2], 0.34, 0.67) == (3, HASH_RANGE)  # no training source


def test_a_small_tsv_file_gives_exact_sizes(tmp_path):
    lines = tsv_lines(600, 400, seed=1, bad_every=50)
    path = write(tmp_path / "pairs.tsv", lines)
    splits = load_quietly(f"tsv:{path}", sample_size=2_000, seed=2)
    assert not splits.estimated
    found = {name: pairs_of(splits[name]) for name in SPLITS}
    assert splits.sizes == {name: len(found[name]) for name in SPLITS}
    check_split_by_source(found, good_pairs(lines), seed=2)
    assert splits.sample == found["train"]  # every training pair, in file order
    assert "about" not in splits.summary()


def test_a_file_of_exactly_sample_size_lines_is_whole(tmp_path):
    lines = tsv_lines(500, 300, seed=4, bad_every=1000)
    path = write(tmp_path / "pairs.tsv", lines)
    splits = load_quietly(f"tsv:{path}", sample_size=500, seed=0)
    assert not splits.estimated
    assert sum(splits.sizes.values()) == 500
    one_more = load_quietly(f"tsv:{path}", sample_size=499, seed=0)
    assert one_more.estimated


def parallel_lines(prefix, count, language):
    return [f"{prefix} {language} {n}".encode() for n in range(1, count + 1)]


def test_parallel_gz_folders_stream_and_halve_the_validation_files(tmp_path):
    for language in ("en", "de"):
        train = parallel_lines("train", 3_000, language)
        train[99] = b"   "  # line 100 blank on both sides: no pair, and no mistake
        write(tmp_path / f"train.{language}.gz", train)
        write(tmp_path / f"valid.{language}.gz", parallel_lines("valid", 301, language), b"\r\n")
    skipped = SkippedItems("malformed lines")
    splits = load_quietly(
        f"parallel:{tmp_path}",
        source_lang="en",
        target_lang="de",
        sample_size=500,
        skipped=skipped,
    )
    assert splits.estimated
    found = {name: pairs_of(splits[name]) for name in SPLITS}
    expected_train = [(f"train en {n}", f"train de {n}") for n in range(1, 3_001) if n != 100]
    assert found["train"] == expected_train
    assert skipped.take_count() == 0
    # No test files: the validation files' odd lines stay, the even ones are the test split.
    assert found["validation"] == [(f"valid en {n}", f"valid de {n}") for n in range(1, 302, 2)]
    assert found["test"] == [(f"valid en {n}", f"valid de {n}") for n in range(2, 302, 2)]
    assert splits.sizes["validation"] == 151 and splits.sizes["test"] == 150  # read whole
    assert splits.sizes["train"] == pytest.approx(2_999, rel=0.03)
    assert set(splits.sample) <= set(expected_train) and len(splits.sample) <= 500


def test_a_parallel_folder_of_train_files_only_is_split_by_source(tmp_path):
    rng = np.random.default_rng(6)
    sources = [f"sentence {int(rng.integers(0, 1_500))}".encode() for _ in range(4_000)]
    write(tmp_path / "train.fr.gz", sources)
    write(tmp_path / "train.en", [f"sentence {n}".encode() for n in range(1, 4_001)])
    splits = load_quietly(
        f"parallel:{tmp_path}",
        source_lang="fr",
        target_lang="en",
        sample_size=800,
        seed=9,
        validation_fraction=0.1,
        test_fraction=0.1,
    )
    assert splits.estimated
    found = {name: pairs_of(splits[name]) for name in SPLITS}
    expected = [(source.decode(), f"sentence {n}") for n, source in enumerate(sources, 1)]
    check_split_by_source(found, expected, seed=9)
    for name in SPLITS:
        assert splits.sizes[name] == pytest.approx(len(found[name]), rel=0.3), name
    assert set(splits.sample) <= set(found["train"])


def test_worker_shards_share_the_training_split_and_keep_the_others_whole(tmp_path):
    lines = tsv_lines(5_000, 3_000, seed=7)  # five blocks of 1,024 lines
    path = write(tmp_path / "pairs.tsv", lines)
    options = dict(sample_size=1_000, seed=1, validation_fraction=0.1, test_fraction=0.1)
    whole = load_quietly(f"tsv:{path}", **options)
    expected = {name: pairs_of(whole[name]) for name in SPLITS}
    shares = []
    for index in (0, 1):
        skipped = SkippedItems("malformed lines")
        splits = load_quietly(f"tsv:{path}", shard=(2, index), skipped=skipped, **options)
        assert splits.sizes == whole.sizes
        assert splits.sample == whole.sample
        assert pairs_of(splits["validation"]) == expected["validation"]
        assert pairs_of(splits["test"]) == expected["test"]
        shares.append(pairs_of(splits["train"]))
        # Each worker names the malformed lines of its own blocks.
        own = [n for n in range(1, 5_001) if n % 97 == 0 and (n - 1) // 1024 % 2 == index]
        assert skipped.take_count() == len(own)
    assert not set(shares[0]) & set(shares[1])  # targets are unique: pairs are lines
    assert collections.Counter(shares[0] + shares[1]) == collections.Counter(expected["train"])
    # Worker 0 reads lines 1-1024, 2049-3072 and 4097-5000; worker 1 the rest.
    targets = [int(target.split()[-1]) for _, target in shares[0]]
    assert all((number - 1) // 1024 % 2 == 0 for number in targets)
    assert len(shares[0]) > len(shares[1])


def test_drawing_validation_from_train_loses_no_training_pair(tmp_path):
    # A folder with its own test files but no validation files: validation is drawn from train
    # by source hash, and every training line is in train or in validation.
    rng = np.random.default_rng(8)
    sources = [f"phrase {int(rng.integers(0, 3_000))}".encode() for _ in range(4_000)]
    write(tmp_path / "train.en", sources)
    write(tmp_path / "train.de", [f"Satz {n}".encode() for n in range(1, 4_001)])
    write(tmp_path / "test.en", [b"a test"])
    write(tmp_path / "test.de", [b"ein Test"])
    splits = load_quietly(
        f"parallel:{tmp_path}",
        source_lang="en",
        target_lang="de",
        sample_size=400,
        seed=0,
        validation_fraction=0.1,
    )
    found = {name: pairs_of(splits[name]) for name in SPLITS}
    assert found["test"] == [("a test", "ein Test")]
    expected = [(source.decode(), f"Satz {n}") for n, source in enumerate(sources, 1)]
    drawn = collections.Counter(found["train"] + found["validation"])
    missing = collections.Counter(expected) - drawn
    assert not missing, f"{sum(missing.values())} training pairs in no split: {list(missing)[:5]}"


def test_strict_stops_the_training_stream_at_a_malformed_line_the_sample_missed(tmp_path):
    lines = tsv_lines(3_000, 2_000, seed=3, bad_every=10_000)
    lines[2_345] = b"only one field"  # line 2346
    path = write(tmp_path / "pairs.tsv", lines)
    splits = load_translation_pairs(f"tsv:{path}", sample_size=300, seed=0, strict=True)
    assert splits.estimated
    # The held-out streams do not name malformed lines: the training one does.
    assert len(pairs_of(splits["validation"])) > 0
    assert len(pairs_of(splits["test"])) > 0
    with pytest.raises(SystemExit) as stop:
        with strict_errors_as_exit():
            pairs_of(splits["train"])
    assert str(stop.value) == (
        "error: malformed lines: pairs.tsv line 2346 (--strict: without it, skipped and named)"
    )
    # The same line in the sample is refused before training.
    with pytest.raises(
        ValueError, match=r"1 malformed line\(s\) of .*pairs\.tsv.*line\(s\) 2346\."
    ):
        load_translation_pairs(f"tsv:{path}", sample_size=3_000, strict=True)
