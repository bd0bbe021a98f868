"""Dutch and Finnish number names, and the English -> one-word number files made of them."""

import re

import pytest

from benchmarks import learning_datasets as ld
from benchmarks.number_words import number_word
from keras_attention.tasks.translation.sources import read_tsv_pairs

# Spellings as the languages' dictionaries and style guides give them.
DUTCH = {
    0: "nul",
    13: "dertien",
    21: "eenentwintig",
    22: "tweeëntwintig",
    33: "drieëndertig",
    88: "achtentachtig",
    99: "negenennegentig",
    100: "honderd",
    122: "honderdtweeëntwintig",
    769: "zevenhonderdnegenenzestig",
    1000: "duizend",
    2019: "tweeduizendnegentien",
    80000: "tachtigduizend",
    100001: "honderdduizendeen",
}
FINNISH = {
    0: "nolla",
    10: "kymmenen",
    17: "seitsemäntoista",
    48: "neljäkymmentäkahdeksan",
    100: "sata",
    300: "kolmesataa",
    1000: "tuhat",
    2024: "kaksituhattakaksikymmentäneljä",
    11000: "yksitoistatuhatta",
    100000: "satatuhatta",
    769000: "seitsemänsataakuusikymmentäyhdeksäntuhatta",
}


@pytest.mark.parametrize("language, table", [("dutch", DUTCH), ("finnish", FINNISH)])
def test_numbers_as_the_languages_write_them(language, table):
    assert {value: number_word(value, language) for value in table} == table


@pytest.mark.parametrize("language", ["dutch", "finnish"])
def test_a_number_above_a_thousand_is_its_thousands_then_its_rest(language):
    # The name of 1000 * a + b (b > 0) is the name of 1000 * a followed by b's.
    for thousands, rest in ((3, 300), (21, 5), (769, 769), (999, 999), (1, 1)):
        whole = number_word(1000 * thousands + rest, language)
        assert whole == number_word(1000 * thousands, language) + number_word(rest, language)
        assert " " not in whole


@pytest.mark.parametrize(
    "value, language, message",
    [
        (1_000_000, "dutch", "value=1000000"),
        (-1, "finnish", "value=-1"),
        (True, "dutch", "value=True"),
        (3, "german", "language='german'"),
    ],
)
def test_bad_numbers_and_languages_are_refused(value, language, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        number_word(value, language)


@pytest.fixture(scope="module")
def english_values():
    """English words -> number, for every number 0..999,999."""
    return {ld.number_in_words(value): value for value in range(1_000_000)}


@pytest.mark.parametrize(
    "spread, six_digit_share", [("digits", (0.1, 0.25)), ("values", (0.85, 1))]
)
def test_number_files_spread_their_numbers_as_asked(
    tmp_path, english_values, spread, six_digit_share
):
    path = tmp_path / "numbers.tsv"
    info = ld.make_number_word_tsv(str(path), 600, language="finnish", spread=spread, seed=0)
    assert info == {"path": str(path), "language": "finnish", "num_pairs": 600}
    pairs = read_tsv_pairs(str(path))
    assert len(pairs) == 600 and len({source for source, _ in pairs}) == 600
    values = [english_values[source] for source, _ in pairs]
    assert [target for _, target in pairs] == [number_word(v, "finnish") for v in values]
    low, high = six_digit_share
    assert low <= sum(v >= 100_000 for v in values) / 600 <= high


def test_number_files_refuse_bad_arguments(tmp_path):
    path = str(tmp_path / "n.tsv")
    with pytest.raises(ValueError, match=re.escape("spread='log'")):
        ld.make_number_word_tsv(path, 3, spread="log")
    with pytest.raises(ValueError, match=re.escape("language='klingon'")):
        ld.make_number_word_tsv(path, 3, language="klingon")
    with pytest.raises(ValueError, match=re.escape("num_pairs=600000")):
        ld.make_number_word_tsv(path, 600_000)
