"""keras-hub models built to match ours, for side-by-side timings (any Keras backend)."""

import keras


def keras_hub_vit_classifier(image_size, architecture, num_classes):
    """keras-hub's `ViTBackbone` with our ViT's rescaling and a class-token head.

    `architecture` holds `patch_size`, `num_layers`, `num_heads`, `hidden_dim`
    and `mlp_dim`, as `ka.models.VIT_PRESETS` entries do. The head computes in
    float32, as ours does under a mixed policy.
    """
    import keras_hub

    inputs = keras.Input((image_size, image_size, 3))
    scaled = keras.layers.Rescaling(1 / 127.5, offset=-1.0)(inputs)
    tokens = keras_hub.models.ViTBackbone(
        image_shape=(image_size, image_size, 3),
        patch_size=architecture["patch_size"],
        num_layers=architecture["num_layers"],
        num_heads=architecture["num_heads"],
        hidden_dim=architecture["hidden_dim"],
        mlp_dim=architecture["mlp_dim"],
    )(scaled)
    logits = keras.layers.Dense(num_classes, dtype="float32")(tokens[:, 0])
    return keras.Model(inputs, logits)
