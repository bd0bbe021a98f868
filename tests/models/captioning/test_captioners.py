"""Every captioner: a finite mixed-precision forward pass, a loss that XLA fitting lowers."""

import keras
import numpy as np
import pytest
from model_checks import assert_mixed_precision_forward_is_finite
from model_checks import fit_with_xla
from tiny_models import tiny_show_attend_tell_captioner
from tiny_models import tiny_transformer_captioner

from keras_attention.models.captioning.vit_captioner import vit_captioner

IMAGES = np.random.default_rng(0).uniform(0, 255, (2, 16, 16, 3)).astype("float32")
CAPTIONS = np.array([[2, 5, 6, 7, 0], [2, 8, 0, 0, 0]])
# The show-attend-tell captioner adds its doubly stochastic penalty as a loss.
LOSSES = [
    pytest.param(tiny_show_attend_tell_captioner, 1, id="show_attend_tell"),
    pytest.param(tiny_transformer_captioner, 0, id="transformer"),
    pytest.param(lambda: _tiny_vit(image_size=16), 0, id="vit"),
]
NARROW_TRANSFORMER = dict(hidden_dim=8, intermediate_dim=8, encoder_layers=0)
NARROW = [
    pytest.param(
        lambda: tiny_show_attend_tell_captioner(units=8, embedding_dim=4, attention_units=4),
        16,
        id="show_attend_tell",
    ),
    pytest.param(
        lambda: tiny_transformer_captioner(image_size=8, **NARROW_TRANSFORMER), 8, id="transformer"
    ),
    pytest.param(lambda: _tiny_vit(image_size=8, **NARROW_TRANSFORMER), 8, id="vit"),
]


def _tiny_vit(**overrides):
    """A ViT captioner of 4-pixel patches, one 16-wide encoder and decoder block."""
    sizes = dict(vocabulary_size=10, max_caption_length=6, patch_size=4, dropout=0.0)
    sizes.update(hidden_dim=16, num_layers=1, num_heads=2, intermediate_dim=16, encoder_layers=1)
    return vit_captioner(**{**sizes, **overrides})


@pytest.mark.parametrize("policy", ["mixed_float16", "mixed_bfloat16"])
@pytest.mark.parametrize("build, losses", LOSSES)
def test_mixed_precision_forward_is_finite(build, losses, policy):
    keras.config.set_dtype_policy(policy)
    model = build()
    assert_mixed_precision_forward_is_finite(model, {"image": IMAGES, "caption": CAPTIONS})
    assert len(model.losses) == losses
    assert all(np.isfinite(float(loss)) for loss in model.losses)


@pytest.mark.parametrize("build, image_size", NARROW)
def test_jit_compiled_fit_lowers_the_loss(build, image_size):
    model = build()
    images = np.random.default_rng(0).uniform(0, 255, (8, image_size, image_size, 3))
    captions = np.tile([[2, 4, 5, 6, 3]], (8, 1))
    x = {"image": images.astype("float32"), "caption": captions[:, :-1]}
    losses = fit_with_xla(model, x, captions[:, 1:], 0.02, epochs=6, batch_size=8)["loss"]
    assert np.all(np.isfinite(losses)) and losses[-1] < losses[0]
