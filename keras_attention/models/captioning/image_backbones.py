"""CNN backbones that turn raw pixels into a grid of feature vectors for attention.

A captioner attends over the `(h, w)` positions of a CNN feature map (Xu et
al., "Show, Attend and Tell", https://arxiv.org/abs/1502.03044, section 3.1.1:
the annotation vectors are taken from a convolutional layer, not from the
fully connected head). The backbones here take float32 pixels in 0..255 of
any height and width, resize them to `image_size` (a square side or a
`(height, width)` pair, so a wide strip can keep its aspect ratio), apply
the preprocessing their weights expect, and return the feature map
`(B, h, w, D)`.
"""

import importlib
import inspect

import keras
import numpy as np

SMALL_CNN = "small_cnn"
# (filters, kernel, stride) of the small CNN's convolutions: grid = image size / 4.
_SMALL_CNN_LAYERS = ((32, 4, 2), (64, 4, 2), (128, 1, 1))
SMALL_CNN_STRIDE = 4
# The keras.applications networks halve the image five times.
APPLICATION_STRIDE = 32

# Stable layer names, read by the captioners and their decoders.
IMAGE_RESIZING = "image_resizing"
PREPROCESSING = "preprocessing"


def _is_side(size):
    return isinstance(size, (int, np.integer)) and not isinstance(size, bool) and size >= 8


def image_size_pair(image_size):
    """`image_size` (a side, or `(height, width)`) as a `(height, width)` pair of ints >= 8.

    Example:

    >>> from keras_attention.models.captioning.image_backbones import image_size_pair
    >>> image_size_pair(48), image_size_pair((32, 96))
    ((48, 48), (32, 96))
    """
    if _is_side(image_size):
        return int(image_size), int(image_size)
    if isinstance(image_size, (tuple, list)) and len(image_size) == 2:
        if all(_is_side(size) for size in image_size):
            return int(image_size[0]), int(image_size[1])
    raise ValueError(
        "`image_size` must be an integer >= 8 or a (height, width) pair of integers >= 8. "
        f"Received: image_size={image_size!r}"
    )


def backbone_stride(backbone):
    """Pixels per feature-grid cell of a backbone: 4 for the small CNN, 32 for applications.

    Image sides that are multiples of it give a grid without partly covered
    cells.

    Example:

    >>> from keras_attention.models.captioning.image_backbones import backbone_stride
    >>> backbone_stride("small_cnn"), backbone_stride("MobileNetV2")
    (4, 32)
    """
    _check_backbone(backbone)
    return SMALL_CNN_STRIDE if backbone == SMALL_CNN else APPLICATION_STRIDE


def _application(name):
    """The `keras.applications` constructor called `name`, or None."""
    candidate = getattr(keras.applications, name, None) if isinstance(name, str) else None
    if candidate is None or inspect.ismodule(candidate) or not callable(candidate):
        return None
    return candidate


def _check_backbone(backbone):
    if backbone == SMALL_CNN or _application(backbone) is not None:
        return
    raise ValueError(
        f"`backbone` must be {SMALL_CNN!r} or the name of a keras.applications model "
        f"(e.g. 'MobileNetV2', 'ResNet50', 'EfficientNetB0'). Received: backbone={backbone!r}"
    )


def image_resizing(size):
    """The layer that resizes images of any size to `size`, `(height, width)` (bilinear).

    Named `"image_resizing"`, where `image_shape_of` finds it.

    Example:

    >>> import numpy as np
    >>> from keras_attention.models.captioning.image_backbones import image_resizing
    >>> tuple(image_resizing((8, 16))(np.zeros((1, 20, 20, 3))).shape)
    (1, 8, 16, 3)
    """
    resizing = keras.layers.Resizing(size[0], size[1], name=IMAGE_RESIZING)
    # The input spec turns a wrong channel count into a ValueError that names `image`.
    resizing.input_spec = keras.layers.InputSpec(ndim=4, axes={-1: 3}, name="image")
    return resizing


def _small_cnn(size):
    """Two 4x4 stride-2 convolutions and a 1x1 one, each with BN and ReLU.

    Each feature sees its 4x4-pixel cell and 3 pixels around it (a receptive
    field of 10 pixels), so a cell next to an object sees little of it and
    the attention has to sit on the object to read it. With "same" padding a
    4x4 kernel over stride 2 pads both sides alike, so feature `(i, j)` is
    centred on cell `(i, j)` (a 3x3 stride-2 kernel would shift it half a
    pixel down and right at every stride).
    """
    layers = [keras.layers.Rescaling(1.0 / 255.0, name=PREPROCESSING)]
    for index, (filters, kernel, stride) in enumerate(_SMALL_CNN_LAYERS):
        layers += [
            keras.layers.Conv2D(
                filters,
                kernel,
                strides=stride,
                padding="same",
                use_bias=False,
                name=f"conv_{index}",
            ),
            # A short memory for the moving statistics: the built-in data trains in few steps.
            keras.layers.BatchNormalization(momentum=0.9, name=f"batch_norm_{index}"),
            keras.layers.ReLU(name=f"relu_{index}"),
        ]
    return keras.Sequential([keras.Input((size[0], size[1], 3))] + layers, name=SMALL_CNN)


def application_preprocessing_affine(name):
    """The per-pixel affine map `x -> x @ A + b` of an application's `preprocess_input`.

    Every `keras.applications` family preprocesses a pixel with an affine
    map: scaling to [-1, 1] ("tf" mode), RGB to BGR and mean subtraction
    ("caffe"), ImageNet mean/std normalisation ("torch"), or nothing (the
    models that rescale inside). Probing `preprocess_input` with black and
    pure-colour pixels recovers it, so it can run as a fixed layer inside the
    model (saved with it, and compiled with XLA).

    Args:
        name: a `keras.applications` model name, such as "MobileNetV2".

    Returns:
        `(A, b)`: float32 arrays `(3, 3)` and `(3,)`.

    Example:

    >>> from keras_attention.models.captioning.image_backbones import (
    ...     application_preprocessing_affine)
    >>> A, b = application_preprocessing_affine("MobileNetV2")  # [-1, 1]
    >>> (A.diagonal() * 255).round(3).tolist(), b.tolist()
    ([2.0, 2.0, 2.0], [-1.0, -1.0, -1.0])
    """
    _check_backbone(name)
    if name == SMALL_CNN:
        raise ValueError(
            "`name` must be a keras.applications model name. Received: name='small_cnn'"
        )
    module = importlib.import_module(_application(name).__module__)
    probe = np.concatenate([np.zeros((1, 3)), 255.0 * np.eye(3)]).astype("float32")  # (4, 3)
    out = np.asarray(module.preprocess_input(probe[None, None].copy()), "float64")[0, 0]  # (4, 3)
    offset = out[0]
    matrix = (out[1:] - offset) / 255.0  # row c: the response to input channel c
    return matrix.astype("float32"), offset.astype("float32")


def _application_preprocessing(name):
    """A fixed 1x1 convolution applying the application's preprocessing, or None."""
    matrix, offset = application_preprocessing_affine(name)
    if np.allclose(matrix, np.eye(3)) and np.allclose(offset, 0.0):
        return None
    layer = keras.layers.Conv2D(3, 1, trainable=False, name=PREPROCESSING)
    layer.build((None, None, None, 3))
    layer.set_weights([matrix[None, None], offset])  # kernel (1, 1, 3, 3)
    return layer


def image_backbone(backbone=SMALL_CNN, image_size=64, weights=None, trainable=True):
    """Builds a CNN mapping raw pixels to a feature grid `(B, h, w, D)`.

    The model resizes images of any size to `image_size` (bilinear),
    preprocesses them as the backbone expects, and runs the convolutional
    part of the network. A `(height, width)` size keeps the aspect ratio of
    non-square images (a 32 x 96 strip gives an 8 x 24 grid with the small
    CNN, where squashing it into a square would halve the glyphs' width):

    - `"small_cnn"`: a CNN trained from scratch (no download) for small
      images: pixels scaled to [0, 1], two 4x4 stride-2 convolutions (32,
      64 filters) and a 1x1 convolution (128), each with batch
      normalisation and ReLU; grid `(height / 4, width / 4)`, `D = 128`,
      each feature centred on its cell and seeing 10x10 pixels.
    - any `keras.applications` name (`"MobileNetV2"`, `"ResNet50"`, ...),
      without its classification head, with that family's
      `preprocess_input` as a fixed layer; `weights="imagenet"` needs a
      download, `weights=None` starts from random weights.

    A frozen backbone (`trainable=False`) runs in inference mode, so its
    batch-normalisation statistics stay as loaded.

    Args:
        backbone: `"small_cnn"` or a `keras.applications` model name.
        image_size: side of the square image the network sees, or its
            `(height, width)`.
        weights: `None`, `"imagenet"` or a weights file, for
            `keras.applications` backbones (must be None for the small CNN).
        trainable: whether the network's weights are trained (fine-tuned).

    Returns:
        A `keras.Model` named `"image_backbone"` from float32 `(B, H, W, 3)`
        pixels in 0..255 to features `(B, h, w, D)`. Images whose last axis
        is not 3 raise a `ValueError` naming `image`.

    Example:

    >>> import numpy as np
    >>> from keras_attention.models.captioning.image_backbones import image_backbone
    >>> backbone = image_backbone("small_cnn", image_size=32)
    >>> tuple(backbone(np.zeros((2, 50, 40, 3), "float32")).shape)
    (2, 8, 8, 128)
    >>> tuple(image_backbone("small_cnn", image_size=(32, 96))(np.zeros((1, 32, 96, 3))).shape)
    (1, 8, 24, 128)
    >>> tuple(image_backbone("MobileNetV2", image_size=32)(np.zeros((1, 32, 32, 3))).shape)
    (1, 1, 1, 1280)
    """
    _check_backbone(backbone)
    size = image_size_pair(image_size)
    if not isinstance(trainable, bool):
        raise ValueError(f"`trainable` must be True or False. Received: trainable={trainable!r}")
    if backbone == SMALL_CNN and weights is not None:
        raise ValueError(
            "The small CNN is trained from scratch and has no pre-trained weights. "
            f"Received: weights={weights!r} with backbone={backbone!r}"
        )

    images = keras.Input((None, None, 3), dtype="float32", name="image")
    # Keras' image preprocessing layers default to `training=True` and hand that
    # default on to the layers after them: an explicit False keeps a plain
    # `model(images)` call in inference mode (`fit` still passes True to all).
    x = image_resizing(size)(images, training=False)
    if backbone == SMALL_CNN:
        network = _small_cnn(size)
    else:
        preprocessing = _application_preprocessing(backbone)
        if preprocessing is not None:
            x = preprocessing(x)
        network = _application(backbone)(
            include_top=False, weights=weights, input_shape=(size[0], size[1], 3)
        )
    network.trainable = trainable
    # A frozen network keeps its batch-norm statistics: always in inference mode.
    features = network(x, training=False) if not trainable else network(x)
    if len(features.shape) != 4:
        raise ValueError(
            "`backbone` must produce a feature map (batch, height, width, features). "
            f"Received: backbone={backbone!r} producing shape {tuple(features.shape)}"
        )
    return keras.Model(images, features, name="image_backbone")


def image_shape_of(model):
    """The `(height, width)` a model's backbone resizes its input to.

    Args:
        model: a model containing an `image_backbone` (at any depth), such
            as a captioner.

    Returns:
        `(height, width)`, two ints.

    Example:

    >>> from keras_attention.models.captioning.image_backbones import image_backbone, image_shape_of
    >>> image_shape_of(image_backbone("small_cnn", image_size=(32, 96)))
    (32, 96)
    """
    pending = [model]
    while pending:
        layer = pending.pop()
        if layer.name == IMAGE_RESIZING and isinstance(layer, keras.layers.Resizing):
            return int(layer.height), int(layer.width)
        pending.extend(getattr(layer, "layers", ()))
    raise ValueError(
        "`model` must contain an image backbone built by `image_backbone` (with an "
        f"{IMAGE_RESIZING!r} layer). Received: model={getattr(model, 'name', model)!r}"
    )


def image_size_of(model):
    """The side of the square image a model's backbone resizes its input to.

    Args:
        model: a model containing an `image_backbone` (at any depth), such
            as a captioner, built with a square `image_size`
            (`image_shape_of` also reads non-square ones).

    Returns:
        int, the backbone's `image_size`.

    Example:

    >>> from keras_attention.models.captioning.image_backbones import image_backbone, image_size_of
    >>> image_size_of(image_backbone("small_cnn", image_size=40))
    40
    """
    height, width = image_shape_of(model)
    if height != width:
        raise ValueError(
            "`model` must resize to a square image; use `image_shape_of` for "
            f"(height, width). Received: model resizing to {(height, width)}"
        )
    return height
