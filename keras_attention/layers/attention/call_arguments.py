"""A layer's call arguments by name, for methods keras calls with the same arguments."""

import inspect


def call_arguments(call, args, kwargs):
    """The arguments `call(*args, **kwargs)` would get, by name, defaults filled in.

    Keras calls a layer's `compute_output_spec` with the arguments of its
    `call`; binding them to `call`'s signature keeps one list of arguments,
    and a wrong argument is refused as `call` would refuse it.

    Args:
        call: a function or bound method, usually a layer's `call`.
        args: the positional arguments.
        kwargs: the keyword arguments.

    Returns:
        A dict from every parameter name of `call` to its value.

    Example:

    >>> from keras_attention.layers.attention.call_arguments import call_arguments
    >>> def call(inputs, mask=None, training=None):
    ...     pass
    >>> call_arguments(call, ("x",), {"training": True})
    {'inputs': 'x', 'mask': None, 'training': True}
    """
    bound = inspect.signature(call).bind(*args, **kwargs)
    bound.apply_defaults()
    return dict(bound.arguments)
