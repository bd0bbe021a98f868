"""The translation command line, the recipe written back into it, and the model it describes."""

import re

import numpy as np
import pytest
from optimizer_steps import learning_rates_at

from keras_attention.models.translation.rnn_attention_translator import ATTENTIONS
from keras_attention.models.translation.rnn_attention_translator import RNNAttentionTranslator
from keras_attention.models.translation.transformer_translator import TransformerTranslator
from keras_attention.tasks.learning_rate_schedule import warmup_cosine_decay
from keras_attention.tasks.translation import model_from_flags as models
from keras_attention.tasks.translation.flags import RNN_ATTENTIONS
from keras_attention.tasks.translation.flags import TRANSLATION_MODEL_DEFAULTS
from keras_attention.tasks.translation.flags import build_translation_parser
from keras_attention.tasks.translation.flags import parse_translation_arguments
from keras_attention.tasks.translation.recipe_from_flags import apply_translation_recipe


def test_flags_and_model_defaults():
    args = parse_translation_arguments([])
    assert (args.model, args.dataset, args.output_dir, args.export) == (
        "transformer",
        "builtin",
        "runs/nmt",
        None,
    )
    transformer_defaults = TRANSLATION_MODEL_DEFAULTS["transformer"]
    assert (args.epochs, args.batch_size, args.max_length) == (None, None, None)  # from the data
    assert (args.hidden_dim, args.learning_rate) == (
        transformer_defaults["hidden_dim"],
        transformer_defaults["learning_rate"],
    )
    args = parse_translation_arguments(["--model", "rnn", "--epochs", "7", "--cell", "lstm"])
    assert (args.epochs, args.hidden_dim) == (7, TRANSLATION_MODEL_DEFAULTS["rnn"]["hidden_dim"])
    assert args.learning_rate == TRANSLATION_MODEL_DEFAULTS["rnn"]["learning_rate"] == 3e-3
    model = models.translator_from_arguments(
        args, source_vocabulary_size=30, target_vocabulary_size=40
    )
    assert model.output_shape == (None, None, 40)
    assert isinstance(model, RNNAttentionTranslator)
    for bad in (["--model", "cnn"], ["--strategy", "gpu"], ["--epochs", "0"]):
        with pytest.raises(SystemExit):
            parse_translation_arguments(bad)


def test_a_flag_the_user_sets_wins_over_the_model_default():
    args = parse_translation_arguments(["--hidden-dim", "24", "--learning-rate", "0.01"])
    assert (args.hidden_dim, args.learning_rate) == (24, 0.01)


def test_the_parser_keeps_the_description_and_lists_every_flag():
    parser = build_translation_parser(description="Train a translator.")
    text = parser.format_help()
    assert "Train a translator." in text
    flags = (
        "--vocabulary-size --max-length --hidden-dim --num-layers --num-heads --num-key-value-heads "
        "--cell --attention "
        "--attention-style --location-features --dropout --learning-rate --beam-width --builtin-pairs "
        "--eval-sentences --samples --plots --seed --strategy --export --html"
    )
    for flag in flags.split():
        assert flag in text
    args = parser.parse_args([])
    assert (args.vocabulary_size, args.num_layers, args.num_heads, args.cell) == (1000, 2, 4, "gru")
    assert (args.attention, args.attention_style, args.dropout, args.beam_width) == (
        "additive",
        "bahdanau",
        0.1,
        1,
    )
    assert args.location_features == "coverage"
    assert (args.builtin_pairs, args.eval_sentences, args.samples, args.plots, args.seed) == (
        20000,
        None,
        5,
        3,
        0,
    )


def test_the_recipe_fills_what_the_user_left_out():
    args = parse_translation_arguments(["--batch-size", "8"])
    recipe = apply_translation_recipe(args, 18000, source_length=20, target_length=22)
    # 22 tokens and the end token, rounded up to a multiple of 8; 54,000 pairs seen.
    assert (args.max_length, args.batch_size, args.epochs) == (24, 8, 3)
    assert (recipe.max_length, recipe.batch_size, recipe.epochs) == (24, 8, 3)
    assert recipe.reasons["batch_size"] == "set by the user"
    assert recipe.steps_per_epoch == 18000 // 8


def test_the_transformer_is_sized_by_the_flags():
    args = parse_translation_arguments(
        ["--hidden-dim", "16", "--num-layers", "1", "--num-heads", "2", "--max-length", "10"]
    )
    model = models.translator_from_arguments(args, 30, 40)
    assert isinstance(model, TransformerTranslator)
    assert model.output_shape == (None, None, 40)
    config = model.get_config()
    assert (config["max_source_length"], config["max_target_length"]) == (10, 10)
    assert (config["hidden_dim"], config["intermediate_dim"]) == (16, 32)  # twice the width
    assert (config["num_layers"], config["num_heads"], config["dropout"]) == (1, 2, 0.1)
    assert config["num_key_value_heads"] is None


def test_grouped_query_attention_is_one_flag_and_must_divide_the_heads(capsys):
    flags = "--hidden-dim 16 --num-layers 1 --num-heads 4 --num-key-value-heads 2 --max-length 10"
    args = parse_translation_arguments(flags.split())
    model = models.translator_from_arguments(args, 30, 40)
    assert model.get_config()["num_key_value_heads"] == 2
    with pytest.raises(SystemExit):
        parse_translation_arguments(["--num-heads", "4", "--num-key-value-heads", "3"])
    error = capsys.readouterr().err
    assert "--num-key-value-heads must divide --num-heads" in error
    assert "Received: --num-heads 4, --num-key-value-heads 3" in error


def test_every_score_of_the_rnn_translator_is_a_choice_of_attention():
    assert RNN_ATTENTIONS is ATTENTIONS  # one tuple, defined in layers.attention.score_modes
    args = parse_translation_arguments(
        ["--model", "rnn", "--attention", "concat", "--hidden-dim", "16", "--max-length", "10"]
    )
    model = models.translator_from_arguments(args, 30, 40)
    assert isinstance(model, RNNAttentionTranslator) and model.attention == "concat"


def test_an_unknown_model_is_named():
    args = parse_translation_arguments(["--hidden-dim", "16", "--max-length", "10"])
    args.model = "cnn"
    with pytest.raises(ValueError, match="`args.model` must be 'transformer' or 'rnn'.*'cnn'"):
        models.translator_from_arguments(args, 30, 40)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--max-length", "1"], "--max-length: must be an integer >= 2 .*; received 1"),
        (
            ["--num-heads", "3", "--hidden-dim", "64"],
            "--num-heads must divide --hidden-dim .* Received: --hidden-dim 64, --num-heads 3",
        ),
        (["--num-heads", "3"], "Received: --hidden-dim 64, --num-heads 3"),  # the default width
    ],
)
def test_flags_the_model_cannot_take_are_refused_while_parsing(argv, message, capsys):
    # Not later, by the model's constructor, in its own argument names.
    with pytest.raises(SystemExit) as stop:
        parse_translation_arguments(argv)
    assert stop.value.code == 2
    assert re.search(message, capsys.readouterr().err.splitlines()[-1])
    assert parse_translation_arguments(["--model", "rnn", "--num-heads", "3"]).hidden_dim == 64


def test_compile_translator_warms_up_then_decays_to_zero():
    args = parse_translation_arguments(
        ["--model", "rnn", "--hidden-dim", "8", "--epochs", "4", "--learning-rate", "0.01"]
    )
    model = models.translator_from_arguments(args, 20, 20)
    models.compile_translator(model, args, steps_per_epoch=25, jit_compile=False)
    # 4 x 25 steps, a tenth of them warm-up (the schedule is checked against its closed
    # form in test_learning_rate_schedule.py).
    expected = warmup_cosine_decay(0.01, total_steps=100, warmup_steps=10)
    steps = (0, 5, 10, 55, 100)
    np.testing.assert_allclose(learning_rates_at(model, steps), [expected(s) for s in steps])
    assert float(expected(10)) == pytest.approx(0.01) and float(expected(100)) == 0.0
    with pytest.raises(ValueError, match="steps_per_epoch"):
        models.compile_translator(model, args, steps_per_epoch=0)


@pytest.mark.parametrize("flag, expected", [("none", None), ("coverage", "coverage")])
def test_location_features_reach_the_rnn_model(flag, expected):
    args = parse_translation_arguments(
        ["--model", "rnn", "--hidden-dim", "8", "--location-features", flag]
    )
    model = models.translator_from_arguments(args, 30, 40)
    assert model.get_config()["location_features"] == expected
    with pytest.raises(SystemExit):
        parse_translation_arguments(["--location-features", "cumulative"])


def test_flags_of_the_other_model_are_warned_of_once(recwarn, monkeypatch):
    from keras_attention.tasks.translation.flags import parse_translation_arguments
    from keras_attention.training import command_line

    monkeypatch.setattr(command_line, "_SAID_UNUSED_FLAGS", set())  # other tests said theirs

    argv = ["--model", "rnn", "--num-layers", "3", "--num-key-value-heads=2", "--cell", "lstm"]
    parse_translation_arguments(argv)
    parse_translation_arguments(argv)  # as a script parses twice: said once
    assert sorted(str(w.message) for w in recwarn.list) == [
        "--num-key-value-heads applies to --model transformer; --model rnn ignores it",
        "--num-layers applies to --model transformer; --model rnn ignores it",
    ]
    recwarn.clear()
    parse_translation_arguments(["--model", "transformer", "--attention-style", "luong"])
    assert [str(w.message) for w in recwarn.list] == [
        "--attention-style applies to --model rnn; --model transformer ignores it"
    ]
