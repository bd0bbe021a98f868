"""`SwinTransformer.from_preset(folder)` on Hugging Face Swin checkpoints made in the test.

The reference is transformers' PyTorch `SwinForImageClassification` where it
is installed (the `references` extra). Without it, a checkpoint folder written
in the Hugging Face layout from a model of ours must load back to the same
logits (the layout is then only checked against itself).
"""

import json

import numpy as np
import pytest
import tensorflow as tf
from hf_checkpoints import SWIN_CONFIG as CONFIG
from hf_checkpoints import SWIN_MEAN as MEAN
from hf_checkpoints import SWIN_STD as STD
from hf_checkpoints import write_swin_checkpoint
from hf_checkpoints import write_swin_preprocessor as _processor

from keras_attention import convert
from keras_attention.models.image_classification.swin_transformer import SwinTransformer


def _pixels():
    return np.random.default_rng(1).uniform(0, 255, (2, 32, 32, 3)).astype("float32")


def test_logits_match_transformers_swin(tmp_path):
    torch = pytest.importorskip("torch", reason="the PyTorch reference needs torch")
    transformers = pytest.importorskip("transformers", reason="the reference needs transformers")
    torch.manual_seed(0)
    labels = {0: "cat", 1: "dog", 2: "fox"}
    config = transformers.SwinConfig(
        **CONFIG, num_labels=3, id2label=labels, label2id={v: k for k, v in labels.items()}
    )
    reference = transformers.SwinForImageClassification(config).eval()
    with torch.no_grad():  # larger weights than the initial ones exercise every path
        for parameter in reference.parameters():
            parameter.add_(torch.randn_like(parameter) * 0.2)
    reference.save_pretrained(tmp_path / "swin")
    _processor(tmp_path / "swin")
    model = SwinTransformer.from_preset(str(tmp_path / "swin"))
    assert model.class_names == ["cat", "dog", "fox"]
    pixels = _pixels()
    normalised = (pixels / 255 - np.asarray(MEAN)) / np.asarray(STD)
    with torch.no_grad():
        expected = reference(
            pixel_values=torch.tensor(normalised.transpose(0, 3, 1, 2), dtype=torch.float32)
        ).logits
    np.testing.assert_allclose(np.asarray(model(pixels)), expected.numpy(), atol=1e-4)


def test_a_checkpoint_in_the_huggingface_layout_loads_back_to_the_same_logits(tmp_path):
    folder = tmp_path / "swin"
    source, config = write_swin_checkpoint(folder)
    model = SwinTransformer.from_preset(str(folder))
    np.testing.assert_allclose(
        np.asarray(model(_pixels())), np.asarray(source(_pixels())), atol=1e-5
    )
    # ... and the converter serves it: pixels in, the same probabilities out.
    served = tf.saved_model.load(convert.main([str(folder), "--export", str(tmp_path / "out")]))
    probabilities = served.signatures["serving_default"](images=tf.constant(_pixels()))
    logits = np.asarray(source(_pixels()))
    expected = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    np.testing.assert_allclose(probabilities["probabilities"].numpy(), expected, atol=1e-5)
    new_head = SwinTransformer.from_preset(str(folder), num_classes=5)
    assert not np.any(np.asarray(new_head.head.kernel))
    (folder / "config.json").write_text(json.dumps({**config, "use_absolute_embeddings": True}))
    with pytest.raises(ValueError, match=r"use_absolute_embeddings=True has no equivalent"):
        SwinTransformer.from_preset(str(folder))
