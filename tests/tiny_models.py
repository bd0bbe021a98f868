"""Tiny models for tests: small sizes, each argument overridable.

    model = tiny_transformer_translator(num_layers=2, dropout=0.0)

The sizes keep a forward pass in the milliseconds; a test that needs other
sizes passes them as keyword arguments, which win over the defaults.
"""

from keras_attention.models.captioning.show_attend_tell_captioner import show_attend_tell_captioner
from keras_attention.models.captioning.transformer_captioner import transformer_captioner
from keras_attention.models.captioning.vit_captioner import vit_captioner
from keras_attention.models.image_classification.swin_transformer import SwinTransformer
from keras_attention.models.image_classification.vision_transformer import vision_transformer
from keras_attention.models.translation.rnn_attention_translator import rnn_attention_translator
from keras_attention.models.translation.transformer_translator import transformer_translator

# What every tiny captioner shares: 10 token ids, 16-pixel images (a 4x4 grid).
CAPTIONER_SIZES = dict(vocabulary_size=10, max_caption_length=6, image_size=16, dropout=0.0)
SHOW_ATTEND_TELL_SIZES = dict(embedding_dim=8, units=16, attention_units=8)
TRANSFORMER_SIZES = dict(hidden_dim=16, num_layers=1, num_heads=2, intermediate_dim=16)
TRANSLATOR_VOCABULARIES = dict(source_vocabulary_size=12, target_vocabulary_size=12)
TRANSLATOR_LENGTHS = dict(max_source_length=8, max_target_length=8)
RNN_SIZES = dict(embedding_dim=8, units=16)
# A 2x2 grid of 4-pixel patches, three classes.
VISION_TRANSFORMER_SIZES = dict(
    image_size=8, patch_size=4, num_classes=3, hidden_dim=8, num_layers=1, num_heads=2, mlp_dim=8
)
# A 10 x 6 grid of 4-pixel patches in 4-patch windows, two stages, three named classes.
SWIN_SIZES = dict(
    image_size=(40, 24),
    patch_size=4,
    num_classes=3,
    embed_dim=8,
    depths=(2, 2),
    num_heads=(2, 4),
    window_size=4,
    class_names=["a", "b", "c"],
)


def tiny_show_attend_tell_captioner(**overrides):
    """A `show_attend_tell_captioner` with 8-wide embeddings and a 16-unit LSTM."""
    return show_attend_tell_captioner(**{**CAPTIONER_SIZES, **SHOW_ATTEND_TELL_SIZES, **overrides})


def tiny_transformer_captioner(**overrides):
    """A `transformer_captioner` with one 16-wide, two-head decoder block."""
    return transformer_captioner(**{**CAPTIONER_SIZES, **TRANSFORMER_SIZES, **overrides})


def tiny_transformer_translator(**overrides):
    """A `transformer_translator` over 12 ids, 8 positions, one 16-wide block a side."""
    sizes = {**TRANSLATOR_VOCABULARIES, **TRANSLATOR_LENGTHS, **TRANSFORMER_SIZES}
    return transformer_translator(**{**sizes, **overrides})


def tiny_rnn_attention_translator(**overrides):
    """An `rnn_attention_translator` over 12 ids with 8-wide embeddings and 16 units."""
    return rnn_attention_translator(**{**TRANSLATOR_VOCABULARIES, **RNN_SIZES, **overrides})


def tiny_vision_transformer(**overrides):
    """A `vision_transformer` over 8-pixel images: one 8-wide block, three classes."""
    return vision_transformer(**{**VISION_TRANSFORMER_SIZES, **overrides})


def tiny_vit_captioner(**overrides):
    """A `vit_captioner` over 16-pixel images in 4-pixel patches, one 16-wide block a side."""
    sizes = {**CAPTIONER_SIZES, **TRANSFORMER_SIZES, "patch_size": 4, "encoder_layers": 1}
    return vit_captioner(**{**sizes, **overrides})


def tiny_swin_transformer(**overrides):
    """A `SwinTransformer` of `SWIN_SIZES`: 40 x 24 images, two 8- and 16-wide stages."""
    return SwinTransformer(**{**SWIN_SIZES, **overrides})
