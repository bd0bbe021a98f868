"""`--help` of the commands describes them in sentences and every flag with its default."""

import argparse
import importlib
import sys

import pytest

from keras_attention.tasks.captioning.flags import build_captioning_parser
from keras_attention.tasks.image_classification.flags import build_vit_parser
from keras_attention.tasks.translation.flags import build_translation_parser

EXPORT_COMMANDS = {
    "keras_attention.convert": "keras-attention-convert",
    "keras_attention.export": "keras-attention-export",
}


def _flags(parser):
    return [action for action in parser._actions if not isinstance(action, argparse._HelpAction)]


@pytest.mark.parametrize("module_name", sorted(EXPORT_COMMANDS))
def test_export_commands_say_what_they_do_in_sentences(module_name):
    parser = importlib.import_module(module_name).build_parser()
    text = parser.format_help()
    description = parser.description.split("\n\n")[0]
    # A whole sentence: a verb first, a full stop last, more than a fragment.
    assert description.split()[0] in ("Convert", "Write") and description.endswith(".")
    assert len(description.split()) >= 12
    assert f"Installed as the command `{EXPORT_COMMANDS[module_name]}`" in text
    assert "examples:" in text and f"\n    {EXPORT_COMMANDS[module_name]} " in text


@pytest.mark.parametrize("module_name", sorted(EXPORT_COMMANDS))
def test_every_export_command_flag_has_help_with_its_default(module_name):
    parser = importlib.import_module(module_name).build_parser()
    for action in _flags(parser):
        assert action.help, f"{action.dest} has no help"
        if action.option_strings:
            assert "default" in action.help or "required" in action.help, action.help
        if action.default not in (None, False):
            assert str(action.default) in action.help, action.help


@pytest.mark.parametrize("module_name", sorted(EXPORT_COMMANDS))
def test_usage_names_the_command_as_it_was_started(module_name, monkeypatch):
    module = importlib.import_module(module_name)
    installed = EXPORT_COMMANDS[module_name]
    monkeypatch.setattr(sys, "argv", [f"/usr/local/bin/{installed}", "--help"])
    assert module.build_parser().format_usage().startswith(f"usage: {installed} ")
    monkeypatch.setattr(sys, "argv", [f"/site-packages/{module_name.replace('.', '/')}.py"])
    assert module.build_parser().format_usage().startswith(f"usage: python -m {module_name} ")


@pytest.mark.parametrize(
    "build", [build_translation_parser, build_captioning_parser, build_vit_parser]
)
@pytest.mark.parametrize("flag", ["--model", "--dropout", "--seed"])
def test_training_flags_say_what_they_do_and_their_default(build, flag):
    parser = build()
    actions = [action for action in _flags(parser) if flag in action.option_strings]
    if not actions:
        pytest.skip(f"{build.__name__} has no {flag}")
    (action,) = actions
    assert action.help, f"{flag} has no help"
    shown = " ".join(parser.format_help().split())
    assert f"(default: {action.default})" in shown, f"{flag}'s help does not show its default"
