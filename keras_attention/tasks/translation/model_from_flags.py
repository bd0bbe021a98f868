"""The translator the flags describe, built and compiled for training, and its export.

`translator_from_arguments` builds a `transformer_translator` or an
`rnn_attention_translator` from the parsed flags; `compile_translator`
compiles it with Adam on a warm-up and cosine schedule, the masked
cross-entropy and the masked accuracy (padding does not count).

Example:

>>> from keras_attention.tasks.translation.flags import parse_translation_arguments
>>> from keras_attention.tasks.translation.model_from_flags import translator_from_arguments
>>> args = parse_translation_arguments(["--model", "rnn", "--hidden-dim", "8"])
>>> model = translator_from_arguments(args, source_vocabulary_size=30, target_vocabulary_size=40)
>>> type(model).__name__, model.output_shape
('RNNAttentionTranslator', (None, None, 40))
"""

import keras

from keras_attention.losses.masked_cross_entropy import masked_sparse_categorical_crossentropy
from keras_attention.metrics.masked_accuracy import MaskedSparseCategoricalAccuracy
from keras_attention.models.translation.rnn_attention_translator import rnn_attention_translator
from keras_attention.models.translation.transformer_translator import TransformerTranslator
from keras_attention.models.translation.transformer_translator import transformer_translator
from keras_attention.serving.translation_export import export_translator
from keras_attention.tasks.learning_rate_schedule import warmup_cosine_decay
from keras_attention.training import command_line as cli
from keras_attention.validation import check_positive_int


def translator_from_arguments(args, source_vocabulary_size, target_vocabulary_size):
    """The translator of `args.model`, sized by the flags.

    The Transformer's feed-forward width is twice `args.hidden_dim`, its
    sequences `args.max_length` long; the RNN's embeddings are half its
    units, and Luong-style attention brings input feeding.

    Args:
        args: the parsed flags (`parse_translation_arguments`).
        source_vocabulary_size, target_vocabulary_size: the vocabularies' sizes.

    Returns:
        a `TransformerTranslator` or `RNNAttentionTranslator`; with
        `args.init_from`, the checkpoint's `TransformerTranslator`.
    """
    if getattr(args, "init_from", None):
        print(f"starting from {args.init_from}")
        return TransformerTranslator.from_preset(args.init_from, dropout=args.dropout)
    if args.model == "transformer":
        return transformer_translator(
            source_vocabulary_size=source_vocabulary_size,
            target_vocabulary_size=target_vocabulary_size,
            max_source_length=args.max_length,
            max_target_length=args.max_length,
            intermediate_dim=2 * args.hidden_dim,
            **cli.flag_values(
                args, "hidden_dim", "num_layers", "num_heads", "num_key_value_heads", "dropout"
            ),
        )
    if args.model != "rnn":
        raise ValueError(f"`args.model` must be 'transformer' or 'rnn'. Received: {args.model!r}")
    return rnn_attention_translator(
        source_vocabulary_size=source_vocabulary_size,
        target_vocabulary_size=target_vocabulary_size,
        embedding_dim=args.hidden_dim // 2,
        units=args.hidden_dim,
        cell=args.cell,
        attention=args.attention,
        attention_style=args.attention_style,
        input_feeding=args.attention_style == "luong",
        location_features=None if args.location_features == "none" else args.location_features,
        dropout=args.dropout,
    )


def compile_translator(model, args, steps_per_epoch, jit_compile=True):
    """Compiles `model` for `args.epochs` epochs of `steps_per_epoch` steps.

    Linear warm-up over the first tenth of training up to
    `args.learning_rate`, then cosine decay to 0 at the last step.

    Args:
        model: a translator.
        args: the parsed flags, with `epochs` and `learning_rate` set.
        steps_per_epoch: optimizer steps per epoch.
        jit_compile: compile the training step with XLA.

    Example:

    >>> from keras_attention.tasks.translation.flags import parse_translation_arguments
    >>> from keras_attention.tasks.translation import model_from_flags as arguments
    >>> args = parse_translation_arguments(["--hidden-dim", "8", "--max-length", "6",
    ...                                     "--num-layers", "1", "--epochs", "2"])
    >>> model = arguments.translator_from_arguments(args, 30, 40)
    >>> arguments.compile_translator(model, args, steps_per_epoch=50)
    >>> rates = []
    >>> for step in (0, 10, 100):  # 100 steps: 10 of warm-up, then the decay
    ...     _ = model.optimizer.iterations.assign(step)
    ...     rates.append(round(float(model.optimizer.learning_rate), 6))
    >>> rates
    [0.0, 0.002, 0.0]
    """
    check_positive_int("steps_per_epoch", steps_per_epoch)
    total_steps = max(1, args.epochs * steps_per_epoch)
    schedule = warmup_cosine_decay(args.learning_rate, total_steps, max(1, total_steps // 10))
    model.compile(
        optimizer=keras.optimizers.Adam(schedule),
        loss=masked_sparse_categorical_crossentropy,
        metrics=[MaskedSparseCategoricalAccuracy()],
        jit_compile=jit_compile,
    )


def translator_export_writer(model, encoders, args):
    """A function that writes the translator's SavedModel into the folder it is given.

    Strings in, translations out, with the beam width and lengths of the flags.
    """

    def write(folder):
        export_translator(
            model,
            folder,
            *encoders,
            max_source_length=args.max_length,
            max_target_length=args.max_length,
            beam_width=args.beam_width,
        )

    return write
