"""The optimizer steps a run folder holds, read from its backup or checkpoint files alone."""

import json
import os
import zipfile

import keras
import numpy as np

from keras_attention.training.trained_steps import keras_file_step_count
from keras_attention.training.trained_steps import trained_steps
from keras_attention.training.trained_steps import weights_step_count


def _trained(optimizer, steps):
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile(optimizer, "mse")
    model.fit(np.ones((2 * steps, 2)), np.ones(2 * steps), batch_size=2, verbose=0)
    return model


def test_the_step_count_of_plain_and_loss_scaled_optimizers(tmp_path):
    scaled = keras.optimizers.LossScaleOptimizer(keras.optimizers.AdamW(1e-3))
    for name, optimizer in (("adam", keras.optimizers.Adam(1e-3)), ("scaled", scaled)):
        model = _trained(optimizer, 5)
        assert int(model.optimizer.iterations) == 5
        path = str(tmp_path / f"{name}.weights.h5")
        model.save_weights(path)
        assert weights_step_count(path) == 5, name


def test_a_checkpoint_is_read_in_place_stored_or_compressed(tmp_path):
    path = str(tmp_path / "epoch_003.keras")
    _trained(keras.optimizers.SGD(0.1), 7).save(path)
    assert keras_file_step_count(path) == 7
    deflated = str(tmp_path / "deflated.keras")
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(deflated, "w") as target:
        for member in source.infolist():
            target.writestr(member.filename, source.read(member), zipfile.ZIP_DEFLATED)
    assert keras_file_step_count(deflated) == 7


def test_a_run_folder_says_its_backups_count_then_its_checkpoints(tmp_path):
    run = tmp_path / "run"
    assert trained_steps(str(run)) == 0  # a new run
    (run / "checkpoints").mkdir(parents=True)
    _trained(keras.optimizers.SGD(0.1), 4).save(str(run / "checkpoints" / "epoch_002.keras"))
    assert trained_steps(str(run)) == 4
    backup = run / "backup" / "epoch_000002_step_000000003"
    backup.mkdir(parents=True)
    (backup / "training_metadata.json").write_text(json.dumps({"epoch": 2, "step": 3}))
    _trained(keras.optimizers.SGD(0.1), 9).save_weights(str(backup / "state.weights.h5"))
    assert trained_steps(str(run)) == 9  # a backup that does not record it: its weights do
    (backup / "training_metadata.json").write_text(
        json.dumps({"epoch": 2, "step": 3, "iterations": 11})
    )
    assert trained_steps(str(run)) == 11  # recorded: the metadata alone are read
    (backup / "training_metadata.json").write_text('{"epo')
    assert trained_steps(str(run)) == 4  # unreadable: skipped, as the restore skips it
    os.remove(run / "checkpoints" / "epoch_002.keras")
    assert trained_steps(str(run)) == 0
