"""A quiet, fast command line: instant --help, numbers checked by argparse, formats listed.

Each test is named for the case it covers.
"""

import io
import re
import subprocess
import sys
import warnings

import keras
import numpy as np
import pytest
import tensorflow as tf
from example_scripts import EXAMPLES
from example_scripts import load_example

from keras_attention.training import run_setup

SCRIPTS = ("train_vit", "train_nmt", "train_captioning")

# Runs a script's `--help` as `python script.py --help` would, then reports
# whether TensorFlow was imported and how long it took.
_HELP_PROBE = """
import runpy, sys, time
sys.argv = [{script!r}, "--help"]
start = time.perf_counter()
try:
    runpy.run_path({script!r}, run_name="__main__")
except SystemExit:
    pass
print("SECONDS", time.perf_counter() - start, "TENSORFLOW", "tensorflow" in sys.modules)
"""


def _load(name):
    return load_example(name, "_cli")


@pytest.fixture(scope="module")
def scripts():
    return {name: _load(name) for name in SCRIPTS}


@pytest.mark.parametrize("name", (*SCRIPTS, "quickstart"))
def test_help_answers_without_importing_tensorflow(name):
    script = str(EXAMPLES / f"{name}.py")
    result = subprocess.run(
        [sys.executable, "-c", _HELP_PROBE.format(script=script)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "usage:" in result.stdout, result.stderr
    _, seconds, _, imported = result.stdout.split()[-4:]
    assert imported == "False"
    assert float(seconds) < 1.0


@pytest.mark.parametrize(
    "name, argv, message",
    [
        (
            "train_vit",
            ["--patch-size", "0"],
            "--patch-size: must be a positive integer; received 0",
        ),
        ("train_vit", ["--image-size", "-32"], "--image-size: must be a positive integer"),
        (
            "train_vit",
            ["--builtin-sizes", "10", "-1", "5"],
            "--builtin-sizes: must be an integer >= 0",
        ),
        ("train_vit", ["--dropout", "1.5"], "--dropout: must be a rate in \\[0, 1\\)"),
        ("train_nmt", ["--epochs", "0"], "--epochs: must be a positive integer"),
        ("train_nmt", ["--learning-rate=-1e-3"], "--learning-rate: must be a positive number"),
        ("train_captioning", ["--batch-size", "-8"], "--batch-size: must be a positive integer"),
        ("train_captioning", ["--builtin-sizes", "-4", "1", "1"], "must be an integer >= 0"),
        ("train_nmt", ["--steps-per-epoch", "0"], "--steps-per-epoch: must be a positive integer"),
        ("train_vit", ["--backup-every", "5x"], "--backup-every: must be a number of steps.*'5x'"),
        ("train_captioning", ["--backup-every=-2h"], "positive duration; received .-2h."),
    ],
)
def test_bad_numbers_are_rejected_by_argparse(scripts, capsys, name, argv, message):
    with pytest.raises(SystemExit) as exit_info:
        scripts[name].build_parser().parse_args(argv)
    assert exit_info.value.code == 2
    assert re.search(message, capsys.readouterr().err)


@pytest.mark.parametrize(
    "name, formats",
    [
        ("train_vit", ["folder:PATH", "sub-folder of images per class", "cifar10", "--strict"]),
        ("train_nmt", ["tsv:PATH", "source<TAB>target", "third column", "ted_hrlr_translate"]),
        ("train_captioning", ["folder:PATH", "captions.tsv", "file<TAB>caption", "coco_captions"]),
    ],
)
def test_help_lists_each_dataset_format(scripts, name, formats):
    text = " ".join(scripts[name].build_parser().format_help().split())
    for words in formats:
        assert words in text


def test_vit_parser_choices_equal_the_package_names():
    from keras_attention.data.image_augmentation import IMAGE_AUGMENTATIONS
    from keras_attention.models.image_classification.vit_sizes import VIT_PRESETS
    from keras_attention.tasks.image_classification import flags as vit_arguments

    assert vit_arguments.PAPER_PRESET_NAMES == tuple(sorted(VIT_PRESETS))
    assert vit_arguments.AUGMENTATION_NAMES == IMAGE_AUGMENTATIONS


def test_no_progress_bar_control_codes_when_stdout_is_not_a_terminal(scripts, monkeypatch):
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    verbose = run_setup.progress_verbosity()
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    model.fit(np.ones((8, 2)), np.ones(8), epochs=2, batch_size=4, verbose=verbose)
    printed = sys.stdout.getvalue()
    assert verbose == 2 and "Epoch 2/2" in printed
    assert "\x1b" not in printed and "\r" not in printed and "\b" not in printed


def test_fit_on_datasets_as_the_examples_call_it_warns_nothing():
    from keras_attention.training.resumable_fit import fit_resuming

    pairs = tf.data.Dataset.from_tensor_slices((np.ones((12, 2), "float32"), np.ones(12)))
    train = pairs.shuffle(12, seed=0).filter(lambda x, y: y > 0).batch(4)  # unknown length
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit_resuming(model, train, 2, 5, validation_data=train, verbose=0)
    assert [str(w.message) for w in caught] == []
    assert int(model.optimizer.iterations) == 10  # 5 steps an epoch over 3 batches a pass


def test_bad_backup_and_epoch_flags_stop_before_tensorflow_is_imported():
    script = str(EXAMPLES / "train_nmt.py")
    for flag, value, message in (
        ("--backup-every", "10 minutes", "must be a number of steps (e.g. 500), of minutes"),
        ("--backup-every", "0min", "must be a positive duration; received '0min'"),
        ("--steps-per-epoch", "1.5", "must be a positive integer; received '1.5'"),
    ):
        probe = _HELP_PROBE.format(script=script).replace('"--help"', f"{flag!r}, {value!r}")
        result = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120
        )
        assert f"argument {flag}: {message}" in result.stderr, result.stderr
        assert result.stdout.split()[-1] == "False"  # TensorFlow was not imported


def test_help_says_how_often_the_training_state_is_backed_up(scripts):
    for name in SCRIPTS:
        text = " ".join(scripts[name].build_parser().format_help().split())
        assert "--steps-per-epoch N" in text and "default: one pass over the training data" in text
        assert "--backup-every N|Mmin" in text and "(default: 30min)" in text
