"""A captioner on Vision Transformer patch tokens, with a Transformer decoder.

The image side is the Vision Transformer's (Dosovitskiy et al., "An Image
is Worth 16x16 Words", https://arxiv.org/abs/2010.11929): non-overlapping
patches, each turned into one token, with 2D positions, through Transformer
encoder blocks; the caption side is `TransformerCaptioner`'s decoder, which
cross-attends to the patch tokens. A patch becomes a token by one linear
projection (`patch_stem="linear"`, the paper's) or by a few strided
convolutions (`"convolutional"`, Xiao et al., "Early Convolutions Help
Transformers See Better", https://arxiv.org/abs/2106.14881); either way
there is one token per patch, and the attention maps are over the patch
grid `(height / patch_size, width / patch_size)`.
"""

import keras

from keras_attention.layers.position.alibi_bias_2d import AlibiBias2D
from keras_attention.layers.position.position_embedding_2d import PositionEmbedding2D
from keras_attention.layers.position.sinusoidal_position_encoding_2d import (
    SinusoidalPositionEncoding2D,
)
from keras_attention.layers.transformer.transformer_encoder_block import TransformerEncoderBlock
from keras_attention.layers.vision.patch_embedding import PatchEmbedding
from keras_attention.models.captioning.image_backbones import PREPROCESSING
from keras_attention.models.captioning.image_backbones import image_resizing
from keras_attention.models.captioning.image_backbones import image_size_pair
from keras_attention.models.captioning.pretrained_image_encoder import image_encoder_and_config
from keras_attention.models.captioning.pretrained_image_encoder import pretrained_token_encoder
from keras_attention.models.captioning.show_attend_tell_captioner import FEATURE_POSITIONS
from keras_attention.models.captioning.transformer_captioner import IMAGE_ENCODER
from keras_attention.models.captioning.transformer_captioner import TransformerCaptioner
from keras_attention.models.checkpoints.checkpoint_readers import read_image_encoder
from keras_attention.models.constructor_config import check_heads_divide_width
from keras_attention.models.constructor_config import model_builder
from keras_attention.validation import check_bool
from keras_attention.validation import check_positive_int

POSITIONS = ("sinusoidal", "learned")
DEFAULT_ENCODER_LAYERS = 4  # of the captioner's own patch encoder
PATCH_STEMS = ("linear", "convolutional")
# Default patch sides, smallest first: the first that divides the image and gives at most
# MAX_DEFAULT_GRID_SIDE patches along its longer side (a 48x48 scene: 4, a 12x12 grid).
DEFAULT_PATCH_SIDES = (4, 8, 16, 32)
MAX_DEFAULT_GRID_SIDE = 24


def default_patch_size(image_size):
    """The patch side a `ViTCaptioner` uses when none is given.

    The smallest of `DEFAULT_PATCH_SIDES` that divides both sides of the
    image and gives at most `MAX_DEFAULT_GRID_SIDE` patches along the longer
    side: small images get a grid as fine as the small CNN's (4 pixels a
    cell), large ones one whose attention stays affordable.

    Args:
        image_size: a side or `(height, width)`.

    Returns:
        int, the patch side.

    Example:

    >>> from keras_attention.models.captioning.vit_captioner import default_patch_size
    >>> default_patch_size(48), default_patch_size((32, 96)), default_patch_size(224)
    (4, 4, 16)
    """
    height, width = image_size_pair(image_size)
    for side in DEFAULT_PATCH_SIDES:
        fits = max(height, width) // side <= MAX_DEFAULT_GRID_SIDE
        if height % side == 0 and width % side == 0 and fits:
            return side
    raise ValueError(
        "`image_size` has no default patch size: no side among "
        f"{DEFAULT_PATCH_SIDES} divides it with at most {MAX_DEFAULT_GRID_SIDE} patches "
        f"along its longer side; pass `patch_size`. Received: image_size={image_size!r}"
    )


def convolutional_patch_stem(patch_size, hidden_dim, name="patch_embedding"):
    """Pixels in [0, 1] -> one `hidden_dim` token per `patch_size` patch, by convolutions.

    `log2(patch_size)` convolutions of 4 x 4 kernels and stride 2, each
    followed by batch normalisation and ReLU, with twice the channels at
    each one up to `hidden_dim`, then a 1 x 1 convolution to `hidden_dim`:
    the stem of Xiao et al. 2021 (https://arxiv.org/abs/2106.14881). A
    token sees its patch and the pixels around it (10 of them a side for
    4-pixel patches), where a linear projection sees the patch alone. With
    "same" padding a 4 x 4 kernel over stride 2 pads both sides alike, so
    token `(i, j)` stays centred on patch `(i, j)`.

    Args:
        patch_size: a power of 2, at least 2.
        hidden_dim: the token width.
        name: name of the `keras.Sequential` returned.

    Returns:
        a `keras.Sequential` mapping `(B, H, W, 3)` to `(B, H / p, W / p, hidden_dim)`.

    Example:

    >>> import numpy as np
    >>> from keras_attention.models.captioning.vit_captioner import convolutional_patch_stem
    >>> tuple(convolutional_patch_stem(4, 16)(np.zeros((1, 8, 12, 3))).shape)
    (1, 2, 3, 16)
    """
    check_positive_int("patch_size", patch_size)
    if patch_size < 2 or patch_size & (patch_size - 1):
        raise ValueError(
            "`patch_size` must be a power of 2 (2, 4, 8, ...) with a convolutional patch "
            f"stem. Received: patch_size={patch_size}"
        )
    halvings = patch_size.bit_length() - 1
    layers = []
    for index in range(halvings):
        filters = max(8, hidden_dim // 2 ** (halvings - 1 - index))
        layers += [
            keras.layers.Conv2D(
                filters, 4, strides=2, padding="same", use_bias=False, name=f"stem_conv_{index}"
            ),
            keras.layers.BatchNormalization(momentum=0.9, name=f"stem_batch_norm_{index}"),
            keras.layers.ReLU(name=f"stem_relu_{index}"),
        ]
    layers.append(keras.layers.Conv2D(hidden_dim, 1, name="stem_projection"))
    return keras.Sequential(layers, name=name)


def _patch_encoder(
    image_shape, patch_size, hidden_dim, positions, encoder_layers, alibi_2d, patch_stem, blocks
):
    """Pixels -> patch tokens `(B, h * w, hidden_dim)`; and the grid `(h, w)`.

    `blocks` are the encoder blocks' `num_heads`, `intermediate_dim` and
    `dropout`.
    """
    grid = (image_shape[0] // patch_size, image_shape[1] // patch_size)
    images = keras.Input((None, None, 3), dtype="float32", name="image")
    x = image_resizing(image_shape)(images, training=False)
    x = keras.layers.Rescaling(1.0 / 255.0, name=PREPROCESSING)(x)
    if patch_stem == "convolutional":
        x = convolutional_patch_stem(patch_size, hidden_dim)(x)  # (B, h, w, D)
    else:
        x = PatchEmbedding(patch_size, hidden_dim, flatten=False, name="patch_embedding")(x)
    # Unit-scale pixel content before the unit-amplitude positions are added: unnormalised,
    # the projections of dark patches are a few times smaller than the positions.
    x = keras.layers.LayerNormalization(epsilon=1e-6, name="patch_norm")(x)
    if positions == "learned":
        position_layer = PositionEmbedding2D(
            grid_size=grid,
            merge="add",
            embeddings_initializer=keras.initializers.RandomNormal(stddev=0.02),
            name=FEATURE_POSITIONS,
        )
    else:
        position_layer = SinusoidalPositionEncoding2D(merge="add", name=FEATURE_POSITIONS)
    x = position_layer(x)  # (B, h, w, D)
    x = keras.layers.Reshape((grid[0] * grid[1], hidden_dim), name="grid_to_tokens")(x)
    x = keras.layers.Dropout(blocks["dropout"], name="image_token_dropout")(x)
    # The same fixed distance penalty in every block, (1, heads, h * w, h * w).
    bias = AlibiBias2D(grid, name="alibi_2d").bias(blocks["num_heads"]) if alibi_2d else None
    # Pre-norm blocks and a final LayerNorm, as in ViT: the decoder reads normalised tokens.
    for index in range(encoder_layers):
        block = TransformerEncoderBlock(**blocks, norm_first=True, name=f"encoder_block_{index}")
        x = block(x, attention_bias=bias)
    x = keras.layers.LayerNormalization(epsilon=1e-6, name="encoder_norm")(x)
    return keras.Model(images, x, name=IMAGE_ENCODER), grid


def _check_patch_encoder_arguments(
    image_size, patch_size, positions, patch_stem, hidden_dim, num_heads
):
    """Raises a ValueError naming the first argument the patch encoder cannot take."""
    check_positive_int("patch_size", patch_size)
    height, width = image_size_pair(image_size)
    if height % patch_size or width % patch_size:
        raise ValueError(
            "`image_size` must be a multiple of `patch_size` on both sides. "
            f"Received: image_size={image_size!r}, patch_size={patch_size}"
        )
    if positions not in POSITIONS:
        raise ValueError(f"`positions` must be one of {POSITIONS}. Received: {positions=}")
    if patch_stem not in PATCH_STEMS:
        raise ValueError(
            f"`patch_stem` must be one of {PATCH_STEMS}. Received: patch_stem={patch_stem!r}"
        )
    check_heads_divide_width(hidden_dim, num_heads)
    if positions == "sinusoidal" and hidden_dim % 4:
        raise ValueError(
            "`hidden_dim` must be a multiple of 4 with sinusoidal 2D positions. "
            f"Received: hidden_dim={hidden_dim}"
        )


@keras.saving.register_keras_serializable(package="keras_attention")
class ViTCaptioner(TransformerCaptioner):
    """A Transformer decoder that cross-attends to Vision Transformer patch tokens.

        image (B, H, W, 3) -> `image_encoder`: resize to `image_size`,
            scale to [0, 1] -> `PatchEmbedding` (p x p patches, linear) or
            `convolutional_patch_stem` -> LayerNorm (B, h, w, D)
            -> + 2D positions -> flatten to h * w tokens
            -> `encoder_layers` pre-norm Transformer encoder blocks, their
            scores penalised by patch distance (2D ALiBi) -> LayerNorm
        caption (B, T) -> `TransformerCaptioner`'s decoder: token and
            position embedding -> `num_layers` decoder blocks (causal
            self-attention, cross-attention on the patch tokens, MLP)
            -> logits (B, T, vocabulary_size), float32

    With `h = height / p`, `w = width / p`. Everything after the image
    encoder is `TransformerCaptioner`'s: the cached decoding (`encode`,
    `initial_cache`, `step`), `caption_attention`, `caption` and the
    exported SavedModel, with attention maps `(B, h, w)` over the patches.

    Args:
        vocabulary_size: number of token ids; 0 is padding.
        max_caption_length: longest caption in tokens (start token included).
        image_size: side of the square image the patches are cut from, or
            its `(height, width)`; both must be multiples of `patch_size`.
            Images of any size are resized to it inside the model.
        patch_size: side `p` of the square patches in pixels; None derives
            it from `image_size` (`default_patch_size`: 4 on small images).
        hidden_dim: width of the patch tokens, caption embeddings and blocks.
        num_layers: number of decoder blocks.
        num_heads: attention heads of every block; must divide `hidden_dim`.
        intermediate_dim: width of the MLP hidden layer of every block.
        encoder_layers: Transformer encoder blocks over the patches (with 0
            the decoder reads the projected patches with their positions);
            None: 4, or 0 on a `pretrained_encoder` (new blocks on top of it).
        positions: `"sinusoidal"` (fixed 2D sines, `hidden_dim` a multiple
            of 4) or `"learned"` (a trained 2D table).
        alibi_2d: add `AlibiBias2D`'s fixed penalty, `-slope * distance`
            between patches, to the encoder's self-attention scores: local
            heads from the first step, which a ViT trained on a few thousand
            images needs (on 80x60 object scenes it reached in 1250 steps
            the validation loss that took 4000 without it).
        patch_stem: how a patch becomes a token: `"linear"` (one linear
            projection of its pixels, as in ViT) or `"convolutional"`
            (`convolutional_patch_stem`: strided convolutions that also see
            the pixels around the patch; `patch_size` a power of 2). On
            strips of three 8 x 8 pixel-art digits a captioner with the
            convolutional stem reached 1.000 exact captions in 20 epochs
            where the linear one reached 0.690.
        dropout: dropout on the embeddings, in the blocks and on attention.
        num_key_value_heads: None for multi-head attention, or the key/value
            heads of grouped-query attention in every block (a divisor of
            `num_heads`), as in `TransformerCaptioner`.
        pretrained_encoder: None, or a pretrained `VisionTransformer` or
            `SwinTransformer` (`from_preset` of a Hugging Face or keras-hub
            checkpoint; `ViTCaptioner.from_preset` reads one) whose patch
            tokens the decoder attends to instead of a patch encoder of its
            own (`pretrained_image_encoder`). Its pixel normalisation and
            input size are kept: `image_size` is its own (None, or the
            same), `patch_size` its patch side, and `positions`, `alibi_2d`
            and `patch_stem` must stay at their defaults.
        trainable_encoder: with `pretrained_encoder`, whether its weights
            are fine-tuned (True) or kept as the checkpoint has them.
        name: name of the model.

    Called as a `TransformerCaptioner` is, on `{"image": pixels in 0..255,
    "caption": ids}`, it gives the float32 next-token logits.

    Example:

    >>> import numpy as np
    >>> import keras_attention as ka
    >>> model = ka.models.ViTCaptioner(vocabulary_size=20, max_caption_length=8,
    ...     image_size=(16, 32), patch_size=4, hidden_dim=16, num_layers=1, num_heads=2,
    ...     intermediate_dim=32, encoder_layers=1)
    >>> logits, attention = model.caption_attention(
    ...     {"image": np.zeros((1, 16, 32, 3), "float32"), "caption": np.array([[2, 5, 6]])})
    >>> tuple(logits.shape), tuple(attention.shape)  # a 4x8 patch grid per token
    ((1, 3, 20), (1, 3, 4, 8))
    """

    def __init__(
        self,
        *,
        vocabulary_size,
        max_caption_length,
        image_size=None,
        patch_size=None,
        hidden_dim=128,
        num_layers=2,
        num_heads=4,
        intermediate_dim=256,
        encoder_layers=None,
        positions="sinusoidal",
        alibi_2d=True,
        patch_stem="linear",
        dropout=0.1,
        num_key_value_heads=None,
        pretrained_encoder=None,
        trainable_encoder=False,
        name="vit_captioner",
        **kwargs,
    ):
        """Checks the arguments, makes the patch encoder and the decoder, builds the graph."""
        if pretrained_encoder is not None:
            self._init_on_pretrained_encoder(locals())
            return
        if encoder_layers is None:
            encoder_layers = DEFAULT_ENCODER_LAYERS
        if image_size is None:
            raise ValueError(
                "`image_size` must be given without a `pretrained_encoder`. Received: "
                "image_size=None"
            )
        self._check_transformer_arguments(locals())
        check_bool("alibi_2d", alibi_2d)
        check_bool("trainable_encoder", trainable_encoder)
        image_shape = image_size_pair(image_size)
        if patch_size is None:
            patch_size = default_patch_size(image_shape)
        _check_patch_encoder_arguments(
            image_size, patch_size, positions, patch_stem, hidden_dim, num_heads
        )
        if isinstance(image_size, (tuple, list)):
            image_size = list(image_shape)  # kept as a .keras file gives it back

        self._make_layers_and_graph(
            lambda blocks: _patch_encoder(
                image_shape,
                patch_size,
                hidden_dim,
                positions,
                encoder_layers,
                alibi_2d,
                patch_stem,
                blocks,
            ),
            locals(),
        )

    def _init_on_pretrained_encoder(self, arguments):
        """The constructor's work with a `pretrained_encoder` (its `locals()`)."""
        encoder, config = image_encoder_and_config(arguments["pretrained_encoder"])
        image_shape = tuple(int(side) for side in encoder.image_size)
        grid = tuple(encoder.token_grid)
        patch_side = image_shape[0] // grid[0]
        _check_the_encoders_own(arguments, image_shape, patch_side)
        if arguments["encoder_layers"] is None:
            arguments["encoder_layers"] = 0
        self._check_transformer_arguments(arguments)
        check_bool("trainable_encoder", arguments["trainable_encoder"])
        arguments.update(
            image_size=list(image_shape), patch_size=patch_side, pretrained_encoder=config
        )
        self._make_layers_and_graph(
            lambda blocks: pretrained_token_encoder(
                encoder,
                arguments["hidden_dim"],
                arguments["encoder_layers"],
                blocks,
                arguments["trainable_encoder"],
                IMAGE_ENCODER,
            ),
            arguments,
        )

    @classmethod
    def from_preset(cls, preset, *, image_size=None, **kwargs):
        """A captioner whose image encoder is a pretrained checkpoint's, its decoder new.

        Args:
            preset: an image classification checkpoint: a Hugging Face ViT or
                Swin folder, a keras-hub ViT preset folder, or a handle
                (`hf://ORG/NAME[@REVISION]`, `kaggle://...`, a keras-hub
                preset name), as `VisionTransformer.from_preset` reads it.
            image_size: the encoder's input `(height, width)` (its position
                table resized); default the checkpoint's.
            **kwargs: the other `ViTCaptioner` arguments: `vocabulary_size`,
                `max_caption_length`, the decoder's sizes,
                `trainable_encoder`, ...

        Returns:
            a `ViTCaptioner` on the checkpoint's encoder.

        Example (with a checkpoint folder at hand):

            captioner = ka.models.ViTCaptioner.from_preset(
                "hf://google/vit-base-patch16-224", vocabulary_size=5000,
                max_caption_length=30)
        """
        encoder = read_image_encoder(preset, image_size=image_size)
        return cls(pretrained_encoder=encoder, **kwargs)


def _check_the_encoders_own(arguments, image_shape, patch_side):
    """Raises a ValueError where an argument contradicts the pretrained encoder it names."""
    if arguments["image_size"] is not None:
        if image_size_pair(arguments["image_size"]) != image_shape:
            raise ValueError(
                "`image_size` must be the pretrained encoder's (or None): "
                f"{image_shape}; resize it with `from_preset(..., image_size=...)`. Received: "
                f"image_size={arguments['image_size']!r}"
            )
    if arguments["patch_size"] not in (None, patch_side):
        raise ValueError(
            f"`patch_size` must be the pretrained encoder's ({patch_side}) or None. Received: "
            f"patch_size={arguments['patch_size']!r}"
        )
    for name, default in (
        ("positions", "sinusoidal"),
        ("alibi_2d", True),
        ("patch_stem", "linear"),
    ):
        if arguments[name] != default:
            raise ValueError(
                f"`{name}` belongs to the captioner's own patch encoder: with a "
                f"`pretrained_encoder` it must stay {default!r}. Received: {name}="
                f"{arguments[name]!r}"
            )


@model_builder(ViTCaptioner, "vit_captioner")
def vit_captioner():
    """Builds a `ViTCaptioner`: the constructor's arguments, keywords only.

    Example:

    >>> model = vit_captioner(
    ...     vocabulary_size=20, max_caption_length=8, image_size=(32, 96), hidden_dim=16,
    ...     num_layers=1, num_heads=2, intermediate_dim=32, encoder_layers=1)
    >>> model.patch_size, model.grid_size  # the default patch side on a small image
    (4, (8, 24))
    """
