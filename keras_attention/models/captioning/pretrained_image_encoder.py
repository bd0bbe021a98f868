"""A pretrained image classifier as a captioner's image encoder: its patch tokens, attended to.

A captioner trained on a few hundred images learns little about what is in
them; an encoder pretrained to classify images already tells objects apart.
Any of the library's pixel classifiers (`VisionTransformer`,
`SwinTransformer`, read from a Hugging Face or keras-hub checkpoint by their
`from_preset`) hands its last tokens to the caption decoder through
`image_tokens`: raw pixels in, resized and normalised as the checkpoint
wants, one normalised token a patch out, the class token left out. A linear
layer brings them to the decoder's width where it differs, and new
Transformer encoder blocks may run on top.

The captioner keeps the encoder's config (`keras.saving.serialize_keras_object`),
so a `.keras` file rebuilds it, and then loads its weights, without this
module importing the classifier's family.
"""

import keras

from keras_attention.layers.transformer.transformer_encoder_block import TransformerEncoderBlock

PROJECTION = "encoder_projection"


def image_encoder_and_config(pretrained_encoder):
    """`(encoder model, its serialized config)` from a model or from such a config.

    Args:
        pretrained_encoder: a pixel classifier of the library (with
            `image_tokens` and `token_grid`), or the config
            `keras.saving.serialize_keras_object` wrote of one (what a
            `.keras` file gives back: a fresh model, whose weights the file
            then loads).

    Raises:
        ValueError: naming `pretrained_encoder`, for anything else.
    """
    if isinstance(pretrained_encoder, dict):
        encoder = keras.saving.deserialize_keras_object(pretrained_encoder)
    else:
        encoder = pretrained_encoder
    if not (hasattr(encoder, "image_tokens") and hasattr(encoder, "token_grid")):
        raise ValueError(
            "`pretrained_encoder` must be an image classifier of keras_attention "
            "(VisionTransformer or SwinTransformer, e.g. from `from_preset`) or its serialized "
            f"config. Received: pretrained_encoder of type {type(pretrained_encoder).__name__}"
        )
    return encoder, keras.saving.serialize_keras_object(encoder)


def pretrained_token_encoder(encoder, hidden_dim, encoder_layers, blocks, trainable, name):
    """Pixels -> `(B, h * w, hidden_dim)` tokens through `encoder`; and its grid `(h, w)`.

    Args:
        encoder: the pretrained classifier (`image_encoder_and_config`).
        hidden_dim: the decoder's width; a `Dense` projects the encoder's
            tokens to it where they are wider or narrower.
        encoder_layers: new pre-norm Transformer encoder blocks on top (and
            a LayerNorm after them), trained from scratch.
        blocks: those blocks' `num_heads`, `intermediate_dim`, `dropout`,
            `num_key_value_heads`.
        trainable: whether the pretrained layers are fine-tuned; False keeps
            them as the checkpoint has them.
        name: the name of the model returned.

    Returns:
        `(keras.Model, (h, w))`.
    """
    encoder.trainable = trainable
    images = keras.Input((None, None, 3), dtype="float32", name="image")
    x = encoder.image_tokens(images)  # (B, h * w, D of the encoder)
    if x.shape[-1] != hidden_dim:
        x = keras.layers.Dense(hidden_dim, name=PROJECTION)(x)  # (B, h * w, hidden_dim)
    for index in range(encoder_layers):
        block = TransformerEncoderBlock(
            **blocks, norm_first=True, name=f"top_encoder_block_{index}"
        )
        x = block(x)
    if encoder_layers:
        x = keras.layers.LayerNormalization(epsilon=1e-6, name="top_encoder_norm")(x)
    return keras.Model(images, x, name=name), tuple(encoder.token_grid)
