"""Swin Transformer sizes by name: the paper's Swin-T and a tiny one for small images (data).

`SwinTransformer.from_preset("swin_tiny_224")` builds one with fresh weights.

"swin_tiny_224" is Swin-T of Liu et al. 2021 (https://arxiv.org/abs/2103.14030,
section 3.3): C = 96, layers 2-2-6-2, heads 3-6-12-24, window 7, patch 4,
224 x 224 images, 1000 classes (28.3M parameters, 4.5 GFLOPs).
"swin_glyphs_32" is small enough to learn 32 x 32 glyphs on a laptop CPU in
minutes: an 8 x 8 map of patch-4 tokens in 4 x 4 windows, then one 4 x 4
window after the merge. Its patches are not normalised (`normalize_patches`):
small images enlarged by repeating pixels (8 x 8 digits at 32 x 32) give
patches of one grey level each, and a LayerNorm of their projections keeps
only whether a patch is lighter or darker than mid-grey; trained on 8 x 8
handwritten digits of 16 grey levels, its grey levels 1/16 to 6/16 still read
as blank. Without it, 15 epochs at Swin's learning rate reached 0.502 held-out
accuracy where they reached 0.418 with it. The first block's pre-norm does the
same to the patch map unless something that differs from token to token is
added first: the small size adds the paper's absolute position embedding
(`absolute_position_embedding`), as the ViT does, and reached 0.878 in the
same 15 epochs.
"""

SWIN_PRESETS = {
    "swin_tiny_224": {
        "image_size": 224,
        "num_classes": 1000,
        "patch_size": 4,
        "embed_dim": 96,
        "depths": (2, 2, 6, 2),
        "num_heads": (3, 6, 12, 24),
        "window_size": 7,
    },
    "swin_glyphs_32": {
        "image_size": 32,
        "num_classes": 10,
        "patch_size": 4,
        "embed_dim": 64,
        "depths": (2, 2),
        "num_heads": (4, 8),
        "window_size": 4,
        "normalize_patches": False,
        "absolute_position_embedding": True,
    },
}


def swin_transformer_preset(preset):
    """The arguments of a named Swin Transformer size, as a new dict.

    Example:

    >>> from keras_attention.models.image_classification.swin_sizes import swin_transformer_preset
    >>> swin_transformer_preset("swin_tiny_224")["depths"]
    (2, 2, 6, 2)
    """
    if preset not in SWIN_PRESETS:
        raise ValueError(
            f"`preset` must be one of {sorted(SWIN_PRESETS)}. Received: preset={preset!r}"
        )
    return dict(SWIN_PRESETS[preset])
