"""`train_captioning.py --init-from CHECKPOINT`: a captioner on a pretrained image encoder.

The checkpoint is named by an `hf://` handle, read from an offline Hugging
Face cache laid out as huggingface_hub lays it out (tests/hub_caches.py).
"""

import json

import numpy as np
import pytest
from example_scripts import load_example
from hf_checkpoints import numpy_vit_tokens
from hf_checkpoints import random_pixels
from hf_checkpoints import write_vit_checkpoint
from hub_caches import put_in_hf_cache
from huggingface_hub import constants

from keras_attention.tasks.captioning.flags import build_captioning_parser
from keras_attention.tasks.captioning.flags import with_captioner_defaults


@pytest.fixture(scope="module")
def train_captioning():
    return load_example("train_captioning", "_example")


@pytest.fixture
def cached_vit(tmp_path, monkeypatch):
    weights = write_vit_checkpoint(tmp_path / "vit")
    put_in_hf_cache(tmp_path / "vit", tmp_path / "hf_home", "acme/vit-tiny")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf_home" / "hub"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    return weights


def test_a_run_captions_with_the_checkpoints_frozen_encoder(
    train_captioning, cached_vit, tmp_path, capsys
):
    argv = ["--init-from", "hf://acme/vit-tiny", "--epochs", "1", "--builtin-sizes", "16", "8", "8"]
    argv += ["--output-dir", str(tmp_path / "run"), "--no-html", "--samples", "1"]
    metrics = train_captioning.main(argv)
    printed = capsys.readouterr().out
    assert "starting the image encoder from " in printed
    assert "image size 32x32: the checkpoint's" in printed
    assert metrics["model"] == "vit" and metrics["image_size"] == [32, 32]
    # The run records what it used: the checkpoint's patch encoder, no patch flags.
    recorded = json.loads((tmp_path / "run" / "run_arguments.json").read_text())
    assert recorded["patch_size"] is None and recorded["patch_stem"] is None

    import keras

    model = keras.saving.load_model(str(tmp_path / "run" / "checkpoints" / "epoch_001.keras"))
    pixels = random_pixels()
    expected = numpy_vit_tokens(cached_vit, (pixels / 255 - 0.5) / 0.5)[:, 1:]
    # The encoder was frozen: after training it still gives the checkpoint's tokens, which a
    # new projection takes to the decoder's width (64).
    encoder = model.image_encoder
    tokens = keras.Model(encoder.input, encoder.get_layer("encoder_projection").input)
    np.testing.assert_allclose(np.asarray(tokens(pixels)), expected, atol=1e-4)


def test_flags_that_contradict_a_pretrained_encoder_are_refused(cached_vit):
    parser = build_captioning_parser()
    for extra, message in (
        (["--model", "transformer"], "use --model vit or leave --model out"),
        (["--patch-size", "4"], "--patch-size 4: --init-from keeps the checkpoint's"),
    ):
        args = parser.parse_args(["--init-from", "hf://acme/vit-tiny", *extra])
        with pytest.raises(SystemExit, match=message):
            with_captioner_defaults(args)


def test_the_vit_defaults_patch_flags_stay_unset_with_a_checkpoint(cached_vit):
    parser = build_captioning_parser()
    args = with_captioner_defaults(parser.parse_args(["--init-from", "hf://acme/vit-tiny"]))
    assert (args.model, args.patch_size, args.patch_stem, args.encoder_layers) == (
        "vit",
        None,
        None,
        0,
    )
    assert args.hidden_dim == 64 and args.num_heads == 2  # the other vit defaults still apply
    plain = with_captioner_defaults(parser.parse_args(["--model", "vit"]))
    assert (plain.patch_size, plain.patch_stem) == (4, "convolutional")


def test_an_uncached_handle_stops_before_the_run_starts(train_captioning, cached_vit, capsys):
    with pytest.raises(SystemExit):
        train_captioning.parse_arguments(["--init-from", "hf://acme/absent"])
    assert "`hf download acme/absent`" in capsys.readouterr().err
