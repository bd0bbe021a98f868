"""`TransformerDecoderBlock` under keras-hub's class name, `TransformerDecoder`."""

import keras

from keras_attention.layers.transformer.transformer_decoder_block import TransformerDecoderBlock


@keras.saving.register_keras_serializable(package="keras_attention")
class TransformerDecoder(TransformerDecoderBlock):
    """`TransformerDecoderBlock` named as `keras_hub.layers.TransformerDecoder`.

    Under keras-hub's class name its weights are filed in a `.weights.h5`
    file where keras-hub's `TransformerDecoder` files them
    (`layers/transformer_decoder/...`; see `TransformerEncoder` for why the
    name matters), so weights saved from a model built with keras-hub load
    into the same model built with this class.

    Args:
        The arguments of `TransformerDecoderBlock` (`num_key_value_heads`
        for grouped-query attention included), whose call also takes
        keras-hub's names (`decoder_sequence`, `encoder_sequence`, the
        caches, ...).

    Example:

    >>> import os, tempfile
    >>> import keras, keras_hub, numpy as np
    >>> import keras_attention as ka
    >>> tokens, context = keras.Input((4, 16)), keras.Input((6, 16))
    >>> def model(decoder_class):
    ...     outputs = decoder_class(num_heads=2, intermediate_dim=32)(tokens, context)
    ...     return keras.Model([tokens, context], outputs)
    >>> theirs = model(keras_hub.layers.TransformerDecoder)
    >>> ours = model(ka.layers.TransformerDecoder)
    >>> path = os.path.join(tempfile.mkdtemp(), "decoder.weights.h5")
    >>> theirs.save_weights(path)
    >>> ours.load_weights(path)
    >>> x = [np.random.rand(2, 4, 16).astype("float32"), np.random.rand(2, 6, 16).astype("float32")]
    >>> bool(np.allclose(ours(x), theirs(x), atol=1e-5))
    True
    """
