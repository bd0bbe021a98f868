"""The captioner the flags describe, built and compiled for training, and its export.

Example:

>>> from keras_attention.tasks.captioning.flags import (
...     build_captioning_parser, with_captioner_defaults)
>>> from keras_attention.tasks.captioning.model_from_flags import captioner_from_arguments
>>> args = with_captioner_defaults(build_captioning_parser().parse_args(
...     ["--model", "transformer", "--image-size", "32", "--hidden-dim", "16"]))
>>> model = captioner_from_arguments(args, vocabulary_size=20, max_length=8)
>>> type(model).__name__, model.optimizer is not None
('TransformerCaptioner', True)
"""

import keras

from keras_attention.losses.masked_cross_entropy import masked_sparse_categorical_crossentropy
from keras_attention.metrics.masked_accuracy import MaskedSparseCategoricalAccuracy
from keras_attention.models.captioning.captioner_builder import build_captioner
from keras_attention.models.captioning.vit_captioner import ViTCaptioner
from keras_attention.serving.captioning_export import export_captioner
from keras_attention.tasks.captioning.flags import captioner_options


def captioner_from_arguments(args, vocabulary_size, max_length):
    """The `--model` captioner with the sizes of the flags, compiled for teacher forcing.

    The learning rate starts at 0: the recipe's `learning_rate_schedule()`
    callback sets it at every step (warm-up, hold, then decay once the
    validation loss stalls).

    Args:
        args: the parsed flags, with the model's defaults.
        vocabulary_size: token ids of the caption vocabulary.
        max_length: tokens per caption, the start and end tokens included.

    Returns:
        the compiled captioner; with `--init-from`, a `ViTCaptioner` on the
        checkpoint's image encoder (`ViTCaptioner.from_preset`).
    """
    if getattr(args, "init_from", None):
        print(f"starting the image encoder from {args.init_from}")
        model = ViTCaptioner.from_preset(
            args.init_from,
            image_size=args.image_size,
            vocabulary_size=vocabulary_size,
            max_caption_length=max_length,
            # The Transformer captioners' feed-forward width, as build_captioner gives it.
            intermediate_dim=2 * args.hidden_dim,
            **captioner_options(args),
        )
    else:
        model = build_captioner(args.model, vocabulary_size, max_length, **captioner_options(args))
    model.compile(
        optimizer=keras.optimizers.Adam(0.0),
        loss=masked_sparse_categorical_crossentropy,
        metrics=[MaskedSparseCategoricalAccuracy()],
    )
    return model


def captioner_export_writer(model, encoder, max_length, args):
    """A function that writes the captioner's SavedModel into the folder it is given."""

    def write(folder):
        export_captioner(model, folder, encoder, max_length, args.beam_width)

    return write
