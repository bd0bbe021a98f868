"""A tsv file's first line of column names, told from a sentence pair."""

import pytest

from keras_attention.tasks.translation.tsv_header import is_column_names


@pytest.mark.parametrize(
    "line",
    [
        "source\ttarget",
        "Source\tTarget",
        "src\ttgt",
        "en\tde",
        "EN\tFR",
        "pt-BR\ten-US",
        "zh_Hans\tja",
        "eng\tspa\tattribution",
        "english\tgerman",
        "English Sentence\tSpanish Translation",
        "text_en\ttext_fr",
        "input\toutput",
        "source_text\ttarget_text\tlicense",
    ],
)
def test_column_names_are_told(line):
    assert is_column_names(line.split("\t"))


@pytest.mark.parametrize(
    "line",
    [
        "Go.\tVe.",
        "Hi.\tHola.",
        "source\tfuente",  # a word list's pair: one side is no column word
        "English\tInglés",
        "en\ten",  # the same name twice is no pair of columns
        "text\t",
        "only one field",
        "",
        "the\tel",
        "xx-YY\tzz",  # shaped like tags, but no language's codes
        "12\tdoce",
    ],
)
def test_sentence_pairs_are_not_column_names(line):
    assert not is_column_names(line.split("\t"))
