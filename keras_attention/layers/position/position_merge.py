"""How a position layer combines its encoding with the input: return, add or concatenate."""

import keras
from keras import ops

from keras_attention.validation import check_choice

MERGE_MODES = (None, "add", "concat")


def validate_merge(merge, concat_dim):
    """Checks the `merge` / `concat_dim` pair shared by the position layers."""
    check_choice("merge", merge, MERGE_MODES)
    if concat_dim is None:
        return
    if merge != "concat":
        raise ValueError(
            "`concat_dim` is only used with merge='concat'. "
            f"Received: concat_dim={concat_dim!r}, merge={merge!r}"
        )
    if isinstance(concat_dim, bool) or not isinstance(concat_dim, int) or concat_dim <= 0:
        raise ValueError(
            f"`concat_dim` must be a positive integer. Received: concat_dim={concat_dim!r}"
        )


def encoding_width(input_dim, merge, concat_dim):
    """Width of the encoding: the input width, or `concat_dim` when concatenating."""
    if merge == "concat" and concat_dim is not None:
        return concat_dim
    if input_dim is None:
        raise ValueError(
            "The last (feature) dimension of the input must be known. "
            f"Received: input feature dimension={input_dim}"
        )
    return input_dim


def check_encoding_width(width, multiple, encoding):
    """Raise a ValueError unless `width` is a multiple of `multiple` (2: even).

    `encoding` names the encoding in the message, e.g. "sinusoidal encoding".
    """
    if width % multiple:
        expected = "even" if multiple == 2 else f"a multiple of {multiple}"
        raise ValueError(
            f"The {encoding} width (the input feature dimension unless merge='concat' "
            f"sets concat_dim) must be {expected}. Received: dim={width}"
        )


def merged_shape(input_shape, merge, encoding_dim):
    """Output shape of `merge_encoding` for an input of `input_shape`."""
    input_shape = tuple(input_shape)
    if merge == "add":
        return input_shape
    if merge is None:
        return input_shape[:-1] + (encoding_dim,)
    width = None if input_shape[-1] is None else input_shape[-1] + encoding_dim
    return input_shape[:-1] + (width,)


def merge_encoding(inputs, encoding, merge):
    """Returns the encoding, `inputs + encoding` or `[inputs, encoding]`.

    `encoding` has the shape of one example (every axis of `inputs` but the
    batch, with its own last width) and is broadcast over the batch.
    """
    encoding = encoding[None]  # (1, ..., E)
    if merge == "add":
        return inputs + encoding
    shape = tuple(ops.shape(inputs)[:-1]) + (ops.shape(encoding)[-1],)
    encoding = ops.broadcast_to(encoding, shape)  # (B, ..., E)
    if merge is None:
        return encoding
    return ops.concatenate([inputs, encoding], axis=-1)  # (B, ..., D + E)


class MergedPositionLayer(keras.layers.Layer):
    """Base of the position layers: the `merge` / `concat_dim` arguments and their shapes.

    A subclass computes its encoding and hands it to `merge_encoding(inputs,
    encoding, self.merge)`; this base checks the two arguments, keeps Keras
    masks flowing, gives the output shape and saves both in the config.

    Args:
        merge: None (return the encoding), "add" or "concat".
        concat_dim: width of the encoding with merge="concat" (default: the
            input's width).
        **kwargs: base layer arguments (`name`, `dtype`, ...).
    """

    def __init__(self, merge=None, concat_dim=None, **kwargs):
        super().__init__(**kwargs)
        validate_merge(merge, concat_dim)
        self.merge = merge
        self.concat_dim = concat_dim
        self.supports_masking = True

    def compute_output_shape(self, input_shape):
        encoding_dim = encoding_width(input_shape[-1], self.merge, self.concat_dim)
        return merged_shape(input_shape, self.merge, encoding_dim)

    def get_config(self):
        return {**super().get_config(), "merge": self.merge, "concat_dim": self.concat_dim}
