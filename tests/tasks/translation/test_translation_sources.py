"""load_translation_pairs: the built-in corpus, TSV files and tfds (mocked)."""

import collections

import pytest
import tensorflow as tf

from keras_attention.tasks.translation.builtin_corpus import builtin_translation_splits
from keras_attention.tasks.translation.sources import load_translation_pairs
from keras_attention.tasks.translation.sources import read_tsv_pairs


def as_pairs(dataset):
    return [(source.decode(), target.decode()) for source, target in dataset.as_numpy_iterator()]


def scalar_string_pairs(dataset):
    source, target = dataset.element_spec
    return all(spec.dtype == tf.string and spec.shape.rank == 0 for spec in (source, target))


def write_lines(path, lines):
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return str(path)


def test_builtin_gives_the_builtin_splits():
    splits = load_translation_pairs("builtin", num_pairs=200, seed=2, test_fraction=0.1)
    expected = builtin_translation_splits(num_pairs=200, seed=2, test_fraction=0.1)
    assert set(splits) == {"train", "validation", "test"}
    for name, dataset in splits.items():
        assert scalar_string_pairs(dataset)
        assert as_pairs(dataset) == expected[name]
    assert [len(expected[name]) for name in ("train", "validation", "test")] == [170, 10, 20]


def test_tsv_is_read_and_split_without_shared_sources(tmp_path):
    lines = [f"sentence {i % 80}\tfrase {i}".encode() for i in range(100)]
    path = write_lines(tmp_path / "pairs.tsv", lines)
    splits = load_translation_pairs(
        f"tsv:{path}", seed=3, validation_fraction=0.1, test_fraction=0.1
    )
    pairs = {name: as_pairs(dataset) for name, dataset in splits.items()}
    everything = [pair for name in pairs for pair in pairs[name]]
    assert sorted(everything) == sorted(tuple(line.decode().split("\t")) for line in lines)
    sources = {name: {source for source, _ in split} for name, split in pairs.items()}
    # 80 distinct sources: 8 for validation, 8 for test, the rest for training.
    assert len(sources["validation"]) == 8 and len(sources["test"]) == 8
    assert not sources["train"] & (sources["validation"] | sources["test"])
    assert not sources["validation"] & sources["test"]
    again = load_translation_pairs(
        f"tsv:{path}", seed=3, validation_fraction=0.1, test_fraction=0.1
    )
    assert as_pairs(again["test"]) == pairs["test"]
    other = load_translation_pairs(
        f"tsv:{path}", seed=4, validation_fraction=0.1, test_fraction=0.1
    )
    assert as_pairs(other["test"]) != pairs["test"]


def test_tsv_keeps_utf8_and_strips_spaces(tmp_path):
    path = write_lines(
        tmp_path / "pairs.tsv",
        [
            "\ufeffgood morning\tbuenos días".encode(),
            "  the boy \t el niño  ".encode(),
            "crlf line\tlínea crlf\r".encode(),
        ],
    )
    assert read_tsv_pairs(path) == [
        ("good morning", "buenos días"),
        ("the boy", "el niño"),
        ("crlf line", "línea crlf"),
    ]


def test_tsv_malformed_lines_are_reported_by_number(tmp_path):
    lines = [
        b"one\tuno",  # 1 good
        b"no tab here",  # 2 one field
        b"a\tb\tc\td",  # 3 four fields (a third, attribution, is allowed)
        b"\tempty source",  # 4 empty source
        b"empty target\t  ",  # 5 empty target
        b"two\tdos",  # 6 good
        b"",  # 7 blank
        b"bad\t\xff\xfe bytes",  # 8 not UTF-8
        b"three\ttres",  # 9 good
    ]
    path = write_lines(tmp_path / "pairs.tsv", lines)
    with pytest.warns(
        UserWarning,
        match=r"Skipped 5 malformed line\(s\).*: line\(s\) 2, 3, 4, 5, 8\.$",
    ):
        pairs = read_tsv_pairs(path)
    assert pairs == [("one", "uno"), ("two", "dos"), ("three", "tres")]


def test_tsv_warning_names_the_first_ten_bad_lines_and_counts_the_rest(tmp_path):
    lines = [b"ok\tbien"] + [b"broken"] * 12
    path = write_lines(tmp_path / "pairs.tsv", lines)
    expected = "line(s) 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 and 2 more."
    with pytest.warns(UserWarning, match="Skipped 12 malformed") as record:
        splits = load_translation_pairs(f"tsv:{path}")
    assert len(record) == 1 and str(record[0].message).endswith(expected)
    assert sum(splits.sizes.values()) == 1
    assert sum(len(as_pairs(dataset)) for dataset in splits.values()) == 1


def test_tsv_without_a_valid_line_raises(tmp_path):
    path = write_lines(tmp_path / "pairs.tsv", [b"just text", b"a\tb\tc\td"])
    with pytest.warns(UserWarning, match=r"line\(s\) 1, 2\."):
        with pytest.raises(ValueError, match="at least one valid .* Received: path="):
            load_translation_pairs(f"tsv:{path}")


def test_a_tsv_file_with_an_id_column_first_is_refused_not_trained_on_ids(tmp_path):
    path = tmp_path / "export.tsv"
    path.write_text("".join(f"{1000 + i}\tthe cat {i}\tel gato {i}\n" for i in range(40)))
    with pytest.raises(ValueError) as error:
        load_translation_pairs(f"tsv:{path}")
    assert str(error.value).startswith(
        f"{path}: the first column is a number on 40 of the 40 lines read, and two more follow "
        "(line 1: '1000\\tthe cat 0\\tel gato 0'): an id column first?"
    )
    assert f"`cut -f2,3 {path} > pairs.tsv`" in str(error.value)


@pytest.mark.parametrize(
    "lines",
    [
        [f"{i}\tnumero {i}" for i in range(40)],  # numbers to translate: two columns
        [f"{i}\tnumero {i}\tCC-BY" for i in range(30)] + [f"w{i}\tp{i}\tCC-BY" for i in range(10)],
        [f"the {i}\tel {i}\tCC-BY 2.0 #{i}" for i in range(40)],  # Tatoeba's attribution
    ],
)
def test_numbers_on_two_columns_or_on_few_lines_are_read(tmp_path, lines):
    path = tmp_path / "pairs.tsv"
    path.write_text("\n".join(lines) + "\n")
    assert len(read_tsv_pairs(path)) == 40


def test_missing_tsv_file_raises(tmp_path):
    with pytest.raises(ValueError, match="does not exist. Received: path="):
        load_translation_pairs(f"tsv:{tmp_path / 'missing.tsv'}")


@pytest.mark.parametrize("dataset", ["folder:/tmp/images", "Not a name!", 42, "no_such_set_xyz"])
def test_unknown_dataset_raises(dataset):
    with pytest.raises(ValueError, match=r"`dataset` must be .* Received: dataset="):
        load_translation_pairs(dataset)


def test_a_misspelt_tfds_name_is_one_line_naming_the_close_names(tmp_path):
    # Not tfds' own error, whose message lists every data set tfds knows.
    with pytest.raises(ValueError) as error:
        load_translation_pairs("buitin", data_dir=str(tmp_path))
    assert str(error.value).endswith(
        f"'buitin' is neither a tensorflow-datasets set nor prepared in {tmp_path} "
        "(did you mean 'builtin'?). Received: dataset='buitin'"
    )
    assert "\n" not in str(error.value) and error.value.__cause__ is None


def test_tfds_translation_dataset_with_mock_data():
    import tensorflow_datasets as tfds

    with tfds.testing.mock_data(num_examples=3):
        splits = load_translation_pairs("ted_hrlr_translate/pt_to_en")
        assert set(splits) == {"train", "validation", "test"}
        for dataset in splits.values():
            assert scalar_string_pairs(dataset)
            pairs = as_pairs(dataset)
            assert len(pairs) == 3
            assert all(isinstance(side, str) for pair in pairs for side in pair)
        only_train = load_translation_pairs("ted_hrlr_translate/pt_to_en", tfds_splits=["train"])
        assert list(only_train) == ["train"]


def test_tfds_dataset_that_is_not_a_translation_raises():
    import tensorflow_datasets as tfds

    with tfds.testing.mock_data(num_examples=2):
        with pytest.raises(
            ValueError,
            match=r"\(source, target\) strings. Received: "
            r"dataset='mnist'",
        ):
            load_translation_pairs("mnist", tfds_splits=["train"])


def test_duplicate_lines_stay_together(tmp_path):
    lines = [b"same\tigual"] * 5 + [f"s{i}\tt{i}".encode() for i in range(15)]
    path = write_lines(tmp_path / "pairs.tsv", lines)
    splits = load_translation_pairs(f"tsv:{path}", validation_fraction=0.25, test_fraction=0.25)
    counts = collections.Counter(
        name
        for name, dataset in splits.items()
        for source, _ in as_pairs(dataset)
        if source == "same"
    )
    assert list(counts.values()) == [5]


@pytest.mark.parametrize(
    "header",
    [
        b"source\ttarget",
        b"en\tes",
        b"English\tSpanish\tAttribution",
        b"text_en\ttext_es",
        b"src\ttgt\tlicense\turl",  # four columns: not a well-formed pair, still no mistake
    ],
)
def test_a_first_line_of_column_names_is_skipped_and_said(tmp_path, header):
    lines = [header] + [f"sentence {n}\tfrase {n}".encode() for n in range(60)]
    path = write_lines(tmp_path / "pairs.tsv", lines)
    with pytest.warns(UserWarning, match=r"pairs.tsv: line 1 \(.*\) names the columns") as said:
        splits = load_translation_pairs(f"tsv:{path}", validation_fraction=0.1, test_fraction=0.1)
    assert len(said) == 1  # and no "malformed line"
    found = [pair for split in splits.values() for pair in as_pairs(split)]
    assert sorted(found) == sorted((f"sentence {n}", f"frase {n}") for n in range(60))
    assert sum(splits.sizes.values()) == 60 and splits.skipped[0].take_count() == 0
    with pytest.warns(UserWarning, match="names the columns"):
        assert len(read_tsv_pairs(path)) == 60


def test_a_first_line_that_is_a_pair_is_kept(tmp_path, recwarn):
    lines = [b"Go.\tVe.", b"source\tfuente", b"en\ten"] + [b"Hi.\tHola."] * 5
    path = write_lines(tmp_path / "pairs.tsv", lines)
    assert read_tsv_pairs(path)[:3] == [("Go.", "Ve."), ("source", "fuente"), ("en", "en")]
    assert not recwarn.list
