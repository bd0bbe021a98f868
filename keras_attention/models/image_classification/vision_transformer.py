"""The Vision Transformer: an image as a sequence of 16x16 patch tokens.

Dosovitskiy et al., "An Image is Worth 16x16 Words: Transformers for Image
Recognition at Scale" (https://arxiv.org/abs/2010.11929).
"""

import keras

from keras_attention.layers.position.position_embedding_2d import PositionEmbedding2D
from keras_attention.layers.transformer.transformer_encoder_block import TransformerEncoderBlock
from keras_attention.layers.vision.class_token import ClassToken
from keras_attention.layers.vision.patch_embedding import PatchEmbedding
from keras_attention.layers.vision.token_pooling import POOLING_MODES
from keras_attention.layers.vision.token_pooling import TokenPooling
from keras_attention.models.checkpoints.checkpoint_readers import read_checkpoint
from keras_attention.models.constructor_config import check_heads_divide_width
from keras_attention.models.image_classification.pixel_classifier import PixelClassifier
from keras_attention.models.image_classification.vit_sizes import VIT_PRESETS
from keras_attention.models.image_classification.vit_sizes import vision_transformer_preset
from keras_attention.validation import check_positive_int
from keras_attention.validation import check_rate


@keras.saving.register_keras_serializable(package="keras_attention")
class VisionTransformer(PixelClassifier):
    """A Vision Transformer classifier taking raw pixels of any size.

    The model of Dosovitskiy et al. 2021 (https://arxiv.org/abs/2010.11929):

        images (B, H, W, C), 0..255
        -> resize to image_size (height, width), rescale to [-1, 1] or [0, 1]
        -> patches of patch_size x patch_size, each linearly projected: (B, N, D)
        -> [class] token prepended ("token" pooling): (B, 1 + N, D)
        -> + learned position embedding, dropout
        -> num_layers pre-norm encoder blocks (x = x + MSA(LN(x)); x = x + MLP(LN(x)), GELU)
        -> LayerNorm -> class token or mean of tokens -> Dense(num_classes) logits

    Resizing happens inside the model, so one model serves images of any
    size; a non-square `image_size` keeps its aspect ratio as a non-square
    patch grid. Images already at `image_size` skip the resize. For small
    data sets (Lee et al. 2021, https://arxiv.org/abs/2112.13492;
    Hassani et al. 2021, https://arxiv.org/abs/2104.05704) use small
    patches, `augmentation`, `stochastic_depth_rate` and label smoothing in
    the loss. To move the model to another `image_size`, build a new one and
    call `copy_vision_transformer_weights`, which interpolates the position
    embedding (section 3.2 of the paper).

    The forward pass is defined once, in `forward`; the functional graph,
    `attention_maps`, `classify`, the plots and `export(path)` (the serving
    SavedModel: raw pixels in, `probabilities` and `labels` out) all run
    it. What plots and serving need is public: `token_layout`, `class_names`,
    `no_decay_variables()`, and the layers as attributes
    (`patch_embedding`, `class_token`, `position_embedding`,
    `encoder_blocks`, `final_norm`, `pooling_layer`, `head`).

    The head's kernel starts at zero, as in the paper; the class token
    starts at zero and the position embeddings are normal with stddev
    `hidden_dim ** -0.5`, as in big_vision's ViT. `dropout` also applies to
    the attention weights.

    Args:
        image_size: size the model works at: the side of a square, or
            `(height, width)`; both sides multiples of `patch_size`. The
            patch grid is `(height // patch_size, width // patch_size)`.
        patch_size: side of the square patches in pixels.
        num_classes: number of output logits.
        hidden_dim: token width D.
        num_layers: number of encoder blocks.
        num_heads: attention heads per block; must divide `hidden_dim`.
        mlp_dim: hidden width of each block's MLP.
        dropout: dropout rate after the embeddings and in every block.
        pooling: `"token"` (class token) or `"gap"` (mean of the patch
            tokens, no class token).
        stochastic_depth_rate: largest rate of dropping a block's residual
            branches while training, reached by the last block; the rate
            grows linearly from 0 with depth (DeiT's schedule).
        channels: number of image channels C.
        augmentation: optional list of Keras layers (e.g.
            `keras.layers.RandomFlip`, `keras.layers.RandomContrast`)
            applied after resizing, only while training. Keras cannot
            compile some of them with XLA (`RandomTranslation`,
            `RandomRotation`, `RandomZoom`, `RandomCrop`): with those,
            `fit(jit_compile=True)` warns and runs without XLA.
        rescaling: `"symmetric"` maps pixels to [-1, 1], `"unit"` to [0, 1];
            `{"mean": [...], "std": [...]}` (per channel, for pixels in 0..1)
            normalises as a Hugging Face image processor does.
        layer_norm_epsilon: epsilon of every LayerNorm.
        implementation: attention kernel, see `ka.ops.dot_product_attention`.
        class_names: optional `num_classes` names, kept as the model's
            `class_names` attribute and saved with it (the labels of
            `classify` and of the SavedModel `export` writes).
        name: model name.
        **kwargs: other `keras.Model` arguments (`dtype`, `trainable`).

    The model maps float32 images `(B, H, W, C)` with pixel values in
    0..255 (any H and W) to logits `(B, num_classes)`. Calling it on images
    whose last axis is not C
    raises a `ValueError`: "expected shape=(None, None, None, C)" for a
    symbolic `keras.Input`, "expected axis -1 of input shape to have value
    C" for arrays.

    Example:

    >>> import numpy as np
    >>> from keras_attention.models import VisionTransformer
    >>> model = VisionTransformer(
    ...     image_size=16, patch_size=4, num_classes=3, hidden_dim=16,
    ...     num_layers=1, num_heads=2, mlp_dim=32)
    >>> images = np.random.uniform(0, 255, (2, 20, 24, 3)).astype("float32")
    >>> tuple(model(images).shape)
    (2, 3)
    >>> model.classify(images).shape
    (2,)
    """

    def __init__(
        self,
        *,
        image_size,
        patch_size,
        num_classes,
        hidden_dim,
        num_layers,
        num_heads,
        mlp_dim,
        dropout=0.0,
        pooling="token",
        stochastic_depth_rate=0.0,
        channels=3,
        augmentation=None,
        rescaling="symmetric",
        layer_norm_epsilon=1e-6,
        implementation="auto",
        class_names=None,
        name="vision_transformer",
        **kwargs,
    ):
        """Checks the arguments, makes the layers and builds the functional graph."""
        height, width = self._make_pixel_layers(
            image_size, patch_size, num_classes, channels, augmentation, rescaling, class_names
        )
        _check_encoder_arguments(
            hidden_dim, num_layers, num_heads, mlp_dim, dropout, pooling, stochastic_depth_rate
        )
        use_class_token = pooling == "token"

        # === Layers (after the pixel layers; this order is the weights' order) ===
        self.patch_embedding = PatchEmbedding(patch_size, hidden_dim, name="patch_embedding")
        self.class_token = ClassToken(name="class_token") if use_class_token else None
        self.position_embedding = PositionEmbedding2D(
            grid_size=(height // patch_size, width // patch_size),
            merge="add",
            num_prefix_tokens=int(use_class_token),
            # big_vision's scale: with the 0.02 of the paper's larger widths, a
            # narrow model learns where things are only after a long plateau.
            embeddings_initializer=keras.initializers.RandomNormal(stddev=hidden_dim**-0.5),
            name="position_embedding",
        )
        self.embedding_dropout = keras.layers.Dropout(dropout, name="embedding_dropout")
        self.encoder_blocks = [
            TransformerEncoderBlock(
                num_heads=num_heads,
                intermediate_dim=mlp_dim,
                dropout=dropout,
                activation="gelu",
                norm_first=True,
                layer_norm_epsilon=layer_norm_epsilon,
                # Stochastic depth grows linearly with depth: 0 for the first block.
                stochastic_depth_rate=stochastic_depth_rate * index / max(num_layers - 1, 1),
                implementation=implementation,
                name=f"encoder_block_{index}",
            )
            for index in range(num_layers)
        ]
        self._make_head(num_classes, layer_norm_epsilon, TokenPooling, pooling)

        self._build_functional(channels, name, **kwargs)
        self.keep_config(locals())

    def forward(self, images, training=None, return_attention_scores=False):
        """The forward pass, symbolic or eager.

        Args:
            images: `(B, H, W, C)` float32 pixels in 0..255.
            training: runs dropout and augmentation when True.
            return_attention_scores: also return every block's attention.

        Returns:
            logits `(B, num_classes)` float32, and with
            `return_attention_scores=True` a list with one
            `(B, num_heads, T, T)` tensor per block, first block first
            (`T` = patches, plus one with a class token).
        """
        scores = [] if return_attention_scores else None
        return self._logits(self._encode(images, training, scores), scores)

    def _encode(self, images, training, scores):
        """Raw pixels -> the last block's tokens `(B, [1 +] N, D)`, before the final norm."""
        x = self.patch_embedding(self._pixels(images, training))  # (B, N, D)
        if self.class_token is not None:
            x = self.class_token(x)  # (B, 1 + N, D)
        x = self.position_embedding(x)
        x = self.embedding_dropout(x, training=training)
        return self._run_blocks(self.encoder_blocks, x, training, scores)

    def _patch_tokens(self, tokens):
        """`(B, [1 +] N, D)` -> the patch tokens `(B, N, D)`, the class token left out."""
        return tokens if self.class_token is None else tokens[:, 1:]

    @property
    def token_grid(self):
        """`(rows, cols)` of the patch tokens `image_tokens` returns, row-major."""
        return tuple(self.position_embedding.grid_size)

    @classmethod
    def from_preset(cls, preset, **kwargs):
        """A Vision Transformer from a pretrained checkpoint folder, or a size by name.

        keras-hub's convention: `preset` is
        - a Hugging Face ViT folder (`ViTForImageClassification` or
          `ViTModel`, as `save_pretrained` writes it): the architecture,
          weights, pixel normalisation, input size and class names of the
          checkpoint (`checkpoints.vit_checkpoints`);
        - a keras-hub ViT preset folder (`ViTBackbone` or `ViTImageClassifier`,
          as `save_to_preset` writes it): its architecture, weights and pixel
          scaling (`checkpoints.vit_keras_hub_checkpoints`);
        - or a size name of `VIT_PRESETS` ("B/16", ...): that architecture
          with fresh weights (`vision_transformer_from_preset`).

        A folder is read by the reader that `checkpoints.checkpoint_readers`
        names for its model type.

        Args:
            preset: a folder path or a size name.
            **kwargs: more `VisionTransformer` arguments: `num_classes` (a
                new head where it differs from the checkpoint's),
                `image_size` (the position table is resized), `dropout`, ...;
                for a Hugging Face folder also `include_head=False`, a new
                head whatever the classes, and `ignore_unexpected_weights=True`,
                to read a folder holding tensors its config does not account
                for (by default they stop the reading).

        Returns:
            a `VisionTransformer`.

        Raises:
            ValueError: one line naming the file, for a folder that disagrees
                with itself (`checkpoint_consistency`) or a damaged file.

        Example:

        >>> from keras_attention.models import VisionTransformer
        >>> model = VisionTransformer.from_preset("Ti/16", image_size=32, num_classes=10)
        >>> model.patch_embedding.hidden_dim, model.output_shape
        (192, (None, 10))
        """
        if isinstance(preset, str) and preset in VIT_PRESETS:
            return vision_transformer_from_preset(preset, **kwargs)
        return read_checkpoint(preset, cls, **kwargs)

    @property
    def token_layout(self):
        """`((rows, cols), has_class_token)`: how the tokens lie on the image.

        This is what `ka.visualization.rollout_to_image_map` needs to lay the
        attention to each token out on the image.
        """
        return tuple(self.position_embedding.grid_size), self.class_token is not None

    def attention_maps(self, images, batch_size=32):
        """Every encoder block's attention weights for `images`, as NumPy.

        Runs `forward` with the blocks asked for their weights (a plain call
        does not keep them, so it may use the memory-efficient kernels), as
        in inference: no dropout, no augmentation.

        Args:
            images: `(B, H, W, C)` pixels in 0..255, any H and W.
            batch_size: images per forward pass.

        Returns:
            A list with one float32 array `(B, num_heads, T, T)` per block,
            first block first; rows sum to 1. Feed it to
            `ka.visualization.attention_rollout`.
        """
        return super().attention_maps(images, batch_size)

    def no_decay_variables(self):
        """The variables ViT training recipes leave out of weight decay.

        Biases, LayerNorm scales and offsets, the position embeddings and
        the class token (the `no_weight_decay` set of DeiT and timm):
        decaying them only pulls positions and normalisation towards zero.
        Pass them to `optimizer.exclude_from_weight_decay(var_list=...)`
        before training.

        Returns:
            list of the model's trainable variables to exclude.
        """
        excluded = {id(v) for v in self.position_embedding.trainable_variables}
        if self.class_token is not None:
            excluded |= {id(v) for v in self.class_token.trainable_variables}
        return [
            variable
            for variable in self.trainable_variables
            if id(variable) in excluded or variable.path.split("/")[-1] in ("bias", "gamma", "beta")
        ]


def _check_encoder_arguments(
    hidden_dim, num_layers, num_heads, mlp_dim, dropout, pooling, stochastic_depth_rate
):
    """Raises a ValueError naming the first bad argument of the encoder's."""
    for argument, value in (
        ("hidden_dim", hidden_dim),
        ("num_layers", num_layers),
        ("num_heads", num_heads),
        ("mlp_dim", mlp_dim),
    ):
        check_positive_int(argument, value)
    check_heads_divide_width(hidden_dim, num_heads)
    check_rate("dropout", dropout)
    check_rate("stochastic_depth_rate", stochastic_depth_rate)
    if pooling not in POOLING_MODES:
        raise ValueError(f"`pooling` must be one of {POOLING_MODES}. Received: pooling={pooling!r}")


def vision_transformer(**kwargs):
    """Builds a `VisionTransformer`; the same arguments, all by keyword.

    Example:

    >>> from keras_attention.models import vision_transformer
    >>> model = vision_transformer(image_size=16, patch_size=4, num_classes=3,
    ...     hidden_dim=16, num_layers=1, num_heads=2, mlp_dim=32)
    >>> type(model).__name__
    'VisionTransformer'
    """
    return VisionTransformer(**kwargs)


def vision_transformer_from_preset(preset, *, image_size=224, num_classes=1000, **kwargs):
    """Builds a Vision Transformer of a named size ("Ti/16", "S/16", "B/16", ...).

    Weights are freshly initialised (no pre-trained weights are downloaded).

    Args:
        preset: a key of `VIT_PRESETS` (`vit_sizes`).
        image_size: side of the square image the model works at.
        num_classes: number of output logits.
        **kwargs: any other `vision_transformer` argument (`dropout`,
            `pooling`, `augmentation`, ...); architecture arguments such as
            `patch_size` override the preset's.

    Returns:
        The `keras.Model` of `vision_transformer`.

    Example:

    >>> from keras_attention.models.image_classification.vision_transformer import (
    ...     vision_transformer_from_preset,
    ... )
    >>> model = vision_transformer_from_preset("Ti/16", image_size=32, num_classes=10)
    >>> model.patch_embedding.hidden_dim
    192
    """
    arguments = vision_transformer_preset(preset)
    arguments.update(kwargs)
    return vision_transformer(image_size=image_size, num_classes=num_classes, **arguments)


def check_vision_transformer(model, argument="model"):
    """Raise a ValueError unless `model` is a `VisionTransformer`."""
    if not isinstance(model, VisionTransformer):
        raise ValueError(
            f"`{argument}` must be a `VisionTransformer` (as `vision_transformer` builds). "
            f"Received: {argument}={model!r}"
        )


def vision_transformer_token_layout(model):
    """`model.token_layout`: the patch grid and whether token 0 is a class token.

    Example:

    >>> from keras_attention.models.image_classification.vision_transformer import (
    ...     vision_transformer, vision_transformer_token_layout)
    >>> model = vision_transformer(image_size=16, patch_size=4, num_classes=2,
    ...     hidden_dim=8, num_layers=1, num_heads=2, mlp_dim=8)
    >>> vision_transformer_token_layout(model)
    ((4, 4), True)
    """
    check_vision_transformer(model)
    return model.token_layout


def get_attention_scores(model, images, batch_size=32):
    """`model.attention_maps(images, batch_size)`: every block's attention, as NumPy.

    Example:

    >>> import numpy as np
    >>> from keras_attention.models.image_classification.vision_transformer import (
    ...     vision_transformer, get_attention_scores)
    >>> model = vision_transformer(image_size=8, patch_size=4, num_classes=2,
    ...     hidden_dim=8, num_layers=1, num_heads=2, mlp_dim=8, pooling="gap")
    >>> scores = get_attention_scores(model, np.zeros((3, 8, 8, 3)))
    >>> len(scores), scores[0].shape
    (1, (3, 2, 4, 4))
    """
    check_vision_transformer(model)
    return model.attention_maps(images, batch_size)


def vision_transformer_no_decay_variables(model):
    """`model.no_decay_variables()`: what ViT recipes leave out of weight decay.

    Example:

    >>> import keras
    >>> from keras_attention.models.image_classification.vision_transformer import (
    ...     vision_transformer, vision_transformer_no_decay_variables)
    >>> model = vision_transformer(image_size=8, patch_size=4, num_classes=2,
    ...     hidden_dim=8, num_layers=1, num_heads=2, mlp_dim=8)
    >>> optimizer = keras.optimizers.AdamW(weight_decay=0.05)
    >>> optimizer.exclude_from_weight_decay(var_list=vision_transformer_no_decay_variables(model))
    >>> sorted(v.path for v in vision_transformer_no_decay_variables(model))[:2]
    ['class_token/token', 'encoder_block_0/feedforward_intermediate_dense/bias']
    """
    check_vision_transformer(model)
    return model.no_decay_variables()
