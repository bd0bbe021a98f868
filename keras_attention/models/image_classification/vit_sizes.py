"""Vision Transformer sizes from the papers, by name: "Ti/16", "B/16", ... (data, no model).

`VisionTransformer.from_preset("B/16")` builds one with fresh weights.

The name is `{size}/{patch_size}`. Sizes: "B", "L" and "H" are Table 1 of
Dosovitskiy et al. 2021 (https://arxiv.org/abs/2010.11929); "Ti" and "S" are
DeiT's (Touvron et al. 2021, https://arxiv.org/abs/2012.12877).
"""

# size: (hidden_dim, num_layers, num_heads, mlp_dim, patch sizes offered)
VIT_SIZES = {
    "Ti": (192, 12, 3, 768, (32, 16, 8)),
    "S": (384, 12, 6, 1536, (32, 16, 8)),
    "B": (768, 12, 12, 3072, (32, 16, 8)),
    "L": (1024, 24, 16, 4096, (32, 16, 8)),
    "H": (1280, 32, 16, 5120, (14,)),
}

VIT_PRESETS = {
    f"{size}/{patch_size}": {
        "patch_size": patch_size,
        "hidden_dim": hidden_dim,
        "num_layers": num_layers,
        "num_heads": num_heads,
        "mlp_dim": mlp_dim,
    }
    for size, (hidden_dim, num_layers, num_heads, mlp_dim, patch_sizes) in VIT_SIZES.items()
    for patch_size in patch_sizes
}


def vision_transformer_preset(preset):
    """The architecture arguments of a named Vision Transformer size.

    Args:
        preset: a key of `VIT_PRESETS`, such as "B/16".

    Returns:
        A new dict with `patch_size`, `hidden_dim`, `num_layers`,
        `num_heads` and `mlp_dim`.

    Example:

    >>> from keras_attention.models.image_classification.vit_sizes import vision_transformer_preset
    >>> vision_transformer_preset("B/16")["hidden_dim"]
    768
    """
    if preset not in VIT_PRESETS:
        raise ValueError(
            f"`preset` must be one of {sorted(VIT_PRESETS)}. Received: preset={preset!r}"
        )
    return dict(VIT_PRESETS[preset])
