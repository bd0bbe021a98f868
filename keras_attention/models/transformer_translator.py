"""The Transformer translator: an encoder over the source, a decoder over the target.

Vaswani et al., "Attention Is All You Need" (https://arxiv.org/abs/1706.03762).
"""

import keras
from keras import ops

from keras_attention.layers.token_and_position_embedding import TokenAndPositionEmbedding
from keras_attention.layers.transformer_decoder_block import TransformerDecoderBlock
from keras_attention.layers.transformer_encoder_block import TransformerEncoderBlock

# Stable layer names: decoding (keras_attention.generation) finds layers by them,
# also in a model re-loaded from a `.keras` file.
SOURCE_EMBEDDING = "source_embedding"
TARGET_EMBEDDING = "target_embedding"
ENCODER_BLOCK_PREFIX = "encoder_block_"
DECODER_BLOCK_PREFIX = "decoder_block_"
ENCODER_FINAL_NORM = "encoder_final_norm"
DECODER_FINAL_NORM = "decoder_final_norm"
LOGITS = "logits"
PADDING_ID = 0


def _check_positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"`{name}` must be a positive integer. Received: {name}={value!r}")


def _check_rate(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
        raise ValueError(f"`{name}` must be a float in [0, 1). Received: {name}={value!r}")


def transformer_translator(
    *,
    source_vocabulary_size,
    target_vocabulary_size,
    max_source_length,
    max_target_length,
    hidden_dim=128,
    num_layers=2,
    num_heads=4,
    intermediate_dim=512,
    dropout=0.1,
    norm_first=False,
    name="transformer_translator",
):
    """Builds an encoder-decoder Transformer for sequence-to-sequence translation.

    The model of Vaswani et al. 2017 (https://arxiv.org/abs/1706.03762),
    trained with teacher forcing:

        source ids (B, S) -> token + learned position embedding, dropout
            -> num_layers encoder blocks (self-attention over source tokens)
        target ids (B, T) -> token + learned position embedding, dropout
            -> num_layers decoder blocks (causal self-attention, then
               cross-attention on the last encoder output)
            -> Dense(target_vocabulary_size) logits (B, T, V), float32

    Id 0 is padding in both inputs: padded source tokens are hidden from
    every attention, so they do not change the logits. With `norm_first=True`
    the blocks are pre-norm and a final LayerNorm closes each stack.

    The layers have stable names (`"source_embedding"`, `"encoder_block_0"`,
    `"target_embedding"`, `"decoder_block_0"`, `"logits"`, ...) that
    `keras_attention.generation.decoder_for_model` uses to decode one token
    at a time with key/value caches.

    Args:
        source_vocabulary_size: number of source token ids.
        target_vocabulary_size: number of target token ids.
        max_source_length: longest source sequence (rows of its position table).
        max_target_length: longest target sequence, also the longest decoding.
        hidden_dim: width of the embeddings and of every block.
        num_layers: number of encoder blocks and of decoder blocks.
        num_heads: attention heads; must divide `hidden_dim`.
        intermediate_dim: width of the MLP hidden layer in each block.
        dropout: dropout after the embeddings, in the blocks and on attention.
        norm_first: pre-norm blocks (plus final norms) when True, post-norm
            (the paper) when False.
        name: name of the model.

    Returns:
        A `keras.Model` taking `{"source": (B, S) int, "target": (B, T) int}`
        and returning logits `(B, T, target_vocabulary_size)` in float32.

    Example:

    >>> import keras
    >>> import numpy as np
    >>> from keras_attention.models.transformer_translator import transformer_translator
    >>> model = transformer_translator(
    ...     source_vocabulary_size=20, target_vocabulary_size=30, max_source_length=8,
    ...     max_target_length=6, hidden_dim=16, num_layers=1, num_heads=2,
    ...     intermediate_dim=32)
    >>> logits = model({"source": np.array([[5, 6, 7, 0]]), "target": np.array([[1, 9, 4]])})
    >>> tuple(logits.shape), keras.backend.standardize_dtype(logits.dtype)
    ((1, 3, 30), 'float32')
    """
    for argument, value in (
        ("source_vocabulary_size", source_vocabulary_size),
        ("target_vocabulary_size", target_vocabulary_size),
        ("max_source_length", max_source_length),
        ("max_target_length", max_target_length),
        ("hidden_dim", hidden_dim),
        ("num_layers", num_layers),
        ("num_heads", num_heads),
        ("intermediate_dim", intermediate_dim),
    ):
        _check_positive_int(argument, value)
    if hidden_dim % num_heads:
        raise ValueError(
            "`hidden_dim` must be a multiple of `num_heads`. "
            f"Received: hidden_dim={hidden_dim}, num_heads={num_heads}"
        )
    _check_rate("dropout", dropout)
    if not isinstance(norm_first, bool):
        raise ValueError(f"`norm_first` must be True or False. Received: norm_first={norm_first!r}")

    source = keras.Input((None,), dtype="int32", name="source")
    target = keras.Input((None,), dtype="int32", name="target")
    # Explicit boolean masks (True = a real token) rather than Keras masks, so
    # that the logits carry no mask and the loss alone decides what counts.
    source_mask = ops.not_equal(source, PADDING_ID)  # (B, S)
    target_mask = ops.not_equal(target, PADDING_ID)  # (B, T)

    x = TokenAndPositionEmbedding(
        source_vocabulary_size, max_source_length, hidden_dim, name=SOURCE_EMBEDDING
    )(source)
    x = keras.layers.Dropout(dropout, name=f"{SOURCE_EMBEDDING}_dropout")(x)
    for index in range(num_layers):
        x = TransformerEncoderBlock(
            num_heads=num_heads,
            intermediate_dim=intermediate_dim,
            dropout=dropout,
            norm_first=norm_first,
            name=f"{ENCODER_BLOCK_PREFIX}{index}",
        )(x, padding_mask=source_mask)
    if norm_first:
        x = keras.layers.LayerNormalization(epsilon=1e-5, name=ENCODER_FINAL_NORM)(x)
    encoded = x

    y = TokenAndPositionEmbedding(
        target_vocabulary_size, max_target_length, hidden_dim, name=TARGET_EMBEDDING
    )(target)
    y = keras.layers.Dropout(dropout, name=f"{TARGET_EMBEDDING}_dropout")(y)
    for index in range(num_layers):
        y = TransformerDecoderBlock(
            num_heads=num_heads,
            intermediate_dim=intermediate_dim,
            dropout=dropout,
            norm_first=norm_first,
            name=f"{DECODER_BLOCK_PREFIX}{index}",
        )(y, encoded, padding_mask=target_mask, context_padding_mask=source_mask)
    if norm_first:
        y = keras.layers.LayerNormalization(epsilon=1e-5, name=DECODER_FINAL_NORM)(y)
    # float32 logits even under mixed precision: a stable softmax and loss.
    logits = keras.layers.Dense(target_vocabulary_size, dtype="float32", name=LOGITS)(y)
    return keras.Model({"source": source, "target": target}, logits, name=name)
