"""A layer's variables as NumPy arrays keyed by (sublayer, name), e.g. ("query", "kernel")."""

import keras


def sublayer_weights(layer):
    """Kernels and biases by sublayer name, read from the layer's variables."""
    found = {}
    for variable in layer.weights:
        sublayer, name = variable.path.split("/")[-2:]
        found[(sublayer, name)] = keras.ops.convert_to_numpy(variable)
    return found
