"""The initializers, regularizers and constraints of a layer's projection weights.

An attention layer takes them as `kernel_initializer`, `bias_initializer`,
`kernel_regularizer`, `bias_regularizer` and, for some, `kernel_constraint`
and `bias_constraint`; it stores them as keras objects, hands them to its
projection sublayers and writes them into its config.
"""

import keras

from keras_attention.layers.attention.base_attention import clone_initializer

# The keras module of each kind of setting, by the last word of its name.
_MODULES = {
    "initializer": keras.initializers,
    "regularizer": keras.regularizers,
    "constraint": keras.constraints,
}


def set_projection_settings(layer, initializers, regularizers, constraints=None):
    """Store (kernel, bias) pairs of arguments on `layer` as keras objects.

    Args:
        layer: the layer to set `kernel_initializer`, `bias_initializer`,
            ... on.
        initializers: (kernel_initializer, bias_initializer), anything
            `keras.initializers.get` takes.
        regularizers: (kernel_regularizer, bias_regularizer).
        constraints: None for a layer without constraints, else
            (kernel_constraint, bias_constraint).

    Example:

    >>> import keras
    >>> from keras_attention.layers.attention.projection_settings import set_projection_settings
    >>> layer = keras.layers.Layer()
    >>> set_projection_settings(layer, ("zeros", "ones"), (None, "l2"))
    >>> type(layer.bias_initializer).__name__, type(layer.bias_regularizer).__name__
    ('Ones', 'L2')
    """
    layer.kernel_initializer, layer.bias_initializer = map(keras.initializers.get, initializers)
    layer.kernel_regularizer, layer.bias_regularizer = map(keras.regularizers.get, regularizers)
    if constraints is not None:
        layer.kernel_constraint, layer.bias_constraint = map(keras.constraints.get, constraints)


def projection_settings(layer, constraints=False):
    """The settings of `layer` by argument name, as the keras objects it stores."""
    names = ["kernel_initializer", "bias_initializer", "kernel_regularizer", "bias_regularizer"]
    if constraints:
        names += ["kernel_constraint", "bias_constraint"]
    return {name: getattr(layer, name) for name in names}


def projection_settings_config(layer, constraints=False):
    """The settings of `layer`, serialized for its `get_config`."""
    return {
        name: _MODULES[name.rpartition("_")[2]].serialize(setting)
        for name, setting in projection_settings(layer, constraints).items()
    }


def projection_sublayer_kwargs(layer, constraints=False):
    """The settings of `layer` for one projection sublayer, in the layer's dtype policy.

    The initializers are cloned, so that no two sublayers share one draw.
    """
    kwargs = projection_settings(layer, constraints)
    kwargs["kernel_initializer"] = clone_initializer(layer.kernel_initializer)
    kwargs["bias_initializer"] = clone_initializer(layer.bias_initializer)
    kwargs["dtype"] = layer.dtype_policy
    return kwargs
