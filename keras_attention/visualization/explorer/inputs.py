"""Checking what the explorer pages are given: examples, tokens, weights and images."""

from collections.abc import Mapping

import numpy as np

from keras_attention.visualization._labels import as_labels
from keras_attention.visualization._overlay import as_display_image


def as_examples(examples):
    """A non-empty list of example dicts (one dict alone is a batch of one)."""
    if isinstance(examples, Mapping):
        examples = [examples]
    if isinstance(examples, (str, bytes)) or not hasattr(examples, "__len__") or not examples:
        raise ValueError(
            "Expected `examples` to be a non-empty list of dicts, one per example. "
            f"Received: examples={examples!r:.200}"
        )
    for index, example in enumerate(examples):
        if not isinstance(example, Mapping):
            raise ValueError(
                f"Expected `examples[{index}]` to be a dict. "
                f"Received: type(examples[{index}])={type(example).__name__}"
            )
    return list(examples)


def field(examples, index, key, default=KeyError):
    """`examples[index][key]`, or `default`, or a ValueError naming the missing key."""
    example = examples[index]
    if key in example and example[key] is not None:
        return example[key]
    if default is KeyError:
        raise ValueError(
            f"Expected `examples[{index}]` to have the key {key!r}. "
            f"Received: keys={sorted(example)}"
        )
    return default


def tokens(examples, index, key):
    """The strings of `examples[index][key]`, non-empty."""
    return as_labels(field(examples, index, key), f"examples[{index}][{key!r}]")


def weights(examples, index, key, shape, description):
    """`examples[index][key]` as a finite, non-negative float array of `shape`.

    `None` in `shape` matches any size; `description` names the axes in the
    error message, e.g. "(layers, heads, len(target_tokens), len(source_tokens))".
    """
    name = f"examples[{index}][{key!r}]"
    array = np.asarray(field(examples, index, key), dtype="float64")
    matches = array.ndim == len(shape) and all(
        expected is None or size == expected for size, expected in zip(array.shape, shape)
    )
    if not matches or 0 in array.shape:
        shown = "(" + ", ".join("?" if size is None else str(size) for size in shape) + ")"
        raise ValueError(
            f"Expected `{name}` to have shape {description} = {shown}, no empty axis. "
            f"Received: {name}.shape={array.shape}"
        )
    if not np.all(np.isfinite(array)) or np.any(array < 0.0):
        finite = array[np.isfinite(array)]
        low = finite.min() if finite.size else None
        raise ValueError(
            f"Expected `{name}` to hold finite, non-negative attention weights. "
            f"Received: {array.size - finite.size} non-finite values, smallest finite value {low}"
        )
    return array


def image_pixels(examples, index, key="image"):
    """`examples[index][key]` as (H, W, 3) uint8 pixels (grayscale repeated)."""
    name = f"examples[{index}][{key!r}]"
    display = as_display_image(field(examples, index, key), name)
    if not np.all(np.isfinite(display)):
        raise ValueError(f"Expected `{name}` to hold finite pixel values. Received: NaN or inf")
    if display.ndim == 2:
        display = np.repeat(display[..., None], 3, axis=-1)  # (H, W, 3)
    return np.round(display * 255.0).astype("uint8")
