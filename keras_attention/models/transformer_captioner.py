"""The Transformer captioner: a CNN feature grid as the encoder sequence, a Transformer decoder.

Vaswani et al., "Attention Is All You Need" (https://arxiv.org/abs/1706.03762),
with the source sentence replaced by the cells of a CNN feature map, as in the
"Transformers for image captioning" lectures (and e.g. Cornia et al. 2020).
"""

import keras

from keras_attention.layers.position_embedding_2d import PositionEmbedding2D
from keras_attention.layers.token_and_position_embedding import TokenAndPositionEmbedding
from keras_attention.layers.transformer_decoder_block import TransformerDecoderBlock
from keras_attention.layers.transformer_encoder_block import TransformerEncoderBlock
from keras_attention.models.image_backbones import SMALL_CNN
from keras_attention.models.image_backbones import image_backbone
from keras_attention.models.show_attend_tell_captioner import FEATURE_POSITIONS
from keras_attention.validation import check_non_negative_int
from keras_attention.validation import check_positive_int
from keras_attention.validation import check_rate

# Stable layer names: the decoding adapter finds the parts by them, also in a
# model re-loaded from a `.keras` file.
IMAGE_ENCODER = "image_encoder"
CAPTION_EMBEDDING = "caption_embedding"
DECODER_BLOCK_PREFIX = "decoder_block_"
LOGITS = "logits"
PADDING_ID = 0


def _image_encoder(
    backbone, image_size, backbone_weights, trainable_backbone, hidden_dim, encoder_layers,
    num_heads, intermediate_dim, dropout,
):
    """Pixels -> image tokens `(B, h * w, hidden_dim)` with 2D positions, maybe self-attended."""
    images = keras.Input((None, None, 3), dtype="float32", name="image")
    features = image_backbone(backbone, image_size, backbone_weights, trainable_backbone)(images)
    grid = (features.shape[1], features.shape[2])
    x = keras.layers.Dense(hidden_dim, name="feature_projection")(features)  # (B, h, w, D)
    x = PositionEmbedding2D(
        grid_size=grid,
        merge="add",
        embeddings_initializer=keras.initializers.RandomNormal(stddev=0.02),
        name=FEATURE_POSITIONS,
    )(x)
    tokens_shape = (grid[0] * grid[1], hidden_dim)
    x = keras.layers.Reshape(tokens_shape, name="grid_to_tokens")(x)  # (B, h * w, D)
    x = keras.layers.Dropout(dropout, name="image_token_dropout")(x)
    for index in range(encoder_layers):
        x = TransformerEncoderBlock(
            num_heads=num_heads,
            intermediate_dim=intermediate_dim,
            dropout=dropout,
            name=f"encoder_block_{index}",
        )(x)
    return keras.Model(images, x, name=IMAGE_ENCODER)


def transformer_captioner(
    *,
    vocabulary_size,
    max_caption_length,
    image_size,
    backbone=SMALL_CNN,
    backbone_weights=None,
    trainable_backbone=True,
    hidden_dim=128,
    num_layers=2,
    num_heads=4,
    intermediate_dim=256,
    encoder_layers=1,
    dropout=0.1,
    name="transformer_captioner",
):
    """Builds a Transformer decoder that cross-attends to the cells of a CNN feature map.

        image (B, H, W, 3) -> "image_encoder": backbone (resize, preprocess,
            CNN) (B, h, w, C) -> Dense(hidden_dim) -> + learned 2D positions
            -> flatten to h * w tokens -> encoder_layers Transformer encoder
            blocks (self-attention among the image cells)
        caption (B, T) -> "caption_embedding" (token + learned position)
            -> num_layers "decoder_block_i" (causal self-attention over the
               caption, cross-attention on the image tokens, MLP)
            -> "logits" Dense(vocabulary_size) (B, T, V), float32

    Caption id 0 is padding: padded positions are hidden from the
    self-attention (they come after the real tokens, so causal attention
    keeps them from changing the real positions anyway).
    `keras_attention.generation.captioner_decoders.TransformerCaptionerDecoder`
    decodes it one token at a time with key/value caches; its attention maps
    are the last block's cross-attention weights averaged over the heads,
    `(B, T, h, w)`.

    Args:
        vocabulary_size: number of token ids; 0 is padding.
        max_caption_length: longest caption in tokens (start token included),
            the rows of the caption position table and the longest decoding.
        image_size: side of the square image the CNN sees, or its
            `(height, width)`: give wide or tall images their own aspect
            ratio, so that the feature grid (and the attention maps) is
            `(height / 4, width / 4)` with the small CNN rather than a
            squashed square; images of any size are resized to it inside
            the model.
        backbone: `"small_cnn"` (trained from scratch) or a
            `keras.applications` model name, see `image_backbone`.
        backbone_weights: `None` or `"imagenet"` (a download) for a
            `keras.applications` backbone.
        trainable_backbone: fine-tune the backbone (True) or freeze it.
        hidden_dim: width of the image tokens, caption embeddings and blocks.
        num_layers: number of decoder blocks.
        num_heads: attention heads; must divide `hidden_dim`.
        intermediate_dim: width of the MLP hidden layer of every block.
        encoder_layers: Transformer encoder blocks over the image tokens
            (0: the decoder reads the projected CNN features directly).
        dropout: dropout on the embeddings, in the blocks and on attention.
        name: name of the model.

    Returns:
        A `keras.Model` taking `{"image": (B, H, W, 3) float32 in 0..255,
        "caption": (B, T) int}` and returning the next-token logits
        `(B, T, vocabulary_size)` in float32.

    Example:

    >>> import numpy as np
    >>> from keras_attention.models.transformer_captioner import transformer_captioner
    >>> model = transformer_captioner(
    ...     vocabulary_size=20, max_caption_length=8, image_size=16, hidden_dim=16,
    ...     num_layers=1, num_heads=2, intermediate_dim=32)
    >>> logits = model({"image": np.zeros((2, 20, 20, 3), "float32"),
    ...                 "caption": np.array([[2, 5, 6, 0], [2, 7, 0, 0]])})
    >>> tuple(logits.shape)
    (2, 4, 20)
    """
    for argument, value in (
        ("vocabulary_size", vocabulary_size),
        ("max_caption_length", max_caption_length),
        ("hidden_dim", hidden_dim),
        ("num_layers", num_layers),
        ("num_heads", num_heads),
        ("intermediate_dim", intermediate_dim),
    ):
        check_positive_int(argument, value)
    check_non_negative_int("encoder_layers", encoder_layers)
    if hidden_dim % num_heads:
        raise ValueError(
            "`hidden_dim` must be a multiple of `num_heads`. "
            f"Received: hidden_dim={hidden_dim}, num_heads={num_heads}"
        )
    check_rate("dropout", dropout)

    image = keras.Input((None, None, 3), dtype="float32", name="image")
    caption = keras.Input((None,), dtype="int32", name="caption")
    # An explicit boolean mask rather than a Keras mask, so that the logits
    # carry no mask and the loss alone decides what counts.
    caption_mask = keras.ops.not_equal(caption, PADDING_ID)  # (B, T)

    image_tokens = _image_encoder(
        backbone, image_size, backbone_weights, trainable_backbone, hidden_dim, encoder_layers,
        num_heads, intermediate_dim, dropout,
    )(image)
    y = TokenAndPositionEmbedding(
        vocabulary_size, max_caption_length, hidden_dim, name=CAPTION_EMBEDDING
    )(caption)
    y = keras.layers.Dropout(dropout, name=f"{CAPTION_EMBEDDING}_dropout")(y)
    for index in range(num_layers):
        y = TransformerDecoderBlock(
            num_heads=num_heads,
            intermediate_dim=intermediate_dim,
            dropout=dropout,
            name=f"{DECODER_BLOCK_PREFIX}{index}",
        )(y, image_tokens, padding_mask=caption_mask)
    # float32 logits even under mixed precision: a stable softmax and loss.
    logits = keras.layers.Dense(vocabulary_size, dtype="float32", name=LOGITS)(y)
    return keras.Model({"image": image, "caption": caption}, logits, name=name)
