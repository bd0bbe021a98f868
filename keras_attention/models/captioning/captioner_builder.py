"""One captioner by name, its layer sizes scaled from one width.

`build_captioner` builds a Show, Attend and Tell, a Transformer (over a CNN)
or a ViT (Transformers only) captioner from the options a training script
has: one `hidden_dim` sets the LSTM and its embedding and attention sizes,
or the Transformer's width and its feed-forward size; the options of the
other models are ignored.

Example:

>>> from keras_attention.models.captioning.captioner_builder import build_captioner
>>> model = build_captioner("transformer", 60, 9, image_size=32, hidden_dim=16,
...                         num_layers=1, num_heads=2)
>>> type(model).__name__, model.get_config()["intermediate_dim"]
('TransformerCaptioner', 32)
"""

from keras_attention.models.captioning.show_attend_tell_captioner import show_attend_tell_captioner
from keras_attention.models.captioning.transformer_captioner import transformer_captioner
from keras_attention.models.captioning.vit_captioner import vit_captioner

CAPTIONER_NAMES = ("show_attend_tell", "transformer", "vit")
# Defaults of the Transformer sizes left unset: (num_layers, num_heads, encoder_layers).
TRANSFORMER_LAYOUTS = {"transformer": (2, 1, 0), "vit": (2, 2, 2)}


def build_captioner(
    model,
    vocabulary_size,
    max_length,
    *,
    image_size,
    hidden_dim,
    backbone="small_cnn",
    backbone_weights=None,
    trainable_backbone=True,
    dropout=0.1,
    attention_penalty=None,
    num_layers=None,
    num_heads=None,
    encoder_layers=None,
    patch_size=None,
    patch_stem=None,
):
    """A captioner named `model`, its sizes derived from `hidden_dim`.

    - "show_attend_tell": `hidden_dim` LSTM units, embeddings and attention
      of `hidden_dim // 2`, the doubly stochastic penalty
      `attention_penalty` (None: 0).
    - "transformer": width `hidden_dim`, feed-forward `2 * hidden_dim`,
      `num_layers` decoder blocks (None: 2) of `num_heads` heads (None: 1)
      and `encoder_layers` blocks over the image cells (None: 0).
    - "vit": the same sizes over `patch_size` patches instead of CNN cells
      (None: derived from `image_size`), with `num_layers` (None: 2),
      `num_heads` (None: 2) and `encoder_layers` (None: 2), each patch made a
      token by `patch_stem` (None: "linear"); the backbone options are
      ignored.

    Args:
        model: "show_attend_tell", "transformer" or "vit".
        vocabulary_size: tokens of the vocabulary.
        max_length: caption tokens read and written.
        image_size: side or `(height, width)` the CNN (or the patches) sees.
        hidden_dim: the width every other size is derived from.
        backbone: "small_cnn" or a `keras.applications` name.
        backbone_weights: None or "imagenet".
        trainable_backbone: whether the CNN is trained.
        dropout: dropout rate.
        attention_penalty: Show, Attend and Tell's lambda.
        num_layers: Transformer decoder blocks.
        num_heads: Transformer attention heads.
        encoder_layers: Transformer blocks over the image cells.
        patch_size: the ViT captioner's patch side.
        patch_stem: the ViT captioner's "linear" or "convolutional" patch stem.

    Returns:
        a `ShowAttendTellCaptioner`, `TransformerCaptioner` or `ViTCaptioner`.

    Example:

    >>> from keras_attention.models.captioning.captioner_builder import build_captioner
    >>> model = build_captioner("show_attend_tell", 60, 9, image_size=(16, 32), hidden_dim=16)
    >>> model.get_layer("attention_decoder") is not None
    True
    """
    if model not in CAPTIONER_NAMES:
        raise ValueError(f"`model` must be one of {CAPTIONER_NAMES}. Received: model={model!r}")
    backbone_options = dict(
        image_size=image_size,
        backbone=backbone,
        backbone_weights=backbone_weights,
        trainable_backbone=trainable_backbone,
    )
    if model == "show_attend_tell":
        return show_attend_tell_captioner(
            vocabulary_size=vocabulary_size,
            max_caption_length=max_length,
            embedding_dim=hidden_dim // 2,
            units=hidden_dim,
            attention_units=hidden_dim // 2,
            dropout=dropout,
            doubly_stochastic_lambda=attention_penalty or 0.0,
            **backbone_options,
        )
    layers, heads, encoders = TRANSFORMER_LAYOUTS[model]
    transformer_options = dict(
        vocabulary_size=vocabulary_size,
        max_caption_length=max_length,
        hidden_dim=hidden_dim,
        num_layers=layers if num_layers is None else num_layers,
        num_heads=heads if num_heads is None else num_heads,
        intermediate_dim=2 * hidden_dim,
        encoder_layers=encoders if encoder_layers is None else encoder_layers,
        dropout=dropout,
    )
    if model == "vit":
        return vit_captioner(
            image_size=image_size,
            patch_size=patch_size,
            patch_stem=patch_stem or "linear",
            **transformer_options,
        )
    return transformer_captioner(**transformer_options, **backbone_options)
