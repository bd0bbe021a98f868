"""load_translation_pairs on parallel text files (Multi30k, fairseq) and `datasets` folders."""

import gzip

import pytest

from keras_attention.tasks.translation.sources import load_translation_pairs


def write(path, lines, encoding=None):
    data = b"".join((line if isinstance(line, bytes) else line.encode()) + b"\n" for line in lines)
    if str(path).endswith(".gz"):
        data = gzip.compress(data)
    path.write_bytes(data)


def as_lists(splits):
    return {
        name: [(s.decode(), t.decode()) for s, t in split.as_numpy_iterator()]
        for name, split in splits.items()
    }


@pytest.fixture
def multi30k(tmp_path):
    """Multi30k's raw files: train, val and one test set, English and German."""
    for prefix, count in (("train", 6), ("val", 2), ("test_2016_flickr", 3)):
        write(tmp_path / f"{prefix}.en", [f"{prefix} {i} en" for i in range(count)])
        write(tmp_path / f"{prefix}.de", [f"{prefix} {i} de" for i in range(count)])
    return tmp_path


def test_parallel_files_keep_their_own_splits_line_by_line(multi30k):
    splits = load_translation_pairs(f"parallel:{multi30k}", source_lang="en", target_lang="de")
    found = as_lists(splits)
    assert found["train"] == [(f"train {i} en", f"train {i} de") for i in range(6)]
    assert found["validation"] == [(f"val {i} en", f"val {i} de") for i in range(2)]
    assert found["test"] == [
        (f"test_2016_flickr {i} en", f"test_2016_flickr {i} de") for i in range(3)
    ]
    assert splits.sizes == {"train": 6, "validation": 2, "test": 3}
    assert splits.summary() == (
        f"parallel files {multi30k} (train, val, test_2016_flickr; en -> de): "
        "train 6 sentence pairs, validation 2, test 3"
    )
    reverse = as_lists(
        load_translation_pairs(f"parallel:{multi30k}", source_lang="de", target_lang="en")
    )
    assert reverse["train"][0] == ("train 0 de", "train 0 en")


def test_several_test_sets_are_listed_and_one_can_be_chosen(multi30k):
    for lang in ("en", "de"):
        write(multi30k / f"test_2017_flickr.{lang}", [f"2017 {lang}"])
    with pytest.raises(
        ValueError,
        match=r"2 test sets: test_2016_flickr, test_2017_flickr \(choose one with --test-prefix\)",
    ):
        load_translation_pairs(f"parallel:{multi30k}", source_lang="en", target_lang="de")
    splits = load_translation_pairs(
        f"parallel:{multi30k}", source_lang="en", target_lang="de", test_prefix="test_2017_flickr"
    )
    assert as_lists(splits)["test"] == [("2017 en", "2017 de")]


def test_files_linked_from_outside_the_folder_are_refused_unless_allowed(tmp_path):
    folder, elsewhere = tmp_path / "corpus", tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    for prefix in ("train", "val"):
        write(folder / f"{prefix}.en", [f"{prefix} en"])
    write(elsewhere / "private.txt", ["private text"])
    (folder / "train.de").symlink_to(elsewhere / "private.txt")
    write(folder / "val.de", ["val de"])
    with pytest.raises(
        ValueError,
        match=r"1 symbolic link\(s\) under .*corpus lead outside it: train\.de -> "
        r".*elsewhere/private\.txt\. .* pass --allow-outside-links",
    ):
        load_translation_pairs(f"parallel:{folder}", source_lang="en", target_lang="de")
    splits = load_translation_pairs(
        f"parallel:{folder}", source_lang="en", target_lang="de", allow_outside_links=True
    )
    assert as_lists(splits)["train"] == [("train en", "private text")]
    # A link that stays inside the folder, and a folder that is itself a link, are read.
    (folder / "train.de").unlink()
    write(folder / "train.de.txt", ["train de"])
    (folder / "train.de").symlink_to(folder / "train.de.txt")
    (tmp_path / "linked").symlink_to(folder)
    splits = load_translation_pairs(
        f"parallel:{tmp_path / 'linked'}", source_lang="en", target_lang="de"
    )
    assert as_lists(splits)["train"] == [("train en", "train de")]


def test_line_counts_that_differ_name_both_files_and_counts(multi30k):
    write(multi30k / "train.de", ["only one line"])
    with pytest.raises(
        ValueError,
        match=rf"{multi30k / 'train.en'} with 6 lines and {multi30k / 'train.de'} with 1",
    ):
        load_translation_pairs(f"parallel:{multi30k}", source_lang="en", target_lang="de")


def test_a_utf16_side_is_refused_naming_the_file_not_read_as_nul_spaced_text(multi30k):
    # As UTF-8 it would split into lines like "t\x00r\x00a\x00i\x00n\x00" and train.
    (multi30k / "train.de").write_bytes(
        "".join(f"train {i} de\n" for i in range(6)).encode("utf-16")
    )
    with pytest.raises(ValueError, match=rf"^{multi30k / 'train.de'} is UTF-16 text .*iconv"):
        load_translation_pairs(f"parallel:{multi30k}", source_lang="en", target_lang="de")


def test_blank_and_non_utf8_lines_skip_their_pair_naming_files_and_lines(multi30k):
    write(multi30k / "train.en", ["\ufeffa en", "b en", "", "d en"])
    write(multi30k / "train.de", ["a de", b"b d\xe9", "c de", "d de"])
    with pytest.warns(
        UserWarning,
        match=r"train.en / train.de that are blank or not UTF-8 on one side: lines 2, 3\.",
    ):
        splits = load_translation_pairs(f"parallel:{multi30k}", source_lang="en", target_lang="de")
    assert as_lists(splits)["train"] == [
        ("a en", "a de"),
        ("d en", "d de"),
    ]  # byte-order mark dropped
    with pytest.raises(ValueError, match=r"lines 2, 3\. .*--strict"):
        load_translation_pairs(
            f"parallel:{multi30k}", source_lang="en", target_lang="de", strict=True
        )


def test_gzip_files_and_missing_held_out_splits_drawn_from_train(tmp_path):
    for lang in ("en", "fr"):
        write(tmp_path / f"train.{lang}.gz", [f"{i} {lang}" for i in range(20)])
    splits = load_translation_pairs(
        f"parallel:{tmp_path}",
        source_lang="en",
        target_lang="fr",
        validation_fraction=0.1,
        test_fraction=0.2,
    )
    assert splits.sizes == {"train": 14, "validation": 2, "test": 4}
    assert "drawn at random" in splits.summary()
    everything = sorted(pair for pairs in as_lists(splits).values() for pair in pairs)
    assert everything == sorted((f"{i} en", f"{i} fr") for i in range(20))


@pytest.mark.parametrize(
    "languages, message",
    [
        (
            (None, None),
            r"need two different --source-lang and --target-lang; .* has train files for de, en",
        ),
        (("en", "fr"), r"must hold train.fr \(files found for train: de, en\)"),
    ],
)
def test_languages_are_required_and_checked_against_the_files(multi30k, languages, message):
    with pytest.raises(ValueError, match=message):
        load_translation_pairs(
            f"parallel:{multi30k}", source_lang=languages[0], target_lang=languages[1]
        )


def test_languages_given_for_a_source_without_them_are_refused(tmp_path):
    write(tmp_path / "pairs.tsv", ["a\tb"])
    with pytest.raises(ValueError, match="apply to 'parallel:' and 'hf:' data sets only"):
        load_translation_pairs(f"tsv:{tmp_path / 'pairs.tsv'}", source_lang="en", target_lang="de")


def test_hf_translation_column_with_its_splits(tmp_path):
    datasets = pytest.importorskip("datasets", reason="hf: needs the optional `datasets` package")

    def split(prefix, count):
        rows = [{"de": f"{prefix} {i} de", "en": f"{prefix} {i} en"} for i in range(count)]
        features = datasets.Features({"translation": datasets.Translation(languages=["de", "en"])})
        return datasets.Dataset.from_dict({"translation": rows}, features=features)

    folder = tmp_path / "wmt"
    datasets.DatasetDict(
        {"train": split("train", 4), "validation": split("dev", 2), "test": split("test", 2)}
    ).save_to_disk(folder)
    splits = load_translation_pairs(f"hf:{folder}", source_lang="de", target_lang="en")
    found = as_lists(splits)
    assert found["train"] == [(f"train {i} de", f"train {i} en") for i in range(4)]
    assert found["validation"] == [("dev 0 de", "dev 0 en"), ("dev 1 de", "dev 1 en")]
    assert splits.sizes == {"train": 4, "validation": 2, "test": 2}
    with pytest.raises(
        ValueError, match=r"two of the set's languages \(de, en\). Received: source_lang='fr'"
    ):
        load_translation_pairs(f"hf:{folder}", source_lang="fr", target_lang="en")


def test_a_file_beside_its_gz_copy_is_refused_naming_both(multi30k):
    write(multi30k / "train.de.gz", ["an older download"])
    with pytest.raises(ValueError, match=r"holds both train\.de and train\.de\.gz; keep one"):
        load_translation_pairs(f"parallel:{multi30k}", source_lang="en", target_lang="de")


def test_blank_lines_ending_one_side_and_blank_on_both_are_passed_over(multi30k, recwarn):
    from keras_attention.tasks.translation.parallel_text import read_parallel_pairs

    write(multi30k / "train.en", ["a en", "", "c en"])
    write(multi30k / "train.de", ["a de", "  ", "c de", "", ""])
    splits = load_translation_pairs(f"parallel:{multi30k}", source_lang="en", target_lang="de")
    assert as_lists(splits)["train"] == [("a en", "a de"), ("c en", "c de")]
    assert splits.sizes["train"] == 2 and splits.skipped[0].take_count() == 0
    pairs = read_parallel_pairs(multi30k / "train.en", multi30k / "train.de")
    assert pairs == [("a en", "a de"), ("c en", "c de")]
    assert not recwarn.list
