"""`TransformerEncoderBlock` under keras-hub's class name, `TransformerEncoder`."""

import keras

from keras_attention.layers.transformer.transformer_encoder_block import TransformerEncoderBlock


@keras.saving.register_keras_serializable(package="keras_attention")
class TransformerEncoder(TransformerEncoderBlock):
    """`TransformerEncoderBlock` named as `keras_hub.layers.TransformerEncoder`.

    Keras files a layer's weights in a `.weights.h5` file under its class
    name (`layers/transformer_encoder/...`). A model built with this class
    therefore loads weights saved from the same model built with keras-hub's
    `TransformerEncoder`, which `TransformerEncoderBlock` (filed under
    `transformer_encoder_block`) cannot. In every other respect it is
    `TransformerEncoderBlock`, which already takes keras-hub's argument
    names (`normalize_first`, ...).

    Args:
        The arguments of `TransformerEncoderBlock`, `num_key_value_heads`
        (grouped-query attention, which keras-hub's class lacks) included.

    Example:

    >>> import os, tempfile
    >>> import keras, keras_hub, numpy as np
    >>> from keras_attention.layers.transformer.transformer_encoder import TransformerEncoder
    >>> def model(encoder_class):
    ...     inputs = keras.Input((5, 16))
    ...     return keras.Model(inputs, encoder_class(num_heads=2, intermediate_dim=32)(inputs))
    >>> theirs, ours = model(keras_hub.layers.TransformerEncoder), model(TransformerEncoder)
    >>> path = os.path.join(tempfile.mkdtemp(), "encoder.weights.h5")
    >>> theirs.save_weights(path)
    >>> ours.load_weights(path)
    >>> x = np.random.rand(2, 5, 16).astype("float32")
    >>> bool(np.allclose(ours(x), theirs(x), atol=1e-5))
    True
    """
