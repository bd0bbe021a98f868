"""The RNN attention-variant benchmark: its variants are flags train_nmt.py takes."""

import doctest

import pytest

from benchmarks import rnn_translator_variants as variants
from keras_attention.tasks.translation.flags import parse_translation_arguments


@pytest.mark.parametrize("name", list(variants.VARIANTS))
def test_every_variant_is_a_command_line_the_script_accepts(name):
    args = parse_translation_arguments(variants.VARIANTS[name])
    if args.model == "rnn":
        # Named on the command line, so that a row keeps its meaning if the default moves.
        assert "--location-features" in variants.VARIANTS[name]
    assert args.model == ("transformer" if name == "transformer" else "rnn")


def test_variants_differ_in_what_they_name():
    parsed = {name: parse_translation_arguments(flags) for name, flags in variants.VARIANTS.items()}
    assert parsed["bahdanau"].location_features == "none"
    assert parsed["coverage"].location_features == "coverage"
    assert parsed["location"].location_features == "location"
    assert parsed["luong_general_input_feeding"].attention_style == "luong"
    assert parsed["luong_general_input_feeding"].attention == "general"


def test_unknown_data_sets_are_refused_with_the_translation_sets_listed():
    with pytest.raises(ValueError, match=r"number_words_dutch.*Received: 'glyph_digits'"):
        variants.main(["--data", "glyph_digits"])


def test_docstring_examples_run():
    results = doctest.testmod(variants, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert results.attempted > 0 and results.failed == 0
