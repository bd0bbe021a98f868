"""Eager TensorFlow calls of a kernel with loops, run as one cached graph.

Eager TensorFlow runs `ops.fori_loop` as a Python loop that dispatches every
op of every iteration on its own. The chunked kernel's tile loop is a few
dozen small ops per tile and hundreds of tiles at 8k tokens, forward and
backward: eagerly, dispatching them cost several times the arithmetic.
Traced once into a `tf.function`, the loop runs in TensorFlow's executor as
it does under `tf.function` or `model.fit`, and the gradient tape records
one call whose backward pass is a traced graph too. The first call with new
shapes or options pays for the trace (tenths of a second forward, about a
second forward and backward on a CPU); the calls after it reuse the graph.

Calls that are traced already (`tf.function`, XLA, Keras' symbolic calls)
and other backends call the function as it is.
"""

import functools

import keras


def _eager_tensorflow():
    if keras.backend.backend() != "tensorflow":
        return False
    import tensorflow as tf

    return tf.executing_eagerly()


def graph_when_eager(function):
    """`function`, run as a cached `tf.function` when called eagerly on TensorFlow.

    `tf.function` keys its traces on the shapes and dtypes of the tensor
    (and NumPy) arguments and on the values of the others, `None` included:
    a second call with the same shapes, dtypes and options reuses the graph,
    and a mask given or not traces apart. Shapes are kept exact (no
    `reduce_retracing`) because the tiling reads static lengths.

    Args:
        function: a function of tensors and hashable Python values.

    Returns:
        a function with the same signature and results.

    Example:

    >>> import numpy as np
    >>> double = graph_when_eager(lambda x, factor: x * factor)
    >>> np.asarray(double(np.ones(2, "float32"), 2.0)).tolist()
    [2.0, 2.0]
    """
    traced = None

    @functools.wraps(function)
    def call(*args, **kwargs):
        nonlocal traced
        if not _eager_tensorflow():
            return function(*args, **kwargs)
        if traced is None:
            import tensorflow as tf

            # autograph off: the loops are explicit `ops.fori_loop`s already.
            traced = tf.function(function, autograph=False)
        return traced(*args, **kwargs)

    return call
