"""The constructor arguments and the input check that the self-attention layers share.

`SelfAttention` (over a sequence) and `SpatialSelfAttention` (over a feature
map) take the heads' arguments (`HEAD_ARGUMENTS` and their own), a kernel
`implementation` and the projections' initializers and regularizers; they
check, keep and write back these alike, and take one input whose rank is
theirs and whose last axis (the features) is known.
"""

from keras_attention.layers.attention.projection_settings import projection_settings_config
from keras_attention.layers.attention.projection_settings import set_projection_settings
from keras_attention.ops.attention import check_implementation
from keras_attention.validation import keep_checked_arguments
from keras_attention.validation import kept_arguments


def keep_self_attention_arguments(layer, arguments, checks):
    """Checks a self-attention layer's constructor arguments and keeps them on `layer`.

    Args:
        layer: the layer under construction.
        arguments: its constructor's arguments by name (its `locals()`):
            those of `checks`, `implementation`, `kernel_initializer`,
            `bias_initializer`, `kernel_regularizer` and `bias_regularizer`.
        checks: `{name: check}` of the arguments kept as they are, as
            `keras_attention.validation.keep_checked_arguments` takes them.

    Raises:
        ValueError: naming the first argument that is not valid.

    Example:

    >>> import keras
    >>> from keras_attention.layers.attention.self_attention_common import (
    ...     keep_self_attention_arguments)
    >>> from keras_attention.validation import check_positive_int
    >>> layer = keras.layers.Layer()
    >>> keep_self_attention_arguments(
    ...     layer,
    ...     dict(num_heads=2, implementation="auto", kernel_initializer="zeros",
    ...          bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None),
    ...     {"num_heads": check_positive_int})
    >>> layer.num_heads, layer.implementation, type(layer.kernel_initializer).__name__
    (2, 'auto', 'Zeros')
    """
    check_implementation(arguments["implementation"])
    keep_checked_arguments(layer, arguments, checks)
    layer.implementation = arguments["implementation"]
    set_projection_settings(
        layer,
        (arguments["kernel_initializer"], arguments["bias_initializer"]),
        (arguments["kernel_regularizer"], arguments["bias_regularizer"]),
    )


def self_attention_arguments_config(layer, checks):
    """The arguments `keep_self_attention_arguments` kept, as `get_config` writes them."""
    return {
        **kept_arguments(layer, checks),
        "implementation": layer.implementation,
        **projection_settings_config(layer),
    }


def checked_input_shape(input_shape, rank, expected):
    """`input_shape` as a tuple, once it has `rank` axes and a known last axis.

    Args:
        input_shape: the shape `build` receives.
        rank: the number of axes the layer takes.
        expected: what the input must be, for the message, as in
            "(batch, length, features) with known features".

    Raises:
        ValueError: "`inputs` must be {expected}", with the shape received.

    Example:

    >>> from keras_attention.layers.attention.self_attention_common import (
    ...     checked_input_shape)
    >>> checked_input_shape([None, 5, 8], 3, "(batch, length, features)")
    (None, 5, 8)
    >>> checked_input_shape((2, 5), 3, "(batch, length, features)")
    Traceback (most recent call last):
    ...
    ValueError: `inputs` must be (batch, length, features). Received: input_shape=(2, 5)
    """
    input_shape = tuple(input_shape)
    if len(input_shape) != rank or input_shape[-1] is None:
        raise ValueError(f"`inputs` must be {expected}. Received: input_shape={input_shape}")
    return input_shape
