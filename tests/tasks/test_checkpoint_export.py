"""`python -m keras_attention.convert CHECKPOINT --export OUT` on Hugging Face ViT folders."""

import json

import numpy as np
import pytest
import tensorflow as tf
from hf_checkpoints import LABELS
from hf_checkpoints import numpy_vit_logits
from hf_checkpoints import softmax
from hf_checkpoints import write_vit_checkpoint

from keras_attention import convert
from keras_attention.training.run_folder import EXPORT_MARKER


def test_a_vit_checkpoint_becomes_an_image_classifier_savedmodel(tmp_path, capsys):
    mean, std = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)  # ImageNet's, not the default
    weights = write_vit_checkpoint(tmp_path / "vit", mean, std)
    path = convert.main([str(tmp_path / "vit"), "--export", str(tmp_path / "served")])
    printed = capsys.readouterr().out
    assert "an image classifier (VisionTransformer)" in printed and "3 named classes" in printed
    assert (tmp_path / "served" / EXPORT_MARKER).is_file()
    signatures = tf.saved_model.load(path).signatures
    # Images of another size are resized to the checkpoint's 32x32 inside the SavedModel.
    pixels = np.random.default_rng(2).integers(0, 256, (2, 32, 32, 3)).astype("uint8")
    outputs = signatures["serving_uint8"](images=tf.constant(pixels))
    normalised = (pixels / 255 - np.asarray(mean)) / np.asarray(std)
    expected = softmax(numpy_vit_logits(weights, normalised))
    np.testing.assert_allclose(outputs["probabilities"].numpy(), expected, atol=1e-4)
    assert [label.decode() for label in outputs["labels"].numpy()] == [
        LABELS[index] for index in expected.argmax(-1)
    ]
    png = tf.io.encode_png(tf.constant(pixels[0])).numpy()
    from_bytes = signatures["serving_bytes"](image_bytes=tf.constant([png]))
    np.testing.assert_allclose(from_bytes["probabilities"].numpy(), expected[:1], atol=1e-4)


def test_what_is_not_converted_is_refused_with_its_reason(tmp_path):
    (tmp_path / "bert").mkdir()
    (tmp_path / "bert" / "config.json").write_text(json.dumps({"model_type": "bert"}))
    with pytest.raises(
        SystemExit, match=r"model_type converted here \(marian, swin, vit\).*'bert'"
    ):
        convert.main([str(tmp_path / "bert"), "--export", str(tmp_path / "served")])
    write_vit_checkpoint(tmp_path / "vit")
    with pytest.raises(SystemExit, match=r"`beam_width` sets a translator's search"):
        convert.main(
            [str(tmp_path / "vit"), "--export", str(tmp_path / "out"), "--beam-width", "2"]
        )
    with pytest.raises(SystemExit, match=r"`--export` must be absent, an empty folder"):
        convert.main([str(tmp_path / "vit"), "--export", str(tmp_path / "vit")])
    # A training run's folder is named as one, with the command that exports it.
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "run_arguments.json").write_text("{}")
    with pytest.raises(
        SystemExit,
        match=r"has no config.json \(a training run's folder: "
        r"`python -m keras_attention.export` exports it\)",
    ):
        convert.main([str(tmp_path / "run"), "--export", str(tmp_path / "served")])
    assert sorted(p.name for p in (tmp_path / "vit").iterdir()) == [
        "config.json",
        "model.safetensors",
        "preprocessor_config.json",
    ]


def test_an_export_of_another_checkpoint_is_not_replaced(tmp_path):
    write_vit_checkpoint(tmp_path / "first")
    write_vit_checkpoint(tmp_path / "second")
    served = tmp_path / "served"
    convert.main([str(tmp_path / "first"), "--export", str(served)])
    with pytest.raises(SystemExit) as stop:
        convert.main([str(tmp_path / "second"), "--export", str(served)])
    assert str(stop.value) == (
        f"error: `--export` holds the export of {tmp_path / 'first'}, which an export of "
        f"{tmp_path / 'second'} does not replace. Received: --export={str(served)!r}. Choose "
        "another --export, or remove that folder first."
    )
    assert json.loads((served / EXPORT_MARKER).read_text())["source"] == str(tmp_path / "first")


@pytest.mark.parametrize(
    "given, what",
    [("missing/vit", "not a folder"), ("vit_tiny", "neither a folder nor a preset name keras-hub")],
)
def test_a_checkpoint_that_is_not_there_is_named_as_the_commands_argument(tmp_path, given, what):
    with pytest.raises(SystemExit) as stop:
        convert.main([given, "--export", str(tmp_path / "served")])
    assert str(stop.value).startswith(
        f"error: `checkpoint` must be a checkpoint folder (or a preset name). "
        f"Received: checkpoint={given!r}, which is {what}"
    )
