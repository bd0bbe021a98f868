"""The Swin Transformer: a hierarchy of feature maps, attention within shifted windows.

Liu et al., "Swin Transformer: Hierarchical Vision Transformer using Shifted
Windows" (https://arxiv.org/abs/2103.14030).
"""

import keras

from keras_attention.layers.position.position_embedding_2d import PositionEmbedding2D
from keras_attention.layers.vision.patch_embedding import PatchEmbedding
from keras_attention.layers.vision.patch_merging import PatchMerging
from keras_attention.layers.vision.swin_transformer_block import SwinTransformerBlock
from keras_attention.models.checkpoints.checkpoint_readers import read_checkpoint
from keras_attention.models.image_classification.pixel_classifier import PixelClassifier
from keras_attention.models.image_classification.swin_sizes import SWIN_PRESETS
from keras_attention.models.image_classification.swin_sizes import swin_transformer_preset
from keras_attention.validation import check_bool
from keras_attention.validation import check_finite_number
from keras_attention.validation import check_positive_int
from keras_attention.validation import check_rate


def _check_stages(embed_dim, depths, num_heads):
    for name, values in (("depths", depths), ("num_heads", num_heads)):
        if isinstance(values, (str, bytes)) or not hasattr(values, "__len__") or not values:
            raise ValueError(
                f"`{name}` must be a non-empty list, one value per stage. "
                f"Received: {name}={values!r}"
            )
        for value in values:
            check_positive_int(name, value)
    if len(depths) != len(num_heads):
        raise ValueError(
            "`depths` and `num_heads` must give one value per stage each. "
            f"Received: depths={depths!r}, num_heads={num_heads!r}"
        )
    for stage, heads in enumerate(num_heads):
        if (embed_dim * 2**stage) % heads:
            raise ValueError(
                f"`num_heads` must divide each stage's channels (embed_dim * 2**stage). "
                f"Received: num_heads={num_heads!r}, embed_dim={embed_dim} "
                f"(stage {stage} has {embed_dim * 2**stage} channels)"
            )


@keras.saving.register_keras_serializable(package="keras_attention")
class SwinTransformer(PixelClassifier):
    """A Swin Transformer classifier taking raw pixels of any size.

    The model of Liu et al. 2021 (https://arxiv.org/abs/2103.14030):

        images (B, H, W, C), 0..255
        -> resize to image_size, rescale to [-1, 1] or [0, 1]
        -> patches of patch_size x patch_size, linearly projected, LayerNorm
           (with normalize_patches), + learned position embedding (with
           absolute_position_embedding): a map (B, H/p, W/p, D)
        -> stage 1: depths[0] SwinTransformerBlocks, shift 0 and window // 2 in turn
        -> PatchMerging (B, H/2p, W/2p, 2D) -> stage 2 -> ... (D * 2**stage channels)
        -> LayerNorm -> mean over the map -> Dense(num_classes) logits

    Each window attention has a relative position bias; the paper's optional
    absolute position embedding (its "APE") is `absolute_position_embedding`.
    A map smaller than the window is one window (no shift);
    sides that are not multiples of the window, or odd before a merge, are
    padded (see `SwinTransformerBlock` and `PatchMerging`).

    It follows the protocol of `VisionTransformer`: `forward` defines the
    pass once; `classify`, `attention_maps`, `export` (the serving
    SavedModel: pixels in, probabilities and labels out),
    `no_decay_variables()` and `class_names` are what training, plots and
    serving use, and `window_layouts` says where the tokens of each block's windows
    lie (`keras_attention.visualization.window_maps.window_attention_map`
    puts the attention back on the image). Stochastic depth grows linearly from 0 to
    `stochastic_depth_rate` over all blocks, as in the paper.

    Args:
        image_size: side of a square, or `(height, width)`; both sides
            multiples of `patch_size`.
        patch_size: side of the square patches in pixels (4 in the paper).
        num_classes: number of output logits.
        embed_dim: channels D of the first stage; doubled by each merge.
        depths: blocks per stage, e.g. `(2, 2, 6, 2)`.
        num_heads: attention heads per stage, e.g. `(3, 6, 12, 24)`.
        window_size: window side M (7 in the paper).
        mlp_ratio: MLP hidden width over channels.
        normalize_patches: LayerNorm on the projected patches, as in the
            paper. Left out (False), each token keeps how much ink its patch
            holds: a patch of one grey level (an enlarged pixel-art image)
            projects to `level * w + b`, and a LayerNorm of that, with `b`
            near 0, is only the sign of `level * w` (in [-1, 1] pixels:
            lighter or darker than mid-grey), so every lighter grey reads as
            blank.
        dropout: dropout after the embedding and in every block.
        attention_dropout: dropout on the attention weights.
        stochastic_depth_rate: rate of the last block.
        channels: number of image channels C.
        augmentation: optional list of Keras layers applied after resizing,
            only while training (see `VisionTransformer`).
        rescaling: `"symmetric"` maps pixels to [-1, 1], `"unit"` to [0, 1];
            `{"mean": [...], "std": [...]}` (per channel, for pixels in 0..1)
            normalises as a Hugging Face image processor does.
        layer_norm_epsilon: epsilon of every LayerNorm.
        class_names: optional `num_classes` names, saved with the model
            (the labels of `classify` and `export`).
        name: model name.
        **kwargs: other `keras.Model` arguments (`dtype`, `trainable`).

    Example:

    >>> import numpy as np
    >>> from keras_attention.models.image_classification.swin_transformer import SwinTransformer
    >>> model = SwinTransformer(image_size=16, patch_size=2, num_classes=3, embed_dim=8,
    ...     depths=(2, 1), num_heads=(2, 2), window_size=4)
    >>> images = np.random.uniform(0, 255, (2, 20, 24, 3)).astype("float32")
    >>> tuple(model(images).shape), model.classify(images).shape
    ((2, 3), (2,))
    >>> [tuple(m.shape) for m in model.attention_maps(images)]
    [(2, 4, 2, 16, 16), (2, 4, 2, 16, 16), (2, 1, 2, 16, 16)]
    """

    # `compile()` alone, and `train_vit.py --model swin` without `--learning-rate`: a quarter
    # of the ViT's. At the ViT's 2e-3 (batches of 16) the small Swin stayed near chance for
    # most of a run on 8 x 8 handwritten digits: 15 epochs reached 0.244 held-out accuracy
    # at 2e-3, 0.502 at 5e-4, 0.408 at 2.5e-4. The paper's is 1e-3 for batches of 1024.
    DEFAULT_LEARNING_RATE = 5e-4

    def __init__(
        self,
        *,
        image_size,
        patch_size,
        num_classes,
        embed_dim,
        depths,
        num_heads,
        window_size,
        mlp_ratio=4.0,
        normalize_patches=True,
        absolute_position_embedding=False,
        dropout=0.0,
        attention_dropout=0.0,
        stochastic_depth_rate=0.1,
        channels=3,
        augmentation=None,
        rescaling="symmetric",
        layer_norm_epsilon=1e-5,
        class_names=None,
        name="swin_transformer",
        **kwargs,
    ):
        """Checks the arguments, makes the layers and builds the functional graph."""
        height, width = self._make_pixel_layers(
            image_size, patch_size, num_classes, channels, augmentation, rescaling, class_names
        )
        check_positive_int("embed_dim", embed_dim)
        check_positive_int("window_size", window_size)
        _check_stages(embed_dim, depths, num_heads)
        check_finite_number("mlp_ratio", mlp_ratio, positive=True)
        check_bool("normalize_patches", normalize_patches)
        check_bool("absolute_position_embedding", absolute_position_embedding)
        check_rate("dropout", dropout)
        check_rate("attention_dropout", attention_dropout)
        check_rate("stochastic_depth_rate", stochastic_depth_rate)

        # === Layers (after the pixel layers; this order is the weights' order) ===
        self.patch_embedding = PatchEmbedding(
            patch_size, embed_dim, flatten=False, name="patch_embedding"
        )
        self.patch_norm = (
            keras.layers.LayerNormalization(epsilon=layer_norm_epsilon, name="patch_norm")
            if normalize_patches
            else None
        )
        self.position_embedding = (
            PositionEmbedding2D(
                grid_size=(height // patch_size, width // patch_size),
                merge="add",
                # The ViT's scale (see VisionTransformer): stddev 1 / sqrt(D).
                embeddings_initializer=keras.initializers.RandomNormal(stddev=embed_dim**-0.5),
                name="position_embedding",
            )
            if absolute_position_embedding
            else None
        )
        self.embedding_dropout = keras.layers.Dropout(dropout, name="embedding_dropout")
        self._make_stages(
            depths,
            num_heads,
            stochastic_depth_rate,
            window_size=window_size,
            mlp_ratio=mlp_ratio,
            dropout=dropout,
            attention_dropout=attention_dropout,
            layer_norm_epsilon=layer_norm_epsilon,
        )
        self.encoder_blocks = [block for stage in self.stages for block in stage]
        self._make_head(num_classes, layer_norm_epsilon, keras.layers.GlobalAveragePooling2D)

        self._build_functional(channels, name, **kwargs)
        # The config keeps plain int tuples, whatever sequence the caller passed.
        depths, num_heads = tuple(int(d) for d in depths), tuple(int(h) for h in num_heads)
        self.keep_config(locals())

    def _make_stages(
        self,
        depths,
        num_heads,
        stochastic_depth_rate,
        window_size,
        layer_norm_epsilon,
        **block_arguments,
    ):
        """Makes `stages`, one `SwinTransformerBlock` list per stage, and `patch_merging`.

        A `PatchMerging` comes before each stage but the first; they are made
        (and tracked, which orders the model's weights) stage by stage.
        """
        total_blocks = sum(depths)
        self.stages, self.patch_merging = [], []
        for stage, (depth, heads) in enumerate(zip(depths, num_heads)):
            if stage:
                self.patch_merging.append(
                    PatchMerging(layer_norm_epsilon, name=f"patch_merging_{stage}")
                )
            first = sum(depths[:stage])
            self.stages.append(
                [
                    SwinTransformerBlock(
                        num_heads=heads,
                        window_size=window_size,
                        shift_size=0 if index % 2 == 0 else window_size // 2,
                        # Linear in depth over the whole network: 0 for the first block.
                        stochastic_depth_rate=stochastic_depth_rate
                        * (first + index)
                        / max(total_blocks - 1, 1),
                        name=f"stage_{stage}_block_{index}",
                        layer_norm_epsilon=layer_norm_epsilon,
                        **block_arguments,
                    )
                    for index in range(depth)
                ]
            )

    @classmethod
    def from_preset(cls, preset, **kwargs):
        """A Swin Transformer from a pretrained checkpoint folder, or a size by name.

        keras-hub's convention: `preset` is a Hugging Face Swin folder
        (`SwinForImageClassification` or `SwinModel`, as `save_pretrained`
        writes it): the architecture, weights, pixel normalisation, input
        size and class names of the checkpoint, its classifier kept unless
        `num_classes` differs or `include_head=False`
        (`checkpoints.swin_checkpoints`); or a size
        name of `SWIN_PRESETS` ("swin_tiny_224", ...): that architecture with
        fresh weights (`swin_transformer_from_preset`).

        Args:
            preset: a folder path or a size name.
            **kwargs: more `SwinTransformer` arguments (`num_classes`,
                `dropout`, `stochastic_depth_rate`, ...); for a Hugging Face
                folder also `include_head=False` and
                `ignore_unexpected_weights=True`, to read a folder holding
                tensors its config does not account for.

        Returns:
            a `SwinTransformer`.

        Raises:
            ValueError: one line naming the file, for a folder that disagrees
                with itself (`checkpoint_consistency`) or a damaged file.

        Example:

        >>> from keras_attention.models.image_classification.swin_transformer import SwinTransformer
        >>> SwinTransformer.from_preset("swin_glyphs_32", num_classes=3).embed_dim
        64
        """
        if isinstance(preset, str) and preset in SWIN_PRESETS:
            return swin_transformer_from_preset(preset, **kwargs)
        return read_checkpoint(preset, cls, **kwargs)

    def forward(self, images, training=None, return_attention_scores=False):
        """The forward pass, symbolic or eager.

        Args:
            images: `(B, H, W, C)` float32 pixels in 0..255.
            training: runs dropout, stochastic depth and augmentation when True.
            return_attention_scores: also return every block's attention.

        Returns:
            logits `(B, num_classes)` float32, and with
            `return_attention_scores=True` a list with one
            `(B, windows, heads, M^2, M^2)` tensor per block, first block
            first (see `window_layouts`).
        """
        scores = [] if return_attention_scores else None
        return self._logits(self._encode(images, training, scores), scores)

    def _encode(self, images, training, scores):
        """Raw pixels -> the last stage's feature map `(B, h, w, C)`, before the final norm."""
        x = self.patch_embedding(self._pixels(images, training))  # (B, h/p, w/p, D)
        if self.patch_norm is not None:
            x = self.patch_norm(x)
        if self.position_embedding is not None:
            x = self.position_embedding(x)
        x = self.embedding_dropout(x, training=training)
        for stage, blocks in enumerate(self.stages):
            if stage:
                x = self.patch_merging[stage - 1](x)  # (B, h/2, w/2, 2C)
            x = self._run_blocks(blocks, x, training, scores)
        return x

    def _patch_tokens(self, feature_map):
        """`(B, h, w, C)` -> `(B, h * w, C)`, row-major."""
        rows, cols = self.token_grid
        return keras.ops.reshape(feature_map, (-1, rows * cols, feature_map.shape[-1]))

    @property
    def token_grid(self):
        """`(rows, cols)` of the last stage's map, the tokens `image_tokens` returns."""
        return tuple(self.encoder_blocks[-1].map_size)

    @property
    def window_layouts(self):
        """Where the tokens of every block's windows lie, first block first.

        Returns:
            a list with one `(map_size, positions)` per block: `map_size` the
            `(rows, cols)` of the block's feature map (each of its tokens
            covers `image_size / map_size` pixels), `positions` an int array
            `(windows, M^2)` of the row-major map index of each window
            token, -1 for padding, shifted windows already unshifted.
        """
        return [(block.map_size, block.window_token_positions()) for block in self.encoder_blocks]

    def attention_maps(self, images, batch_size=32):
        """Every block's window attention for `images`, as NumPy, without dropout.

        Args:
            images: `(B, H, W, C)` pixels in 0..255, any H and W.
            batch_size: images per forward pass.

        Returns:
            A list with one float32 array `(B, windows, heads, M^2, M^2)` per
            block, first block first; `window_layouts` says where each
            window token lies.
        """
        return super().attention_maps(images, batch_size)

    def no_decay_variables(self):
        """Biases, LayerNorm scales and offsets, the position bias tables and embedding.

        Pass them to `optimizer.exclude_from_weight_decay(var_list=...)`, as
        the paper's code leaves them out of weight decay.
        """
        names = ("bias", "gamma", "beta", "relative_position_bias", "grid_embeddings")
        return [v for v in self.trainable_variables if v.path.split("/")[-1] in names]


def swin_transformer_from_preset(preset, **kwargs):
    """Builds a `SwinTransformer` of a named size, freshly initialised.

    Args:
        preset: a key of `SWIN_PRESETS` (`swin_sizes`).
        **kwargs: any other `SwinTransformer` argument; `image_size`,
            `num_classes` or an architecture argument overrides the preset's.

    Example:

    >>> from keras_attention.models import swin_transformer_from_preset
    >>> model = swin_transformer_from_preset("swin_glyphs_32", num_classes=3)
    >>> model.output_shape, model.embed_dim
    ((None, 3), 64)
    """
    arguments = swin_transformer_preset(preset)
    arguments.update(kwargs)
    return SwinTransformer(name=arguments.pop("name", preset), **arguments)
