"""How a training script stops on Ctrl-C, a missing TPU or a flag out of range: one line."""

import argparse

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_attention.tasks.captioning.flags import build_captioning_parser
from keras_attention.tasks.image_classification.flags import build_vit_parser
from keras_attention.tasks.image_classification.flags import check_vit_data
from keras_attention.tasks.training_run import TrainingRun
from keras_attention.tasks.training_run import script_stops_as_lines
from keras_attention.tasks.translation.flags import build_translation_parser
from keras_attention.training import cluster_strategies


def test_ctrl_c_outside_training_is_one_line_and_status_130(capsys):
    with pytest.raises(SystemExit) as stop:
        with script_stops_as_lines():
            raise KeyboardInterrupt
    assert stop.value.code == 130
    assert capsys.readouterr().err == (
        "\ninterrupted: the same command goes on where the run stopped\n"
    )


def test_ctrl_c_during_fit_says_the_same_command_resumes_the_run(tmp_path, capsys):
    args = argparse.Namespace(
        output_dir=str(tmp_path), export=None, overwrite=False, seed=0,
        mixed_precision=False, strategy="default",
    )  # fmt: skip
    run = TrainingRun(args)
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    data = tf.data.Dataset.from_tensor_slices((np.ones((8, 2)), np.ones(8))).batch(2)

    class CtrlC(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            if batch == 1:
                raise KeyboardInterrupt

    with pytest.raises(SystemExit) as stop:
        with script_stops_as_lines():
            run.fit(model, data, None, 2, 1.0, "", 4, callbacks=[CtrlC()], verbose=0)
    assert stop.value.code == 130
    err = capsys.readouterr().err
    assert f"interrupted: the same command resumes the run in {tmp_path} from its last" in err
    assert "Traceback" not in err


def test_no_tpu_is_one_error_line(monkeypatch):
    def no_tpu():
        raise ValueError("Please provide a TPU Name to connect to.")

    monkeypatch.setattr(tf.distribute.cluster_resolver, "TPUClusterResolver", no_tpu)
    with pytest.raises(SystemExit, match=r"^error: --strategy tpu found no TPU \(Please provide"):
        cluster_strategies.make_tpu_strategy()


@pytest.mark.parametrize(
    "build", [build_translation_parser, build_captioning_parser, build_vit_parser]
)
@pytest.mark.parametrize("seed", ["-1", str(2**32)])
def test_a_seed_numpy_cannot_take_is_refused_while_parsing(build, seed, capsys):
    with pytest.raises(SystemExit):
        build().parse_args(["--seed", seed])
    assert f"argument --seed: must be an integer from 0 to 4294967295; received {seed}" in (
        capsys.readouterr().err
    )
    assert build().parse_args(["--seed", str(2**32 - 1)]).seed == 2**32 - 1


@pytest.mark.parametrize("sizes", [("0", "0", "0"), ("8", "2", "0"), ("0", "2", "2")])
def test_vit_builtin_sizes_without_train_or_test_images_are_refused(sizes, capsys):
    parser = build_vit_parser()
    with pytest.raises(SystemExit):
        check_vit_data(parser, parser.parse_args(["--builtin-sizes", *sizes]))
    assert "--builtin-sizes needs at least one training and one test image" in (
        capsys.readouterr().err
    )
    check_vit_data(parser, parser.parse_args(["--builtin-sizes", "8", "0", "2"]))
