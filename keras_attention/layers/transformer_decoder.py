"""`TransformerDecoderBlock` under keras-hub's class name, `TransformerDecoder`."""

import keras

from keras_attention.layers.transformer_decoder_block import TransformerDecoderBlock


@keras.saving.register_keras_serializable(package="keras_attention")
class TransformerDecoder(TransformerDecoderBlock):
    """`TransformerDecoderBlock` named as `keras_hub.layers.TransformerDecoder`.

    Keras files a layer's weights in a `.weights.h5` file under its class
    name (`layers/transformer_decoder/...`). A model built with this class
    therefore loads weights saved from the same model built with keras-hub's
    `TransformerDecoder`, which `TransformerDecoderBlock` (filed under
    `transformer_decoder_block`) cannot. In every other respect it is
    `TransformerDecoderBlock`, which already takes keras-hub's argument and
    call names (`normalize_first`, `decoder_sequence`, `encoder_sequence`,
    the caches, ...).

    Args:
        The arguments of `TransformerDecoderBlock`.

    Example:

    >>> import os, tempfile
    >>> import keras, keras_hub, numpy as np
    >>> from keras_attention.layers.transformer_decoder import TransformerDecoder
    >>> def model(decoder_class):
    ...     tokens, context = keras.Input((4, 16)), keras.Input((6, 16))
    ...     outputs = decoder_class(num_heads=2, intermediate_dim=32)(tokens, context)
    ...     return keras.Model([tokens, context], outputs)
    >>> theirs, ours = model(keras_hub.layers.TransformerDecoder), model(TransformerDecoder)
    >>> path = os.path.join(tempfile.mkdtemp(), "decoder.weights.h5")
    >>> theirs.save_weights(path)
    >>> ours.load_weights(path)
    >>> x = [np.random.rand(2, 4, 16).astype("float32"), np.random.rand(2, 6, 16).astype("float32")]
    >>> bool(np.allclose(ours(x), theirs(x), atol=1e-5))
    True
    """
