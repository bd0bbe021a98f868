"""Decoding a batch of any size as fixed-size groups, inside a serving graph."""

import tensorflow as tf

from keras_attention.generation.beam_search import beam_search
from keras_attention.generation.greedy_search import greedy_search


def decode_in_groups(
    decoder,
    inputs,
    start_id,
    end_id,
    max_length,
    attention_shape,
    group_size,
    beam_width=1,
    length_penalty=0.6,
):
    """Greedy (`beam_width=1`) or beam search over `inputs`, `group_size` examples at a time.

    The batch is padded to whole groups and `tf.map_fn` decodes one group
    after the other, so a serving signature with a free batch size runs one
    compiled search program whatever the number of requests.

    Args:
        decoder: a model that implements the decoding protocol (a
            translator), or the `DecoderAdapter` of one that does not.
        inputs: `(B, ...)` tensor with known trailing dimensions: source ids
            or images.
        start_id, end_id: the start and end token ids.
        max_length: number of tokens decoded.
        attention_shape: tuple, the shape of one step's attention (source
            positions, or the feature grid).
        group_size: examples decoded together.
        beam_width: 1 for greedy search, more for beam search.
        length_penalty: beam search's length penalty.

    Returns:
        tokens `(B, max_length)` int32 and attention
        `(B, max_length, *attention_shape)` float32.

    Example:

    >>> import tensorflow as tf
    >>> from keras_attention.models.translation.transformer_translator import transformer_translator
    >>> model = transformer_translator(
    ...     source_vocabulary_size=12, target_vocabulary_size=10, max_source_length=6,
    ...     max_target_length=5, hidden_dim=8, num_layers=1, num_heads=2, intermediate_dim=16)
    >>> sources = tf.constant([[3, 4, 5, 0, 0, 0]] * 3)  # 3 requests, groups of 2
    >>> tokens, attention = decode_in_groups(
    ...     model, sources, 1, 2, 5, (6,), group_size=2)
    >>> tuple(tokens.shape), tuple(attention.shape)
    ((3, 5), (3, 5, 6))
    """
    attention_shape = tuple(attention_shape)

    def decode_group(group):  # (C, ...) -> (C, L), (C, L, *A)
        if beam_width == 1:
            return greedy_search(decoder, group, start_id, end_id, max_length)
        tokens, attention, _ = beam_search(
            decoder,
            group,
            start_id,
            end_id,
            max_length,
            beam_width=int(beam_width),
            length_penalty=float(length_penalty),
        )
        return tokens, attention

    count = tf.shape(inputs)[0]
    padded_count = -(-count // group_size) * group_size
    paddings = [[0, padded_count - count]] + [[0, 0]] * (inputs.shape.rank - 1)
    trailing = inputs.shape[1:].as_list()
    groups = tf.reshape(tf.pad(inputs, paddings), [-1, group_size] + trailing)  # (G, C, ...)
    tokens, attention = tf.map_fn(
        decode_group,
        groups,
        fn_output_signature=(
            tf.TensorSpec((group_size, max_length), tf.int32),
            tf.TensorSpec((group_size, max_length) + attention_shape, tf.float32),
        ),
    )  # (G, C, L), (G, C, L, *A)
    tokens = tf.reshape(tokens, (-1, max_length))[:count]  # (B, L)
    attention = tf.reshape(attention, (-1, max_length) + attention_shape)[:count]  # (B, L, *A)
    return tokens, attention
