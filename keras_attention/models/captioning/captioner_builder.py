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

    Show, Attend and Tell gets `hidden_dim` LSTM units and embeddings and
    attention of `hidden_dim // 2`; the Transformer captioners get width
    `hidden_dim` and a feed-forward of `2 * hidden_dim`. The ViT captioner
    reads patches instead of CNN cells: it ignores the backbone options.

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
        attention_penalty: Show, Attend and Tell's doubly stochastic lambda (None: 0).
        num_layers: Transformer decoder blocks (None: 2).
        num_heads: Transformer attention heads (None: 1; "vit": 2).
        encoder_layers: Transformer blocks over the image cells or patches
            (None: 0; "vit": 2).
        patch_size: the ViT captioner's patch side (None: derived from `image_size`).
        patch_stem: the ViT captioner's "linear" (None) or "convolutional" patch stem.

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
    caption_options = dict(
        vocabulary_size=vocabulary_size, max_caption_length=max_length, dropout=dropout
    )
    backbone_options = dict(
        image_size=image_size,
        backbone=backbone,
        backbone_weights=backbone_weights,
        trainable_backbone=trainable_backbone,
    )
    if model == "show_attend_tell":
        sizes = _show_attend_tell_sizes(hidden_dim, attention_penalty)
        return show_attend_tell_captioner(**caption_options, **sizes, **backbone_options)
    sizes = _transformer_sizes(model, hidden_dim, num_layers, num_heads, encoder_layers)
    if model == "vit":
        return vit_captioner(
            image_size=image_size,
            patch_size=patch_size,
            patch_stem=patch_stem or "linear",
            **caption_options,
            **sizes,
        )
    return transformer_captioner(**caption_options, **sizes, **backbone_options)


def _show_attend_tell_sizes(hidden_dim, attention_penalty):
    """An LSTM of `hidden_dim` units, embeddings and attention of half that width; the lambda."""
    return dict(
        embedding_dim=hidden_dim // 2,
        units=hidden_dim,
        attention_units=hidden_dim // 2,
        doubly_stochastic_lambda=attention_penalty or 0.0,
    )


def _transformer_sizes(model, hidden_dim, num_layers, num_heads, encoder_layers):
    """The block sizes of a Transformer captioner, `TRANSFORMER_LAYOUTS` for those left None."""
    layers, heads, encoders = TRANSFORMER_LAYOUTS[model]
    return dict(
        hidden_dim=hidden_dim,
        num_layers=layers if num_layers is None else num_layers,
        num_heads=heads if num_heads is None else num_heads,
        intermediate_dim=2 * hidden_dim,
        encoder_layers=encoders if encoder_layers is None else encoder_layers,
    )
