"""The Vision Transformer: an image as a sequence of 16x16 patch tokens.

Dosovitskiy et al., "An Image is Worth 16x16 Words: Transformers for Image
Recognition at Scale" (https://arxiv.org/abs/2010.11929).
"""

import keras
import numpy as np
from keras import ops

from keras_attention.layers.class_token import ClassToken
from keras_attention.layers.patch_embedding import PatchEmbedding
from keras_attention.layers.position_embedding_2d import PositionEmbedding2D
from keras_attention.layers.position_embedding_2d import resize_position_grid
from keras_attention.layers.token_pooling import POOLING_MODES
from keras_attention.layers.token_pooling import TokenPooling
from keras_attention.layers.transformer_encoder_block import TransformerEncoderBlock

# Pixels 0..255 are mapped to one of these ranges inside the model.
RESCALINGS = {
    "symmetric": (1.0 / 127.5, -1.0),  # [-1, 1], as big_vision's ViT
    "unit": (1.0 / 255.0, 0.0),  # [0, 1]
}

# Stable layer names: the attention model and the weight transfer find layers by them.
_RESIZE = "resize"
_AUGMENTATION = "augmentation"
_RESCALE = "rescale"
_PATCH_EMBEDDING = "patch_embedding"
_CLASS_TOKEN = "class_token"
_POSITION_EMBEDDING = "position_embedding"
_EMBEDDING_DROPOUT = "embedding_dropout"
_BLOCK_PREFIX = "encoder_block_"
_FINAL_NORM = "final_norm"
_POOLING = "pooling"
_HEAD = "head"


def _check_positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"`{name}` must be a positive integer. Received: {name}={value!r}")


def _check_rate(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
        raise ValueError(f"`{name}` must be a float in [0, 1). Received: {name}={value!r}")


def _image_size_pair(image_size):
    """`image_size` as `(height, width)`, or a ValueError naming it."""
    if isinstance(image_size, (tuple, list)) and len(image_size) == 2:
        pair = tuple(image_size)
    else:
        pair = (image_size, image_size)
    for side in pair:
        if isinstance(side, bool) or not isinstance(side, (int, np.integer)) or side <= 0:
            raise ValueError(
                "`image_size` must be a positive integer or a (height, width) pair of them. "
                f"Received: image_size={image_size!r}"
            )
    return int(pair[0]), int(pair[1])


def _check_arguments(
    image_size, patch_size, num_classes, hidden_dim, num_layers, num_heads, mlp_dim,
    dropout, pooling, stochastic_depth_rate, channels, rescaling, class_names,
):
    height, width = _image_size_pair(image_size)
    for name, value in (
        ("patch_size", patch_size),
        ("num_classes", num_classes),
        ("hidden_dim", hidden_dim),
        ("num_layers", num_layers),
        ("num_heads", num_heads),
        ("mlp_dim", mlp_dim),
        ("channels", channels),
    ):
        _check_positive_int(name, value)
    if height % patch_size or width % patch_size:
        raise ValueError(
            "`image_size` must be a multiple of `patch_size`. "
            f"Received: image_size={image_size}, patch_size={patch_size}"
        )
    if hidden_dim % num_heads:
        raise ValueError(
            "`hidden_dim` must be a multiple of `num_heads`. "
            f"Received: hidden_dim={hidden_dim}, num_heads={num_heads}"
        )
    _check_rate("dropout", dropout)
    _check_rate("stochastic_depth_rate", stochastic_depth_rate)
    if pooling not in POOLING_MODES:
        raise ValueError(f"`pooling` must be one of {POOLING_MODES}. Received: pooling={pooling!r}")
    if rescaling not in RESCALINGS:
        raise ValueError(
            f"`rescaling` must be one of {tuple(RESCALINGS)}. Received: rescaling={rescaling!r}"
        )
    if class_names is not None and len(class_names) != num_classes:
        raise ValueError(
            "`class_names` must hold one name per class (`num_classes` names). "
            f"Received: len(class_names)={len(class_names)}, num_classes={num_classes}"
        )


@keras.saving.register_keras_serializable(package="keras_attention")
class TrainingAugmentation(keras.layers.Layer):
    """Applies image augmentation layers while training, and nothing otherwise.

    Keras' random preprocessing layers (`RandomFlip`, ...) augment whenever
    they are not told `training=False`, so a plain `model(images)` call
    would augment. This wrapper augments only under `training=True` (as in
    `fit`); any other call returns the images unchanged.

    Args:
        augmentation: list of Keras layers mapping `(B, H, W, C)` images
            to images of the same shape, applied in order.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        inputs: images `(B, H, W, C)`.
        training: augment only when True.

    Returns:
        images shaped like `inputs`.

    Example:

    >>> import keras
    >>> import numpy as np
    >>> from keras_attention.models.vision_transformer import TrainingAugmentation
    >>> layer = TrainingAugmentation([keras.layers.RandomFlip("vertical")])
    >>> images = np.arange(4, dtype="float32").reshape(1, 2, 2, 1)
    >>> np.asarray(layer(images, training=True)).shape
    (1, 2, 2, 1)
    >>> np.asarray(layer(images))[0, :, :, 0].tolist()
    [[0.0, 1.0], [2.0, 3.0]]
    """

    def __init__(self, augmentation, **kwargs):
        super().__init__(**kwargs)
        if isinstance(augmentation, keras.layers.Layer):
            augmentation = [augmentation]
        if isinstance(augmentation, (str, bytes)) or not hasattr(augmentation, "__iter__"):
            augmentation = [augmentation]
        augmentation = list(augmentation)
        for layer in augmentation:
            if not isinstance(layer, keras.layers.Layer):
                raise ValueError(
                    "`augmentation` must be a list of Keras layers (e.g. keras.layers.RandomFlip). "
                    f"Received: augmentation containing {layer!r}"
                )
        self.augmentation = augmentation

    def build(self, input_shape):
        for layer in self.augmentation:
            if not layer.built:
                layer.build(input_shape)

    def call(self, inputs, training=None):
        if not training:
            return inputs
        for layer in self.augmentation:
            inputs = layer(inputs, training=True)
        return inputs

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "augmentation": [
                    keras.saving.serialize_keras_object(layer) for layer in self.augmentation
                ]
            }
        )
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["augmentation"] = [
            keras.saving.deserialize_keras_object(layer) for layer in config["augmentation"]
        ]
        return cls(**config)


@keras.saving.register_keras_serializable(package="keras_attention")
class ResizeToModelSize(keras.layers.Layer):
    """Bilinearly resizes images to the model's size, skipping images already that size.

    The check is on static shapes, made when the step is traced: batches of
    a fixed native size (as a training pipeline gives) pass through
    untouched, while images of unknown or other sizes (a serving signature
    of any size) are resized. A bilinear resize to the same size returns its
    input anyway, so both paths give the same numbers.

    Args:
        size: `(height, width)` to resize to.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        inputs: images `(B, H, W, C)`.

    Returns:
        images `(B, height, width, C)`.

    Example:

    >>> import numpy as np
    >>> from keras_attention.models.vision_transformer import ResizeToModelSize
    >>> layer = ResizeToModelSize((4, 6))
    >>> tuple(layer(np.zeros((2, 8, 8, 3), "float32")).shape)
    (2, 4, 6, 3)
    """

    def __init__(self, size, **kwargs):
        super().__init__(**kwargs)
        self.size = _image_size_pair(size)

    def call(self, inputs):
        if tuple(inputs.shape[1:3]) == self.size:
            return inputs
        return ops.image.resize(inputs, self.size, interpolation="bilinear")

    def compute_output_shape(self, input_shape):
        return (input_shape[0], *self.size, input_shape[-1])

    def get_config(self):
        config = super().get_config()
        config.update({"size": self.size})
        return config


def vision_transformer(
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
):
    """Builds a Vision Transformer classifier taking raw pixels of any size.

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
        rescaling: `"symmetric"` maps pixels to [-1, 1], `"unit"` to [0, 1].
        layer_norm_epsilon: epsilon of every LayerNorm.
        implementation: attention kernel, see `ka.ops.dot_product_attention`.
        class_names: optional `num_classes` names, kept as the model's
            `class_names` attribute (used by `export_image_classifier`; not
            saved in `.keras` files).
        name: model name.

    Returns:
        A functional `keras.Model` mapping float32 images `(B, H, W, C)`
        with pixel values in 0..255 (any H and W) to logits
        `(B, num_classes)`. Calling it on images whose last axis is not C
        raises a `ValueError`: "expected shape=(None, None, None, C)" for
        a symbolic `keras.Input`, "expected axis -1 of input shape to have
        value C" for arrays.

    Example:

    >>> import numpy as np
    >>> from keras_attention.models.vision_transformer import vision_transformer
    >>> model = vision_transformer(
    ...     image_size=16, patch_size=4, num_classes=3, hidden_dim=16,
    ...     num_layers=1, num_heads=2, mlp_dim=32)
    >>> images = np.random.uniform(0, 255, (2, 20, 24, 3)).astype("float32")
    >>> tuple(model(images).shape)
    (2, 3)
    """
    _check_arguments(
        image_size, patch_size, num_classes, hidden_dim, num_layers, num_heads, mlp_dim,
        dropout, pooling, stochastic_depth_rate, channels, rescaling, class_names,
    )
    height, width = _image_size_pair(image_size)
    grid = (height // patch_size, width // patch_size)
    use_class_token = pooling == "token"
    scale, offset = RESCALINGS[rescaling]

    images = keras.Input(shape=(None, None, channels), dtype="float32", name="images")
    # Not `keras.layers.Resizing`: that layer's call defaults to training=True
    # and hands it on to every later layer, so a plain `model(images)` would
    # run dropout and augmentation.
    # float32 whatever the dtype policy: the pixels stay exact before rescaling.
    x = ResizeToModelSize((height, width), dtype="float32", name=_RESIZE)(images)  # (B, h, w, C)
    if augmentation:
        x = TrainingAugmentation(augmentation, name=_AUGMENTATION)(x)
    x = keras.layers.Rescaling(scale, offset=offset, name=_RESCALE)(x)
    x = PatchEmbedding(patch_size, hidden_dim, name=_PATCH_EMBEDDING)(x)  # (B, N, D)
    if use_class_token:
        x = ClassToken(name=_CLASS_TOKEN)(x)  # (B, 1 + N, D)
    x = PositionEmbedding2D(
        grid_size=grid,
        merge="add",
        num_prefix_tokens=int(use_class_token),
        # big_vision's scale: with the 0.02 of the paper's larger widths, a
        # narrow model learns where things are only after a long plateau.
        embeddings_initializer=keras.initializers.RandomNormal(stddev=hidden_dim**-0.5),
        name=_POSITION_EMBEDDING,
    )(x)
    x = keras.layers.Dropout(dropout, name=_EMBEDDING_DROPOUT)(x)
    for index in range(num_layers):
        # Stochastic depth grows linearly with depth: 0 for the first block.
        rate = stochastic_depth_rate * index / max(num_layers - 1, 1)
        x = TransformerEncoderBlock(
            num_heads=num_heads,
            intermediate_dim=mlp_dim,
            dropout=dropout,
            activation="gelu",
            norm_first=True,
            layer_norm_epsilon=layer_norm_epsilon,
            stochastic_depth_rate=rate,
            implementation=implementation,
            name=f"{_BLOCK_PREFIX}{index}",
        )(x)
    x = keras.layers.LayerNormalization(epsilon=layer_norm_epsilon, name=_FINAL_NORM)(x)
    x = TokenPooling(pooling, name=_POOLING)(x)  # (B, D)
    logits = keras.layers.Dense(
        num_classes, kernel_initializer="zeros", dtype="float32", name=_HEAD
    )(x)
    model = keras.Model(images, logits, name=name)
    model.class_names = None if class_names is None else [str(n) for n in class_names]
    return model


def _check_vision_transformer(model, argument="model"):
    names = {layer.name for layer in getattr(model, "layers", ())}
    if not isinstance(model, keras.Model) or not {_PATCH_EMBEDDING, _POSITION_EMBEDDING} <= names:
        raise ValueError(
            f"`{argument}` must be a model built by `vision_transformer`. "
            f"Received: {argument}={model!r}"
        )


def vision_transformer_token_layout(model):
    """The patch grid and whether token 0 is a class token.

    This is what `ka.visualization.rollout_to_image_map` needs to lay the
    attention to each token out on the image.

    Args:
        model: a model built by `vision_transformer` (or loaded from one).

    Returns:
        `((rows, cols), has_class_token)`.

    Example:

    >>> from keras_attention.models.vision_transformer import (
    ...     vision_transformer, vision_transformer_token_layout)
    >>> model = vision_transformer(image_size=16, patch_size=4, num_classes=2,
    ...     hidden_dim=8, num_layers=1, num_heads=2, mlp_dim=8)
    >>> vision_transformer_token_layout(model)
    ((4, 4), True)
    """
    _check_vision_transformer(model)
    position = model.get_layer(_POSITION_EMBEDDING)
    has_class_token = any(layer.name == _CLASS_TOKEN for layer in model.layers)
    return tuple(position.grid_size), has_class_token


def vision_transformer_attention_model(model):
    """A copy of `model` that returns every block's attention weights.

    The model is cloned with its current weights, its encoder blocks now
    asked for their attention weights (`model` itself does not keep them, so
    its attention may use the memory-efficient kernels). Later training of
    `model` does not reach the copy: make a new one, or use
    `get_attention_scores`, which always does. Augmentation is inactive
    outside `fit`, so the maps are those of inference.

    Args:
        model: a model built by `vision_transformer` (or loaded from one).

    Returns:
        A `keras.Model` mapping images `(B, H, W, C)` in 0..255 to a list
        with one `(B, num_heads, T, T)` array per block, first block first,
        where `T` is the number of patches plus one with a class token.

    Example:

    >>> import numpy as np
    >>> from keras_attention.models.vision_transformer import (
    ...     vision_transformer, vision_transformer_attention_model)
    >>> model = vision_transformer(image_size=8, patch_size=4, num_classes=2,
    ...     hidden_dim=8, num_layers=2, num_heads=2, mlp_dim=8)
    >>> maps = vision_transformer_attention_model(model)(np.zeros((1, 8, 8, 3)))
    >>> [tuple(m.shape) for m in maps]
    [(1, 2, 5, 5), (1, 2, 5, 5)]
    """
    _check_vision_transformer(model)
    scores = []

    def call_with_scores(layer, *args, **kwargs):
        if not layer.name.startswith(_BLOCK_PREFIX):
            return layer(*args, **kwargs)
        # Fresh copies of the blocks: a Keras layer called first for one output
        # cannot be called again for two in another functional model.
        outputs, block_scores = layer(*args, **{**kwargs, "return_attention_scores": True})
        scores.append(block_scores)
        return outputs

    clone = keras.models.clone_model(model, call_function=call_with_scores)
    clone.set_weights(model.get_weights())
    return keras.Model(clone.input, scores, name=f"{model.name}_attention")


def get_attention_scores(model, images, batch_size=32):
    """Every encoder block's attention weights for `images`, as NumPy.

    Args:
        model: a model built by `vision_transformer` (or loaded from one).
        images: `(B, H, W, C)` pixels in 0..255, any H and W.
        batch_size: images per forward pass.

    Returns:
        A list with one float32 array `(B, num_heads, T, T)` per block, first
        block first; rows sum to 1. Feed it to
        `ka.visualization.attention_rollout`.

    Example:

    >>> import numpy as np
    >>> from keras_attention.models.vision_transformer import (
    ...     vision_transformer, get_attention_scores)
    >>> model = vision_transformer(image_size=8, patch_size=4, num_classes=2,
    ...     hidden_dim=8, num_layers=1, num_heads=2, mlp_dim=8, pooling="gap")
    >>> scores = get_attention_scores(model, np.zeros((3, 8, 8, 3)))
    >>> len(scores), scores[0].shape
    (1, (3, 2, 4, 4))
    """
    _check_positive_int("batch_size", batch_size)
    attention_model = vision_transformer_attention_model(model)
    images = np.asarray(images, "float32")
    if images.ndim != 4 or len(images) == 0:
        raise ValueError(
            "`images` must be (batch, height, width, channels) with at least one image. "
            f"Received: images.shape={images.shape}"
        )
    # Plain calls, not `predict`: a few images do not pay for a compilation.
    batches = []
    for start in range(0, len(images), batch_size):
        scores = attention_model(images[start : start + batch_size], training=False)
        # A one-block model returns its single map unwrapped.
        batches.append(scores if isinstance(scores, (list, tuple)) else [scores])
    return [
        np.concatenate([ops.convert_to_numpy(ops.cast(b[layer], "float32")) for b in batches])
        for layer in range(len(batches[0]))
    ]


def vision_transformer_no_decay_variables(model):
    """The variables ViT training recipes leave out of weight decay.

    Biases, LayerNorm scales and offsets, the position embeddings and the
    class token (the `no_weight_decay` set of DeiT and timm): decaying them
    only pulls positions and normalisation towards zero. Pass them to
    `optimizer.exclude_from_weight_decay(var_list=...)` before training.

    Args:
        model: a model built by `vision_transformer` (or loaded from one).

    Returns:
        list of the model's trainable variables to exclude.

    Example:

    >>> import keras
    >>> from keras_attention.models.vision_transformer import (
    ...     vision_transformer, vision_transformer_no_decay_variables)
    >>> model = vision_transformer(image_size=8, patch_size=4, num_classes=2,
    ...     hidden_dim=8, num_layers=1, num_heads=2, mlp_dim=8)
    >>> optimizer = keras.optimizers.AdamW(weight_decay=0.05)
    >>> optimizer.exclude_from_weight_decay(var_list=vision_transformer_no_decay_variables(model))
    >>> sorted(v.path for v in vision_transformer_no_decay_variables(model))[:2]
    ['class_token/token', 'encoder_block_0/feedforward_intermediate_dense/bias']
    """
    _check_vision_transformer(model)
    excluded_layers = (_POSITION_EMBEDDING, _CLASS_TOKEN)
    excluded_names = ("bias", "gamma", "beta")
    return [
        variable
        for variable in model.trainable_variables
        if variable.path.split("/")[-1] in excluded_names
        or variable.path.split("/")[0] in excluded_layers
    ]


def _resized_weight(source_weight, target_weight, layer_name):
    """`source_weight` as a value for `target_weight`, resizing a position grid."""
    source_value = ops.convert_to_numpy(source_weight)
    target_shape = tuple(target_weight.shape)
    if source_value.shape == target_shape:
        return source_value
    if layer_name == _POSITION_EMBEDDING and source_value.ndim == 3 and len(target_shape) == 3:
        if source_value.shape[-1] == target_shape[-1]:
            return ops.convert_to_numpy(resize_position_grid(source_value, target_shape[:2]))
    raise ValueError(
        "The two models must have the same architecture apart from `image_size` (and the "
        f"head with include_head=False). Received: layer {layer_name!r} with weight "
        f"{source_weight.path!r} of shape {source_value.shape} in `source` and "
        f"{target_shape} in `target`"
    )


def copy_vision_transformer_weights(source, target, include_head=True):
    """Copies a Vision Transformer's weights into one built at another size.

    Build `target` with `vision_transformer` and the same architecture as
    `source` but any `image_size` (and, with `include_head=False`, any
    `num_classes`). Every weight is copied as is, except the learned
    position table, which is bilinearly resized to the new patch grid, as
    the ViT paper does to fine-tune at a higher resolution.

    Args:
        source: the trained model.
        target: the model to fill in; changed in place.
        include_head: also copy the classification head; False keeps
            `target`'s freshly initialised head (new classes).

    Returns:
        `target`.

    Example:

    >>> import numpy as np
    >>> from keras_attention.models.vision_transformer import (
    ...     vision_transformer, copy_vision_transformer_weights)
    >>> config = dict(patch_size=4, num_classes=2, hidden_dim=8, num_layers=1,
    ...     num_heads=2, mlp_dim=8)
    >>> small = vision_transformer(image_size=8, **config)
    >>> large = copy_vision_transformer_weights(small, vision_transformer(image_size=16, **config))
    >>> tuple(large.get_layer("position_embedding").grid_embeddings.shape)
    (4, 4, 8)
    """
    _check_vision_transformer(source, "source")
    _check_vision_transformer(target, "target")
    source_layers = {layer.name: layer for layer in source.layers}
    for layer in target.layers:
        if not layer.weights or (layer.name == _HEAD and not include_head):
            continue
        source_layer = source_layers.get(layer.name)
        if source_layer is None or len(source_layer.weights) != len(layer.weights):
            raise ValueError(
                "The two models must have the same layers. "
                f"Received: layer {layer.name!r} of `target` "
                + ("is missing from `source`" if source_layer is None else "differs in `source`")
            )
        values = [
            _resized_weight(source_weight, target_weight, layer.name)
            for source_weight, target_weight in zip(source_layer.weights, layer.weights)
        ]
        layer.set_weights(values)
    return target
