"""Export an image classifier as a TensorFlow SavedModel: pixels in, labels out."""

import keras
import numpy as np
import tensorflow as tf

from keras_attention.backend_support import require_tensorflow_backend
from keras_attention.serving.image_inputs import checked_images
from keras_attention.serving.image_signatures import add_image_endpoints
from keras_attention.serving.saved_model_kinds import IMAGE_CLASSIFIER
from keras_attention.serving.serving_signature import load_serving_signature

# The SavedModel's variable collection holding the channel count the model takes.
CHANNELS_COLLECTION = "image_channels"


def _check_classifier(model):
    """The model's `(B, H, W, C)` input shape and class count, after checking both."""
    inputs = getattr(model, "inputs", None) if isinstance(model, keras.Model) else None
    outputs = getattr(model, "outputs", None) if isinstance(model, keras.Model) else None
    if not inputs or not outputs or len(inputs) != 1 or len(outputs) != 1:
        raise ValueError(
            "`model` must be a functional keras.Model with one image input and one logits "
            f"output. Received: model={model!r}"
        )
    image_shape = tuple(model.inputs[0].shape)
    if len(image_shape) != 4 or image_shape[-1] is None:
        raise ValueError(
            "`model` must take images (batch, height, width, channels) with known channels. "
            f"Received: model input shape={image_shape}"
        )
    num_classes = model.outputs[0].shape[-1]
    if len(model.outputs[0].shape) != 2 or num_classes is None:
        raise ValueError(
            "`model` must return logits (batch, num_classes). "
            f"Received: model output shape={tuple(model.outputs[0].shape)}"
        )
    return image_shape, num_classes


def _bytes_size(model, image_shape):
    """The `(height, width)` encoded images are resized to: the model's own size, if known."""
    if image_shape[1] is not None and image_shape[2] is not None:
        return tuple(image_shape[1:3])
    # The library's classifiers take any size and resize to theirs in a `resize` layer.
    size = getattr(getattr(model, "resize", None), "size", None)
    return None if size is None else tuple(int(side) for side in size)


def _check_class_names(class_names, num_classes, model):
    """The label strings: `class_names`, or the model's own, one per output.

    A model whose `class_names` attribute is None (a classifier of this
    library built without names) is labelled with its class indices, as its
    `classify` labels it.
    """
    if class_names is None:
        if not hasattr(model, "class_names"):
            raise ValueError(
                "`class_names` is required when the model has no `class_names` attribute. "
                "Received: class_names=None"
            )
        class_names = model.class_names
        if class_names is None:
            class_names = [str(index) for index in range(num_classes)]
    if (
        isinstance(class_names, (str, bytes))
        or not hasattr(class_names, "__len__")
        or len(class_names) != num_classes
    ):
        raise ValueError(
            "`class_names` must be a list with one name per model output "
            f"({num_classes} names). Received: class_names={class_names!r}"
        )
    return [str(name) for name in class_names]


def export_image_classifier(model, path, class_names=None):
    """Writes a SavedModel serving raw pixels of any size to class labels.

    The `serving_default` signature takes `images`, float32 `(B, H, W, C)`
    with pixel values in 0..255 and any `H` and `W` (the model resizes them;
    NumPy uint8 arrays, as images are stored, are converted by the call), and
    returns `probabilities` `(B, num_classes)` float32 (softmax of the
    model's logits) and `labels` `(B,)` string (the most probable class
    name). Two more signatures answer alike: `serving_uint8` takes uint8
    pixels, `serving_bytes` encoded JPEG/PNG/GIF/BMP files `image_bytes`
    `(B,)` string, each decoded and resized to the model's size
    (`keras_attention.serving.image_signatures`). The SavedModel needs only TensorFlow to run
    (`tf.saved_model.load(path).signatures["serving_default"](images=...)`),
    and `saved_model_cli show --all --dir path` describes it (`images` of
    unknown rank, so that the signature itself can check it).

    The signature checks each request and fails with a
    `tf.errors.InvalidArgumentError` whose message names `images`, what it
    expects and what it received when `images` is not a batch (one
    `(H, W, C)` image included: send it as `images[None]`), has other than
    `C` channels or a height or width of 0, holds a NaN or infinite pixel
    ("must hold finite pixel values"), or a pixel outside 0..255 ("must hold
    pixel values in 0..255", with the smallest and largest values received),
    such as 16-bit values or pixels scaled to -1..1, which would otherwise be
    classified as if they were 8-bit pixels (pixels scaled to 0..1 cannot be
    told apart from dark images).

    One function on purpose: its length is this contract of the SavedModel's signatures;
    the code, about twenty lines, checks the model and hands one `serve` function to the
    shared image endpoints.

    Args:
        model: a functional `keras.Model` mapping float32 images
            `(B, H, W, C)` in 0..255 to logits `(B, num_classes)`, such as
            `vision_transformer` builds. It is run with `training=False`.
        path: folder to write the SavedModel to.
        class_names: the `num_classes` label strings, in output order;
            defaults to the model's `class_names` attribute, and to the
            class indices as strings ("0", "1", ...) when that attribute is
            None (a `VisionTransformer` or `SwinTransformer` built without
            names, whose `classify` returns indices). The models' own
            `export(path)` calls this function.

    Returns:
        `path` as a string.

    Example:

    >>> import os, tempfile
    >>> import numpy as np
    >>> import tensorflow as tf
    >>> from keras_attention.models import vision_transformer
    >>> from keras_attention.serving.image_classification_export import export_image_classifier
    >>> model = vision_transformer(image_size=8, patch_size=4, num_classes=2,
    ...     hidden_dim=8, num_layers=1, num_heads=2, mlp_dim=8)
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = export_image_classifier(model, os.path.join(folder, "vit"), ["cat", "dog"])
    ...     serve = tf.saved_model.load(path).signatures["serving_default"]
    ...     result = serve(images=tf.zeros((3, 20, 10, 3)))
    >>> result["probabilities"].shape, result["labels"].shape
    (TensorShape([3, 2]), TensorShape([3]))
    """
    require_tensorflow_backend("SavedModel export (export_image_classifier)")
    image_shape, num_classes = _check_classifier(model)
    class_names = _check_class_names(class_names, num_classes, model)
    label_table = tf.constant(class_names, dtype=tf.string)

    channels = image_shape[-1]

    def serve(images):
        logits = model(checked_images(images, channels), training=False)
        probabilities = tf.nn.softmax(tf.cast(logits, tf.float32), axis=-1)  # (B, classes)
        labels = tf.gather(label_table, tf.argmax(probabilities, axis=-1))  # (B,)
        return {"probabilities": probabilities, "labels": labels}

    archive = keras.export.ExportArchive()
    archive.track(model)
    add_image_endpoints(archive, serve, channels, _bytes_size(model, image_shape))
    # A signature of unknown rank does not say how many channels: the loader reads them here.
    archive.add_variable_collection(
        CHANNELS_COLLECTION, [tf.Variable(channels, trainable=False, name=CHANNELS_COLLECTION)]
    )
    path = str(path)
    archive.write_out(path, verbose=False)
    return path


def load_image_classifier(path, warm_up=True):
    """Loads the `serving_default` function of an exported image classifier, warmed up.

    Plain TensorFlow: equivalent to
    `tf.saved_model.load(path).signatures["serving_default"]`, keeping the
    loaded object alive. With `warm_up` it classifies one blank image before
    returning, so that the graph optimization of the first call happens at
    load time rather than in the first request.

    Args:
        path: a folder written by `export_image_classifier`.
        warm_up: classify one image at load time.

    Returns:
        A callable `serve(images)` taking a batch `(B, H, W, C)` of pixels
        0..255 (uint8 or float) and returning the dict with `probabilities`
        and `labels`.

    Raises:
        ValueError: when `path` is not a SavedModel folder, or holds another
            kind of export (a captioner, a translator); the message names
            the path, what it holds and the function that loads it.

    Example:

    >>> import os, tempfile
    >>> import numpy as np
    >>> from keras_attention.models import vision_transformer
    >>> from keras_attention.serving.image_classification_export import (
    ...     export_image_classifier, load_image_classifier)
    >>> model = vision_transformer(image_size=8, patch_size=4, num_classes=2,
    ...     hidden_dim=8, num_layers=1, num_heads=2, mlp_dim=8)
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     serve = load_image_classifier(export_image_classifier(model, folder, ["a", "b"]))
    ...     labels = serve(images=np.zeros((1, 8, 8, 3), "float32"))["labels"].numpy()
    >>> labels.tolist()[0] in (b"a", b"b")
    True
    """
    loaded, serve = load_serving_signature(path, IMAGE_CLASSIFIER)

    def call(images):
        return serve(images=tf.convert_to_tensor(np.asarray(images), dtype=tf.float32))

    if warm_up:
        warm_up_images(serve, _served_channels(loaded, serve))
    call.saved_model = loaded  # keeps the variables alive
    return call


def _served_channels(loaded, serve):
    """The channel count a loaded image classifier takes."""
    _, kwargs = serve.structured_input_signature
    shape = kwargs["images"].shape
    if shape.rank is not None:  # an export whose signature takes batches only
        return shape[-1] or 3
    collection = getattr(loaded, CHANNELS_COLLECTION, None)
    return 3 if collection is None else int(collection[0].numpy())


def warm_up_images(serve, channels=3, size=32):
    """Calls an image signature once on a blank `(1, size, size, channels)` batch.

    Args:
        serve: a concrete function whose one input is `images`.
        channels: the channel count it takes.
        size: the height and width of the blank image.

    Returns:
        the outputs of that call.
    """
    return serve(images=tf.zeros((1, size, size, channels), tf.float32))
