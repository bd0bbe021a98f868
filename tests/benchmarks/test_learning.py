"""The learning benchmark: case selection, commands, scoring rules, tables (no training here)."""

import doctest
import json
import pathlib
import re
import sys

import numpy as np
import pytest
import tensorflow as tf

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import keras_hub_vit_peer  # noqa: E402
from benchmarks import learning  # noqa: E402
from benchmarks import learning_scores as scores  # noqa: E402

# What a user passes: data, where to write, and the image size the ViT example asks for.
USER_FLAGS = {"--model", "--dataset", "--image-size", "--output-dir", "--export"}


def test_every_family_has_three_or_more_data_sets_with_both_roles():
    for family in learning.MODELS:
        sets = [data for data in learning.DATA_SETS if data.family == family]
        assert len(sets) >= 3, family
        assert {data.role for data in sets} == {"tune", "report"}, family
    names = [case.name for case in learning.all_cases()]
    assert len(names) == len(set(names))
    assert "vit/keras_hub/glyph_digits" in names


def test_quick_selection_runs_the_first_set_of_each_model_and_the_peer():
    names = [case.name for case in learning.select_cases(None, quick=True)]
    assert names == [
        "captioning/show_attend_tell/glyph_digits",
        "captioning/transformer/glyph_digits",
        "captioning/vit/glyph_digits",
        "vit/ours/glyph_digits",
        "vit/keras_hub/glyph_digits",
        "vit/swin/glyph_digits",
        "nmt/transformer/dates",
        "nmt/rnn/dates",
    ]
    assert len(learning.select_cases(None, quick=False)) == len(learning.all_cases())


def test_only_selects_by_family_model_set_or_case():
    only = ["numbers", "captioning/transformer/object_relations_tall"]
    names = [case.name for case in learning.select_cases(only, quick=False)]
    assert names == [
        "captioning/transformer/object_relations_tall",
        "nmt/transformer/numbers",
        "nmt/rnn/numbers",
    ]
    with pytest.raises(ValueError, match=re.escape("only=['poetry']")):
        learning.select_cases(["vit", "poetry"], quick=False)


def test_only_matches_whole_parts_of_case_names():
    names = [
        c.name
        for c in learning.select_cases(["captioning/transformer/object_relations"], quick=False)
    ]
    assert names == ["captioning/transformer/object_relations"]
    names = [c.name for c in learning.select_cases(["captioning/transformer"], quick=False)]
    assert names == [
        f"captioning/transformer/{d}"
        for d in (
            "glyph_digits",
            "glyph_digits/epochs_20",
            "object_relations",
            "glyph_colour_varlen",
            "object_relations_tall",
            "pixel_digit_strips",
            "pixel_digit_strips/epochs_20",
            "bitmap_digit_strips",
            "bitmap_digit_strips/epochs_20",
        )
    ]
    # A data set's name picks its default and its user-epochs case.
    names = [c.name for c in learning.select_cases(["pixel_digits"], quick=False)]
    assert names == [
        "vit/ours/pixel_digits",
        "vit/ours/pixel_digits/epochs_40",
        "vit/swin/pixel_digits",
        "vit/swin/pixel_digits/epochs_40",
    ]
    with pytest.raises(ValueError, match="captioning/trans"):
        learning.select_cases(["captioning/trans"], quick=False)


@pytest.mark.parametrize("quick", [False, True])
def test_commands_pass_only_what_a_user_would(tmp_path, quick):
    made = {
        "train": {"directory": "/data/train", "path": "/data/train.tsv", "image_size": [40, 24]}
    }
    for case in learning.all_cases():
        command = learning.command_for(case, made, str(tmp_path), quick, {"epochs": 7})
        flags = {part for part in command if part.startswith("--")}
        if case.model == learning.PEER_MODEL:
            assert "benchmarks.keras_hub_vit_peer" in command
            assert command[command.index("--epochs") + 1] == "7"  # our ViT's epochs
            continue
        assert command[1] == learning.SCRIPTS[case.family]
        expected = USER_FLAGS | ({"--epochs"} if quick or case.epochs else set())
        assert flags <= expected, case.name
        assert command[command.index("--export") + 1].startswith(str(tmp_path))
        if case.family == "vit":
            assert command[command.index("--image-size") + 1] == "40"
        if "--epochs" in command:
            epochs = command[command.index("--epochs") + 1]
            assert epochs == ("1" if quick else str(case.epochs)), case.name


def test_long_compound_sets_are_tsv_files_tuned_on_one_language_and_reported_on_another(
    tmp_path,
):
    sets = {data.name: data for data in learning.DATA_SETS if data.maker == "make_compound_tsv"}
    assert {name: data.role for name, data in sets.items()} == {
        "compounds_german": "tune",
        "compounds_dutch": "report",
    }
    assert sets["compounds_german"].params["language"] != sets["compounds_dutch"].params["language"]
    made = learning.make_data(sets["compounds_dutch"], str(tmp_path), quick=True)
    for split, seed_pairs in (("train", 160), ("held_out", 16)):
        lines = pathlib.Path(made[split]["path"]).read_text(encoding="utf-8").splitlines()
        assert made[split]["path"].endswith(".tsv") and len(lines) == seed_pairs
        assert all(20 <= len(line.split("\t")[1]) <= 60 for line in lines)
    case = learning.Case("nmt", "rnn", sets["compounds_dutch"])
    command = learning.command_for(case, made, str(tmp_path / "run"), quick=False)
    assert command[command.index("--dataset") + 1] == f"tsv:{made['train']['path']}"


# scoring rules


def test_word_rows_follow_the_token_holding_each_words_first_letter():
    assert scores.word_rows([" ", "one", " three", " fi", "ve", ""], "one three five") == [1, 2, 3]
    assert scores.word_rows([b"star", b" left", b" of", b" ring"], "star left of ring") == [
        0,
        1,
        2,
        3,
    ]
    # Tokens that do not spell the caption: one row per word.
    assert scores.word_rows(["st", "##ar", "ring"], "star ring") == [0, 1]


def test_attention_peak_maps_cells_to_image_coordinates():
    attention = np.zeros((4, 6))
    attention[3, 1] = 1.0  # centre: row 3.5 * 80 / 4 = 70, col 1.5 * 60 / 6 = 15
    assert scores.attention_peak_in_box(attention, (80, 60), [60, 10, 80, 20])
    assert not scores.attention_peak_in_box(attention, (80, 60), [60, 16, 80, 30])
    assert not scores.attention_peak_in_box(attention, (80, 60), [0, 10, 70, 20])  # end excluded


def test_named_object_attention_matches_repeated_words_in_order_and_skips_unknown_ones():
    boxes = [[[0, 0, 8, 8], [0, 8, 8, 16], [0, 16, 8, 24]]]  # "one", "two", "one"
    attention = np.zeros((1, 4, 1, 3))
    attention[0, 0, 0, 0] = 1  # first "one": left cell, its box
    attention[0, 1, 0, 0] = 1  # "five" is not in the reference: not counted
    attention[0, 2, 0, 0] = 1  # second "one": left cell, but its box is the right one
    result = scores.attention_on_named_objects(
        ["one five one"],
        ["one two one"],
        attention,
        None,
        boxes,
        (8, 24),
        {"one", "two", "five"},
    )
    assert result == {"hits": 1, "words": 2, "fraction": 0.5, "chance": pytest.approx(1 / 3)}


def test_corpus_scores_are_exact_string_equality_and_sacrebleu():
    result = scores.corpus_scores(["It's A Dog.", "it's a dog."], ["It's A Dog.", "It's A Dog."])
    assert result["exact_match"] == 0.5 and result["count"] == 2
    assert 0 < result["bleu"] < 100 and 0 < result["chrf"] < 100
    assert scores.corpus_scores(["a b c d"], ["a b c d"])["bleu"] == pytest.approx(100.0)


def test_score_captioner_batches_and_reads_tokens():
    images = np.zeros((3, 8, 16, 3), np.float32)
    images[:, :, :8] = 255.0  # the left half is bright

    def serve(images):
        count = tf.shape(images)[0]
        attention = tf.tile(tf.constant([[[[1.0, 0.0]], [[0.0, 1.0]]]]), [count, 1, 1, 1])
        return {
            "caption": tf.fill([count], "one two"),
            "attention": attention,  # (B, 2, 1, 2): word 1 looks left, word 2 right
            "caption_tokens": tf.tile(tf.constant([["one", " two"]]), [count, 1]),
        }

    boxes = [[[0, 0, 8, 8], [0, 8, 8, 16]]] * 2 + [[[0, 8, 8, 16], [0, 0, 8, 8]]]
    result = scores.score_captioner(
        serve, images, ["one two", "one two", "one two"], boxes, {"one", "two"}, batch_size=2
    )
    assert result["exact_match"] == 1.0 and result["count"] == 3
    assert result["attention_words"] == 6
    assert result["attention_on_object"] == pytest.approx(4 / 6)
    assert result["attention_chance"] == pytest.approx(0.5)


def test_translator_and_classifier_scores_on_an_exported_model(tmp_path):
    import keras

    # A tiny classifier exported as the ViT peer exports it, in the place of a finished run,
    # scored again on the quick held-out glyphs without training.
    case = learning.Case("vit", "ours", learning.DATA_SETS[4])
    inputs = keras.Input((32, 32, 3))
    outputs = keras.layers.Dense(10)(keras.layers.GlobalAveragePooling2D()(inputs))
    export = tmp_path / "runs" / "vit_ours_glyph_digits" / "export"
    keras_hub_vit_peer.export(keras.Model(inputs, outputs), str(export), list("0123456789"))
    previous = {"command": "python examples/train_vit.py", "wall_s": 2.0, "cpu_s": 1.0}
    record = learning.run_case(case, str(tmp_path), True, None, previous=previous)
    assert record["error"] is None, record["error"]
    assert record["scores"]["count"] == 20 and record["cpu_s"] == 1.0
    assert record["train_examples"] == 60 and record["role"] == "tune"
    assert record["scores"]["accuracy"] in {k / 20 for k in range(21)}

    # Held-out translation pairs drop sources seen in training.
    train, held = tmp_path / "train.tsv", tmp_path / "held.tsv"
    train.write_text("a\tA\nb\tB\n", encoding="utf-8")
    held.write_text("b\tB\nc\tC\n", encoding="utf-8")
    sources, targets = learning.held_out_pairs({"path": str(train)}, {"path": str(held)})
    assert (sources, targets) == (["c"], ["C"])
    result = scores.score_translator(
        lambda text: {"translation": tf.strings.upper(text)}, ["c", "d e"], ["C", "D  E"]
    )
    assert result["exact_match"] == 0.5


# output


def _payload(records):
    return {
        "machine": {"date_utc": "2026-01-01 00:00", "cpu": "cpu"},
        "results": records,
        "notes": ["a note"],
    }


_RECORDS = [
    {
        "case": "vit/ours/glyph_digits",
        "family": "vit",
        "model": "ours",
        "dataset": "glyph_digits",
        "role": "tune",
        "train_examples": 1350,
        "held_out_examples": 500,
        "cpu_s": 812.4,
        "scores": {"accuracy": 0.93, "count": 500},
        "error": None,
        "script_metrics": {"epochs": 40},
    },
    {
        "case": "nmt/rnn/dates",
        "family": "nmt",
        "model": "rnn",
        "dataset": "dates",
        "role": "tune",
        "train_examples": 5000,
        "held_out_examples": 500,
        "cpu_s": 100.0,
        "scores": None,
        "error": "exit 1: Traceback\nValueError: bad | thing",
        "script_metrics": {},
    },
]


def test_markdown_table_has_one_row_per_record_with_scores_or_failures():
    table = learning.markdown_table(_payload(_RECORDS))
    rows = [line for line in table.splitlines() if line.startswith("| ")]
    assert len(rows) == 3  # header and two records
    assert (
        "| ViT (train_vit.py) | glyph_digits | tune | 1350 images | 500 | accuracy 0.930 |"
        in (rows[1])
    )
    assert "failed (exit 1" in rows[2] and "ValueError: bad / thing" in rows[2]
    assert rows[2].count("|") == rows[0].count("|")
    # A run with the epochs a user passed says so in the model column.
    user_run = dict(_RECORDS[0], case="vit/ours/glyph_digits/epochs_40", user_epochs=40)
    table = learning.markdown_table(_payload([user_run]))
    assert "| ViT (train_vit.py), --epochs 40 | glyph_digits | tune |" in table


def test_update_readme_adds_then_replaces_its_section_only(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# Benchmarks\n\nintro\n\n## Results\n\nkept\n", encoding="utf-8")
    learning.update_readme(_payload(_RECORDS[:1]), readme=str(readme))
    first = readme.read_text(encoding="utf-8")
    assert first.startswith("# Benchmarks\n\nintro\n\n## Results\n\nkept\n\n## Learning quality")
    learning.update_readme(_payload(_RECORDS), readme=str(readme))
    second = readme.read_text(encoding="utf-8")
    assert second.count("## Learning quality") == 1 and "nmt" not in first
    assert "failed" in second and second.startswith(first.split(learning.BEGIN)[0])


def test_merge_keeps_earlier_cases_and_replaces_rerun_ones(tmp_path):
    path = tmp_path / "learning.json"
    path.write_text(json.dumps({"quick": False, "results": _RECORDS}))
    rerun = dict(_RECORDS[1], error=None, scores={"exact_match": 1.0})
    merged = learning._merge(str(path), [rerun])
    assert [r["case"] for r in merged] == ["vit/ours/glyph_digits", "nmt/rnn/dates"]
    assert merged[1]["error"] is None


def test_merged_settings_name_only_this_runs_selection(tmp_path):
    # A merged file's results come from several runs: --only is this run's, not the file's.
    rerun = dict(_RECORDS[1])
    merged = learning._settings("/runs", ["nmt/rnn/dates"], [rerun], merged=True)
    assert merged == {
        "output_dir": "/runs",
        "last_run_only": ["nmt/rnn/dates"],
        "last_run_cases": ["nmt/rnn/dates"],
    }
    quick = learning._settings("/runs", None, [rerun], merged=False)
    assert quick == {"output_dir": "/runs", "only": None}


def test_rows_say_when_they_were_trained_and_hand_written_notes_survive_a_rerun(tmp_path):
    # Rows of one table come from several runs; each says when it was trained.
    table = learning.markdown_table(_payload([dict(_RECORDS[0], trained_utc="2026-11-26 21:25")]))
    assert table.splitlines()[4].endswith("| 40 | 2026-11-26 21:25 |")
    assert "| 40 | ? |" in learning.markdown_table(_payload(_RECORDS[:1]))  # not recorded
    path = tmp_path / "learning.json"
    hand_written = "The vit rows were trained before the augmentation changed."
    path.write_text(json.dumps({"notes": [*learning.NOTES, hand_written]}))
    assert learning._notes(str(path), quick=False) == [*learning.NOTES, hand_written]
    assert learning._notes(str(path), quick=True) == list(learning.NOTES)


@pytest.mark.parametrize("module", [learning, scores, keras_hub_vit_peer])
def test_docstring_examples_run(module):
    results = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert results.attempted > 0 and results.failed == 0
