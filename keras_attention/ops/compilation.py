"""Whether the ops being traced will be compiled by XLA.

Some formulas of the same result suit one executor better than another:
XLA fuses elementwise chains into few passes over memory, while TensorFlow's
graph executor runs each op as its own kernel and has fused kernels of its
own (softmax) that XLA does not use.
"""

import keras


def compiled_with_xla():
    """True when the current trace is compiled with XLA.

    JAX always compiles with XLA; TensorFlow does inside
    `tf.function(jit_compile=True)` (as `model.fit` with `jit_compile=True`
    uses); eager TensorFlow and PyTorch do not.

    Returns:
        bool.

    Example:

    >>> compiled_with_xla()  # eager
    False
    """
    backend = keras.backend.backend()
    if backend == "jax":
        return True
    if backend != "tensorflow":
        return False
    import tensorflow as tf
    from tensorflow.python.ops import control_flow_util

    if tf.executing_eagerly():
        return False
    return control_flow_util.GraphOrParentsInXlaContext(tf.compat.v1.get_default_graph())
