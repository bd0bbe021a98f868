"""`--init-from`: the checkpoint's image size and patch size, kept and said to be its own."""

import numpy as np
import pytest
import tensorflow as tf
from hf_checkpoints import PATCH
from hf_checkpoints import SIDE
from hf_checkpoints import write_vit_checkpoint

from keras_attention.tasks.image_classification.model_from_flags import (
    image_classifier_from_arguments,
)
from keras_attention.tasks.image_classification.recipe_from_flags import parse_vit_arguments
from keras_attention.tasks.image_classification.training_data import prepare_vit_data


@pytest.fixture()
def checkpoint_and_folder(tmp_path):
    """A 32 x 32 ViT checkpoint (patches of 8) and a folder of 24 x 32 (landscape) images."""
    write_vit_checkpoint(tmp_path / "vit")
    rng = np.random.default_rng(0)
    for name in ("a", "b", "c"):
        (tmp_path / "images" / name).mkdir(parents=True)
        for index in range(8):
            pixels = rng.integers(0, 255, (24, 32, 3)).astype(np.uint8)
            png = tf.io.encode_png(tf.constant(pixels)).numpy()
            (tmp_path / "images" / name / f"{index}.png").write_bytes(png)
    return tmp_path / "vit", tmp_path / "images"


def _data(tmp_path, checkpoint, folder, *flags):
    argv = ["--init-from", str(checkpoint), "--dataset", f"folder:{folder}", "--epochs", "2"]
    args = parse_vit_arguments(argv + ["--output-dir", str(tmp_path / "run"), *flags])
    return args, prepare_vit_data(args)


def test_the_checkpoint_s_image_size_is_kept_and_the_images_resized_to_it(
    tmp_path, checkpoint_and_folder, capsys
):
    checkpoint, folder = checkpoint_and_folder
    args, data = _data(tmp_path, checkpoint, folder)
    assert data.image_shape == (SIDE, SIDE) and args.patch_size == PATCH
    image, _ = next(iter(data.splits["train"]))
    assert image.shape == (SIDE, SIDE, 3)  # the 24 x 32 images resized to the checkpoint's
    lines = data.summary_lines()
    # What is printed before training says each thing once (the listing, then the summary).
    printed = capsys.readouterr().out.splitlines() + lines
    assert len(printed) == len(set(printed)), printed
    assert (
        f"image_size ({SIDE}, {SIDE}): the checkpoint's ({checkpoint}), the images resized to "
        "it; --image-size sets another"
    ) in lines
    assert f"patch_size {PATCH}: the checkpoint's ({checkpoint})" in lines
    assert not any("set by the user" in line for line in lines if line.startswith("patch_size"))
    # The model's positions are the checkpoint's own grid, not resized.
    model = image_classifier_from_arguments(args, 3, ["a", "b", "c"], data.image_shape)
    assert model.position_embedding.grid_size == (SIDE // PATCH, SIDE // PATCH)


def test_image_size_given_keeps_the_images_aspect_ratio(tmp_path, checkpoint_and_folder):
    checkpoint, folder = checkpoint_and_folder
    args, data = _data(tmp_path, checkpoint, folder, "--image-size", "64")
    assert data.image_shape == (48, 64)  # a 6 x 8 grid of the checkpoint's 8-pixel patches
    lines = data.summary_lines()
    assert "image_size (48, 64): keeps the 24 x 32 images' aspect ratio, longer side 64" in lines
    assert f"patch_size {PATCH}: the checkpoint's ({checkpoint})" in lines
