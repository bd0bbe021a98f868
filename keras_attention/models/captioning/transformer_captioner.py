"""The Transformer captioner: a CNN feature grid as the encoder sequence, a Transformer decoder.

Vaswani et al., "Attention Is All You Need" (https://arxiv.org/abs/1706.03762),
with the source sentence replaced by the cells of a CNN feature map, as in the
"Transformers for image captioning" lectures (and e.g. Cornia et al. 2020).
"""

import keras
from keras import ops

from keras_attention.layers.position.position_embedding_2d import PositionEmbedding2D
from keras_attention.layers.position.token_and_position_embedding import TokenAndPositionEmbedding
from keras_attention.layers.transformer.transformer_decoder_block import TransformerDecoderBlock
from keras_attention.layers.transformer.transformer_encoder_block import TransformerEncoderBlock
from keras_attention.models import transformer_decoding
from keras_attention.models.captioning.image_backbones import SMALL_CNN
from keras_attention.models.captioning.image_backbones import image_backbone
from keras_attention.models.captioning.image_captioner import MEMORY_MASK
from keras_attention.models.captioning.image_captioner import ImageCaptioner
from keras_attention.models.captioning.show_attend_tell_captioner import FEATURE_POSITIONS
from keras_attention.models.constructor_config import check_heads_divide_width
from keras_attention.models.constructor_config import model_builder
from keras_attention.models.transformer_decoding import MEMORY
from keras_attention.ops.masks import PADDING_ID
from keras_attention.validation import check_non_negative_int

# Layer names, kept from the builder so that weights stay where they were.
IMAGE_ENCODER = "image_encoder"
CAPTION_EMBEDDING = "caption_embedding"
DECODER_BLOCK_PREFIX = "decoder_block_"
LOGITS = "logits"


def _image_encoder(backbone, hidden_dim, encoder_layers, block_arguments):
    """Pixels -> image tokens `(B, h * w, hidden_dim)` with 2D positions, maybe
    self-attended; and the grid `(h, w)`.

    `backbone` is the `image_backbone` model; `block_arguments` the encoder
    blocks' `num_heads`, `intermediate_dim` and `dropout`.
    """
    images = keras.Input((None, None, 3), dtype="float32", name="image")
    features = backbone(images)
    grid = (int(features.shape[1]), int(features.shape[2]))
    x = keras.layers.Dense(hidden_dim, name="feature_projection")(features)  # (B, h, w, D)
    x = PositionEmbedding2D(
        grid_size=grid,
        merge="add",
        embeddings_initializer=keras.initializers.RandomNormal(stddev=0.02),
        name=FEATURE_POSITIONS,
    )(x)
    tokens_shape = (grid[0] * grid[1], hidden_dim)
    x = keras.layers.Reshape(tokens_shape, name="grid_to_tokens")(x)  # (B, h * w, D)
    x = keras.layers.Dropout(block_arguments["dropout"], name="image_token_dropout")(x)
    for index in range(encoder_layers):
        x = TransformerEncoderBlock(**block_arguments, name=f"encoder_block_{index}")(x)
    return keras.Model(images, x, name=IMAGE_ENCODER), grid


@keras.saving.register_keras_serializable(package="keras_attention")
class TransformerCaptioner(ImageCaptioner):
    """A Transformer decoder that cross-attends to the cells of a CNN feature map.

        image (B, H, W, 3) -> `image_encoder`: backbone (resize, preprocess,
            CNN) (B, h, w, C) -> Dense(hidden_dim) -> + learned 2D positions
            -> flatten to h * w tokens -> encoder_layers Transformer encoder
            blocks (self-attention among the image cells)
        caption (B, T) -> `caption_embedding` (token + learned position)
            -> num_layers `decoder_blocks` (causal self-attention over the
               caption, cross-attention on the image tokens, MLP)
            -> `logits_layer` Dense(vocabulary_size) (B, T, V), float32

    Caption id 0 is padding: padded positions are hidden from the
    self-attention (they come after the real tokens, so causal attention
    keeps them from changing the real positions anyway).

    The model decodes itself (see `ImageCaptioner`) one token at a time with
    fixed-size key/value caches: `encode` runs the image encoder once and
    projects the image tokens into every block's cross-attention keys and
    values; `step` embeds one token at its position and runs it through the
    blocks, which write its self-attention keys and values into per-block
    caches `(B, 2, max_length, heads, key_dim)`. Its attention maps are the
    last block's cross-attention weights averaged over the heads, `(B, h, w)`
    per token; `caption_attention` gives them for captions fed whole.

    Args:
        vocabulary_size: number of token ids; 0 is padding.
        max_caption_length: longest caption in tokens (start token included),
            the rows of the caption position table and the longest decoding
            (`max_length`).
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
        num_key_value_heads: None for multi-head attention, or the key/value
            heads of grouped-query attention in every block (1: multi-query);
            it must divide `num_heads`, and the decoding caches hold that many.
        name: name of the model.

    Call arguments:
        inputs: `{"image": (B, H, W, 3) float32 in 0..255, "caption": (B, T)
            int}`.

    Returns the next-token logits `(B, T, vocabulary_size)` in float32.

    Example:

    >>> import numpy as np
    >>> import keras_attention as ka
    >>> model = ka.models.TransformerCaptioner(vocabulary_size=20, max_caption_length=8,
    ...     image_size=16, hidden_dim=16, num_layers=1, num_heads=2, intermediate_dim=32)
    >>> logits = model({"image": np.zeros((2, 20, 20, 3), "float32"),
    ...                 "caption": np.array([[2, 5, 6, 0], [2, 7, 0, 0]])})
    >>> tuple(logits.shape)
    (2, 4, 20)
    """

    def __init__(
        self,
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
        num_key_value_heads=None,
        name="transformer_captioner",
        **kwargs,
    ):
        """Checks the arguments, makes the image encoder and the decoder, builds the graph."""
        self._check_transformer_arguments(locals())
        check_heads_divide_width(hidden_dim, num_heads)

        self._make_layers_and_graph(
            lambda blocks: _image_encoder(
                image_backbone(backbone, image_size, backbone_weights, trainable_backbone),
                hidden_dim,
                encoder_layers,
                blocks,
            ),
            locals(),
        )

    @classmethod
    def _check_transformer_arguments(cls, arguments):
        """Checks the arguments every Transformer captioner has: the caption and block sizes,
        `dropout` and `encoder_layers` (the constructor's `locals()`)."""
        cls._check_caption_arguments(
            arguments, ("hidden_dim", "num_layers", "num_heads", "intermediate_dim")
        )
        check_non_negative_int("encoder_layers", arguments["encoder_layers"])

    def _make_layers_and_graph(self, make_image_encoder, arguments):
        """Makes the image encoder, then the caption decoder; builds the graph; keeps the config.

        Args:
            make_image_encoder: `block_arguments -> (image_encoder, grid_size)`,
                `block_arguments` the blocks' `num_heads`, `intermediate_dim`,
                `dropout` and `num_key_value_heads`.
            arguments: the constructor's `locals()` once its arguments are checked.
        """
        block_arguments = {
            name: arguments[name]
            for name in ("num_heads", "intermediate_dim", "dropout", "num_key_value_heads")
        }
        self.image_encoder, grid_size = make_image_encoder(block_arguments)
        self._make_caption_decoder(
            arguments["vocabulary_size"],
            arguments["max_caption_length"],
            arguments["hidden_dim"],
            arguments["num_layers"],
            block_arguments,
        )
        self._build_functional(self._teacher_forced, arguments["name"], **arguments["kwargs"])
        self._keep_captioner_config(
            arguments, grid_size, max_length=arguments["max_caption_length"]
        )

    def _make_caption_decoder(
        self, vocabulary_size, max_caption_length, hidden_dim, num_layers, block_arguments
    ):
        """The decoder side: caption embedding, `num_layers` decoder blocks, logits.

        `block_arguments` are the blocks' `num_heads`, `intermediate_dim` and
        `dropout` (also the embeddings' dropout).
        """
        self.caption_embedding = TokenAndPositionEmbedding(
            vocabulary_size, max_caption_length, hidden_dim, name=CAPTION_EMBEDDING
        )
        self.caption_embedding_dropout = keras.layers.Dropout(
            block_arguments["dropout"], name=f"{CAPTION_EMBEDDING}_dropout"
        )
        self.decoder_blocks = [
            TransformerDecoderBlock(**block_arguments, name=f"{DECODER_BLOCK_PREFIX}{index}")
            for index in range(num_layers)
        ]
        # float32 logits even under mixed precision: a stable softmax and loss.
        self.logits_layer = keras.layers.Dense(vocabulary_size, dtype="float32", name=LOGITS)

    def _teacher_forced(self, image, caption, training=None, return_attention=False):
        """The forward pass on a whole caption: logits (B, T, V) and, on
        request, the last block's cross-attention averaged over the heads,
        (B, T, h * w)."""
        # An explicit boolean mask rather than a Keras mask, so that the
        # logits carry no mask and the loss alone decides what counts.
        caption_mask = ops.not_equal(caption, PADDING_ID)  # (B, T)
        image_tokens = self.image_encoder(image, training=training)  # (B, h * w, D)
        y = self.caption_embedding(caption)  # (B, T, D)
        y = self.caption_embedding_dropout(y, training=training)
        options = {"padding_mask": caption_mask, "return_attention_scores": True}
        for block in self.decoder_blocks:
            # cross_scores (B, heads, T, h * w)
            y, _, cross_scores = block(y, image_tokens, training=training, **options)
        logits = self.logits_layer(y)
        if not return_attention:
            return logits
        return logits, ops.mean(ops.cast(cross_scores, "float32"), axis=1)

    def caption_attention(self, inputs):
        """The logits and the attention maps of captions fed whole (teacher forcing).

        Args:
            inputs: `{"image": (B, H, W, 3), "caption": (B, T)}` as for a call.

        Returns:
            `(logits (B, T, V) float32, attention (B, T, h, w))`: the last
            block's cross-attention averaged over the heads, with dropout off.

        Example:

        >>> import numpy as np
        >>> model = TransformerCaptioner(
        ...     vocabulary_size=20, max_caption_length=8, image_size=(16, 32), hidden_dim=16,
        ...     num_layers=1, num_heads=2, intermediate_dim=32)
        >>> logits, attention = model.caption_attention(
        ...     {"image": np.zeros((1, 16, 32, 3), "float32"), "caption": np.array([[2, 5, 6]])})
        >>> tuple(attention.shape)  # one 4x8 map per token
        (1, 3, 4, 8)
        """
        image, caption = self._cast_inputs(inputs)
        logits, attention = self._teacher_forced(
            image, caption, training=False, return_attention=True
        )
        batch, length = ops.shape(caption)[0], ops.shape(caption)[1]
        return logits, ops.reshape(attention, (batch, length) + self.grid_size)  # (B, T, h, w)

    def encode(self, inputs):
        """Runs the image encoder once; see `ImageCaptioner` for the protocol."""
        tokens = self.image_encoder(ops.cast(inputs, "float32"), training=False)  # (B, h * w, D)
        grid_mask = ops.ones((ops.shape(tokens)[0],) + self.grid_size, dtype="bool")  # (B, h, w)
        state = {MEMORY: tokens, MEMORY_MASK: grid_mask}
        state.update(transformer_decoding.cross_attention_caches(self.decoder_blocks, tokens))
        return state

    def initial_cache(self, encoder_state, batch_size, max_length):
        """Empty self-attention caches `(B, 2, max_length, heads, key_dim)`, one per block."""
        return transformer_decoding.empty_self_attention_caches(
            self.decoder_blocks, self.hidden_dim, batch_size, max_length
        )

    def step(self, token_ids, index, cache, encoder_state):
        """Decodes one token: `(logits (B, V), cache, attention (B, h, w))`."""
        tokens = ops.cast(token_ids, "int32")[:, None]  # (B, 1)
        y = self.caption_embedding(tokens, start_index=index)  # (B, 1, D)
        y, new_cache, attention = transformer_decoding.decode_token(
            self.decoder_blocks, y, index, cache, encoder_state
        )
        logits = self.logits_layer(y)[:, 0]  # (B, V)
        return logits, new_cache, ops.reshape(attention, (-1,) + self.grid_size)  # (B, h, w)


@model_builder(TransformerCaptioner, "transformer_captioner")
def transformer_captioner():
    """Builds a `TransformerCaptioner`: the constructor's arguments, keywords only.

    Example:

    >>> model = transformer_captioner(
    ...     vocabulary_size=20, max_caption_length=8, image_size=16, hidden_dim=16,
    ...     num_layers=1, num_heads=2, intermediate_dim=32)
    >>> type(model).__name__, model.max_length
    ('TransformerCaptioner', 8)
    """
