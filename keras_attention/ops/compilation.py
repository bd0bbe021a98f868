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


def einsum(equation, *operands):
    """`keras.ops.einsum`, as one XLA product when TensorFlow compiles with XLA.

    Keras' TensorFlow backend rewrites common equations into transposes and
    batched matmuls, which TensorFlow's graph executor runs faster than its
    einsum kernel. Under XLA the rewrite fixes the layouts of the operands and
    of the gradients' products, which XLA would otherwise choose: with them
    a MultiHeadAttention, encoder-block or ViT training step took 1.02 to
    1.07 times as long on two CPU cores. So under XLA on TensorFlow, with
    operands of one dtype, this calls `tf.einsum`, which XLA lowers to one
    dot; everywhere else it is `keras.ops.einsum`.

    Args:
        equation: the einsum equation, as for `keras.ops.einsum`.
        *operands: the tensors.

    Returns:
        the product, as `keras.ops.einsum` gives it.

    Example:

    >>> import numpy as np
    >>> a, b = np.ones((2, 3), "float32"), np.ones((3, 4), "float32")
    >>> einsum("ij,jk->ik", a, b).shape
    (2, 4)
    """
    if compiled_with_xla() and keras.backend.backend() == "tensorflow":
        dtypes = {keras.backend.standardize_dtype(operand.dtype) for operand in operands}
        if len(dtypes) == 1:
            import tensorflow as tf

            return tf.einsum(equation, *operands)
    return keras.ops.einsum(equation, *operands)
