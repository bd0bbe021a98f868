"""The quickstart runs end to end: train, score, plot, export and reload."""

import importlib.util
import logging
import pathlib

import keras
import pytest

from keras_attention.native_start_up_lines import is_start_up_line

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def _load_quickstart():
    spec = importlib.util.spec_from_file_location("_example_quickstart", EXAMPLES / "quickstart.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_quickstart_with_a_tiny_corpus(tmp_path, capfd, caplog):
    quickstart = _load_quickstart()
    caplog.set_level(logging.WARNING)
    result = quickstart.main(
        [
            "--epochs",
            "1",
            "--num-pairs",
            "200",
            "--hidden-dim",
            "8",
            "--num-layers",
            "1",
            "--output-dir",
            str(tmp_path),
        ]
    )
    captured = capfd.readouterr()  # what Python and the native libraries wrote
    printed = captured.out
    # No AutoGraph warning (printed, logged to stderr or through `logging`) about its functions.
    for text in (printed, captured.err, caplog.text):
        assert "AutoGraph" not in text and "do_not_convert" not in text
    # Nor the SentencePiece op's line as it reads each model (the trained tokenizers', then
    # the reloaded SavedModel's).
    assert not [line for line in captured.err.splitlines() if is_start_up_line(line)]
    assert f"BLEU {result['bleu']:.1f}, chrF {result['chrf']:.1f} on 10 sentences" in printed
    assert pathlib.Path(result["alignment_plot"]) == tmp_path / "alignment.png"
    assert (tmp_path / "alignment.png").stat().st_size > 0
    assert (pathlib.Path(result["export_dir"]) / "saved_model.pb").exists()
    # The reloaded SavedModel translated each new sentence into a string.
    translations = result["new_translations"]
    assert len(translations) == len(quickstart.NEW_SENTENCES)
    assert all(isinstance(text, str) for text in translations)
    for sentence, translation in zip(quickstart.NEW_SENTENCES, translations):
        assert f"  {sentence} -> {translation}" in printed
    # The .keras file holds the model and its tokenizers: it loads and translates as served.
    keras_path = pathlib.Path(result["keras_model"])
    assert keras_path == tmp_path / "translator.keras"
    assert f"Keras model: {keras_path}" in printed
    reloaded = keras.models.load_model(keras_path)
    assert reloaded.generate(list(quickstart.NEW_SENTENCES)) == translations
    # It ends with what to try next, naming the files it wrote.
    ending = printed.rstrip("\n").split("\n")[-3:]
    assert ending[0].startswith("next: python -c") and str(keras_path) in ending[0]
    assert ".generate(" in ending[0]
    assert str(result["export_dir"]) in ending[1] and "tensorflow_text" in ending[1]
    assert "train_nmt.py --dataset tsv:" in ending[2] and "docs/data_layouts.md" in ending[2]
    assert f"alignment plot: {tmp_path / 'alignment.png'}" in printed


def test_quickstart_refuses_a_translator_folder_of_other_files_before_training(tmp_path):
    quickstart = _load_quickstart()
    folder = tmp_path / "translator"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    try:
        quickstart.main(["--output-dir", str(tmp_path), "--num-pairs", "200"])
    except SystemExit as error:
        message = str(error)
    else:
        raise AssertionError("the quickstart exported over a folder of other files")
    assert "'translator'" in message and str(tmp_path) in message
    assert (folder / "notes.txt").read_text() == "mine"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["translator"]


@pytest.mark.parametrize(
    "entries", [("translator.keras", "alignment.png"), ("run_arguments.json",)]
)
def test_quickstart_refuses_a_folder_of_other_files_and_touches_none(tmp_path, entries):
    quickstart = _load_quickstart()
    for name in entries:  # names it would write over, or a training run's folder
        (tmp_path / name).write_text("mine")
    with pytest.raises(SystemExit, match=r"^error: `--output-dir` must be a new or empty folder"):
        quickstart.main(["--output-dir", str(tmp_path), "--num-pairs", "200"])
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(entries)
    assert all((tmp_path / name).read_text() == "mine" for name in entries)


@pytest.mark.parametrize(
    "flag, value, message",
    [
        ("--epochs", "0", "must be an integer >= 1; received 0"),
        ("--num-pairs", "5", "must be an integer >= 100; received 5"),
        ("--hidden-dim", "30", "must be a multiple of 4 of at least 4; received 30"),
        ("--num-layers", "0", "must be an integer >= 1; received 0"),
    ],
)
def test_quickstart_refuses_sizes_it_cannot_train_while_parsing(capsys, flag, value, message):
    quickstart = _load_quickstart()
    with pytest.raises(SystemExit):
        quickstart.parse_args([flag, value])
    assert f"argument {flag}: {message}" in capsys.readouterr().err
