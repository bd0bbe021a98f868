"""What the image classifiers (ViT, Swin) share around their encoders: head, config, inference."""

import keras
import numpy as np
from keras import ops

from keras_attention.models.constructor_config import ConstructorConfig
from keras_attention.models.default_compile import DefaultCompile
from keras_attention.models.image_classification.pixel_classifier_inputs import augmentation_config
from keras_attention.models.image_classification.pixel_classifier_inputs import (
    check_pixel_classifier_arguments,
)
from keras_attention.models.image_classification.pixel_classifier_inputs import pixel_layers
from keras_attention.models.pixel_batches import checked_pixel_batch
from keras_attention.validation import check_positive_int


class PixelClassifier(DefaultCompile, ConstructorConfig, keras.Model):
    """Base class of the classifiers that map raw pixels to logits through encoder blocks.

    A subclass's `__init__` calls, in this order (the layers' creation order
    is the order of their weights in a saved file):

    1. `_make_pixel_layers(...)`: checks the arguments every classifier has
       and makes `resize`, `augmentation` (or None) and `rescale`;
    2. its own layers (patch embedding, `encoder_blocks`, ...);
    3. `_make_head(...)`: `final_norm`, `pooling_layer` and the `head`;
    4. `_build_functional(...)`: the functional graph of `forward` on
       `keras.Input((None, None, channels))`;
    5. `keep_config(locals())`.

    Its `forward(images, training, return_attention_scores)` starts with
    `_pixels` and ends with `_logits`. The class adds `classify`, the
    batching behind `attention_maps`, `export` (the serving SavedModel), and
    a config that is the constructor's arguments in their order
    (`augmentation` saved as the layers' configs).

    Example:

    >>> from keras_attention.models.image_classification.swin_transformer import SwinTransformer
    >>> model = SwinTransformer(image_size=8, patch_size=2, num_classes=2, embed_dim=8,
    ...     depths=(1,), num_heads=(2,), window_size=4)
    >>> isinstance(model, PixelClassifier), list(model.get_config())[:3]
    (True, ['image_size', 'patch_size', 'num_classes'])
    """

    # `compile()` alone: the example script's peak rate and weight decay, and
    # integer labels, as `fit` is usually given them.
    DEFAULT_LEARNING_RATE = 2e-3
    DEFAULT_WEIGHT_DECAY = 0.05

    def default_loss(self):
        """Cross-entropy of the logits against integer class labels."""
        return keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def default_metrics(self):
        """Accuracy against integer class labels."""
        return [keras.metrics.SparseCategoricalAccuracy(name="accuracy")]

    def _make_pixel_layers(
        self, image_size, patch_size, num_classes, channels, augmentation, rescaling, class_names
    ):
        """Checks the arguments all classifiers share; makes the pixel layers; returns `(h, w)`."""
        height, width = check_pixel_classifier_arguments(
            image_size, patch_size, num_classes, channels, rescaling, class_names
        )
        self.resize, self.augmentation, self.rescale = pixel_layers(
            (height, width), augmentation, rescaling, channels
        )
        return height, width

    def _make_head(self, num_classes, layer_norm_epsilon, pooling_class, *pooling_arguments):
        """The last LayerNorm, `pooling_class(*pooling_arguments)` and the zero-initialised head."""
        self.final_norm = keras.layers.LayerNormalization(
            epsilon=layer_norm_epsilon, name="final_norm"
        )
        self.pooling_layer = pooling_class(*pooling_arguments, name="pooling")
        # float32 logits even under mixed precision: a stable softmax and loss.
        self.head = keras.layers.Dense(
            num_classes, kernel_initializer="zeros", dtype="float32", name="head"
        )

    def _build_functional(self, channels, name, **kwargs):
        """Makes the model the graph of `forward` on float32 images `(B, H, W, channels)`."""
        images = keras.Input(shape=(None, None, channels), dtype="float32", name="images")
        super().__init__(images, self.forward(images), name=name, **kwargs)

    def _pixels(self, images, training):
        """Raw pixels -> resized, (while training) augmented, rescaled `(B, h, w, C)`."""
        x = self.resize(images)  # (B, h, w, C)
        if self.augmentation is not None:
            x = self.augmentation(x, training=training)
        return self.rescale(x)

    @staticmethod
    def _run_blocks(blocks, x, training, scores):
        """Runs `blocks` in turn; appends each one's attention to `scores` unless it is None."""
        for block in blocks:
            if scores is None:
                x = block(x, training=training)
            else:
                x, block_scores = block(x, training=training, return_attention_scores=True)
                scores.append(block_scores)
        return x

    def _logits(self, x, scores):
        """The encoder output -> logits `(B, num_classes)`; with `scores` (a list) both."""
        logits = self.head(self.pooling_layer(self.final_norm(x)))  # (B, D) -> (B, classes)
        return logits if scores is None else (logits, scores)

    def image_tokens(self, images, training=None):
        """The encoder's last tokens, normalised: one a patch `(B, h * w, D)`, row-major.

        What a decoder attends to when this classifier is its pretrained
        image encoder (a captioner's): the tokens the head pools, without a
        class token, laid out over `token_grid`. Raw pixels go in, resized
        and normalised as for `classify`.

        Example:

        >>> import numpy as np
        >>> from keras_attention.models import VisionTransformer
        >>> model = VisionTransformer(image_size=(8, 12), patch_size=4, num_classes=2,
        ...     hidden_dim=8, num_layers=1, num_heads=2, mlp_dim=8)
        >>> tuple(model.image_tokens(np.zeros((1, 16, 16, 3), "float32")).shape), model.token_grid
        ((1, 6, 8), (2, 3))
        """
        return self._patch_tokens(self.final_norm(self._encode(images, training, None)))

    def keep_config(self, arguments):
        """Keeps the config arguments as attributes, `image_size` as `(height, width)`.

        `augmentation` stays the layer `_make_pixel_layers` made; the config
        writes its layers back.
        """
        for name in self.config_arguments():
            if name != "augmentation":
                setattr(self, name, arguments[name])
        self.image_size = tuple(self.resize.size)
        self.class_names = None if self.class_names is None else [str(n) for n in self.class_names]

    def attention_maps(self, images, batch_size=32):
        """Every block's attention weights for `images`, as NumPy, as in inference.

        Runs `forward` with the blocks asked for their weights (a plain call
        does not keep them, so it may use the memory-efficient kernels), with
        no dropout and no augmentation.

        Args:
            images: `(B, H, W, C)` pixels in 0..255, any H and W.
            batch_size: images per forward pass.

        Returns:
            A list with one float32 array per block, first block first.
        """
        _, maps = self._run_in_batches(images, batch_size, return_attention_scores=True)
        return maps

    def classify(self, images, batch_size=32, return_attention=False, return_probabilities=False):
        """The predicted label of each image, with its probabilities on request.

        Args:
            images: `(B, H, W, C)` pixels in 0..255, any H and W.
            batch_size: images per forward pass.
            return_attention: also return the probabilities and
                `attention_maps(images)`.
            return_probabilities: also return the softmax of the logits,
                `(B, num_classes)` float32, what the exported SavedModel's
                `probabilities` holds.

        Returns:
            `labels`, a `(B,)` NumPy array of class names (str) when the
            model has `class_names`, else of class indices (int); with
            `return_probabilities=True`, `(labels, probabilities)`; with
            `return_attention=True` (whether or not probabilities are asked
            for), `(labels, probabilities, attention_maps)`.

        Example:

        >>> import numpy as np
        >>> from keras_attention.models import VisionTransformer
        >>> model = VisionTransformer(image_size=8, patch_size=4, num_classes=2,
        ...     hidden_dim=8, num_layers=1, num_heads=2, mlp_dim=8, class_names=["cat", "dog"])
        >>> images = np.random.default_rng(0).uniform(0, 255, (3, 10, 12, 3))
        >>> labels, probabilities = model.classify(images, return_probabilities=True)
        >>> labels.shape, probabilities.shape, bool(np.allclose(probabilities.sum(-1), 1))
        ((3,), (3, 2), True)
        >>> labels, probabilities, maps = model.classify(images, return_attention=True)
        >>> len(maps), maps[0].shape  # one map per block: (B, heads, 1 + N, 1 + N)
        (1, (3, 2, 5, 5))
        """
        images = checked_pixel_batch(images, self.channels, "classify")
        logits, maps = self._run_in_batches(images, batch_size, return_attention)
        indices = np.argmax(logits, axis=-1)
        labels = indices if self.class_names is None else np.asarray(self.class_names)[indices]
        if not (return_probabilities or return_attention):
            return labels
        probabilities = np.exp(logits - logits.max(-1, keepdims=True))
        probabilities /= probabilities.sum(-1, keepdims=True)
        if not return_attention:
            return labels, probabilities
        return labels, probabilities, maps

    def export(self, filepath, class_names=None, *, logits=False, **kwargs):
        """Writes a SavedModel that classifies raw pixels: `ka.serving.export_image_classifier`.

        `model.export(path)` writes `serving_default` (float32 pixels 0..255
        of any size, resized inside), `serving_uint8` (uint8 pixels, as
        images are stored) and `serving_bytes` (encoded JPEG/PNG), each
        returning `probabilities` `(B, num_classes)` and `labels` `(B,)`
        string, as `classify(images, return_probabilities=True)` answers.
        The labels are `class_names`, by default the model's own; a model
        without class names serves its class indices as strings ("0",
        "1", ...), as `classify` returns indices. keras' own `export` of
        this model serves the bare graph (float32 pixels in, logits out,
        no checks, no labels): `logits=True` writes that one, with
        `**kwargs` (`format`, `verbose`, `input_signature`, ...) going to
        `keras.Model.export`.

        Args:
            filepath: folder to write the SavedModel to.
            class_names: the `num_classes` label strings, in output order;
                default: the model's `class_names`.
            logits: write keras' pixels-to-logits export instead.

        Returns:
            `filepath` as a string (None with `logits`, as keras returns).

        Example:

        >>> import os, tempfile
        >>> import numpy as np
        >>> import tensorflow as tf
        >>> from keras_attention.models import VisionTransformer
        >>> model = VisionTransformer(image_size=8, patch_size=4, num_classes=2,
        ...     hidden_dim=8, num_layers=1, num_heads=2, mlp_dim=8, class_names=["cat", "dog"])
        >>> pixels = np.random.default_rng(0).integers(0, 256, (3, 10, 12, 3), dtype=np.uint8)
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     serve = tf.saved_model.load(model.export(folder)).signatures["serving_uint8"]
        ...     served = serve(images=tf.constant(pixels))
        >>> labels, probabilities = model.classify(pixels, return_probabilities=True)
        >>> [label.decode() for label in served["labels"].numpy()] == list(labels)
        True
        >>> bool(np.allclose(served["probabilities"].numpy(), probabilities, atol=1e-5))
        True
        """
        if logits:
            return keras.Model.export(self, filepath, **kwargs)
        if kwargs:
            raise ValueError(
                f"{type(self).__name__}.export writes an image classifier: export(path) with "
                "the model's class names, export(path, class_names) or "
                "ka.serving.export_image_classifier; export(path, logits=True) writes keras' "
                f"pixels-to-logits graph. Received: other arguments {sorted(kwargs)}"
            )
        # Serving sits above the models: imported here.
        from keras_attention.serving.image_classification_export import export_image_classifier

        return export_image_classifier(self, filepath, class_names)

    def _run_in_batches(self, images, batch_size, return_attention_scores):
        check_positive_int("batch_size", batch_size)
        images = np.asarray(images, "float32")
        if images.ndim != 4 or len(images) == 0:
            raise ValueError(
                "`images` must be (batch, height, width, channels) with at least one image. "
                f"Received: images.shape={images.shape}"
            )
        # Plain calls, not `predict`: a few images do not pay for a compilation.
        logits, maps = [], []
        for start in range(0, len(images), batch_size):
            batch = images[start : start + batch_size]
            if return_attention_scores:
                batch_logits, batch_maps = self.forward(
                    batch, training=False, return_attention_scores=True
                )
                maps.append([_as_numpy(m) for m in batch_maps])
            else:
                batch_logits = self.forward(batch, training=False)
            logits.append(_as_numpy(batch_logits))
        if not return_attention_scores:
            return np.concatenate(logits), None
        per_block = [np.concatenate([b[i] for b in maps]) for i in range(len(self.encoder_blocks))]
        return np.concatenate(logits), per_block

    def get_config(self):
        # The constructor's arguments in their order, then `name` and `trainable`.
        config = {name: getattr(self, name) for name in self.config_arguments()}
        config["augmentation"] = augmentation_config(self.augmentation)
        return {**config, "name": self.name, "trainable": self.trainable}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if config.get("augmentation"):
            config["augmentation"] = [
                keras.saving.deserialize_keras_object(layer) for layer in config["augmentation"]
            ]
        return cls(**config)


def _as_numpy(tensor):
    return ops.convert_to_numpy(ops.cast(tensor, "float32"))
