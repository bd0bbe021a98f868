"""A checkpoint folder checked against itself before a model is built from it.

A Hugging Face folder states its architecture twice: in `config.json`
(sizes, counts, labels) and in the names and shapes of its tensors. A
reader that builds the model from the config alone would, where the two
disagree, drop a layer the weights hold or read a head of other classes
without a word (transformers names the keys it could not place).
`check_tensors` compares the two before anything is built: each run of
numbered parts (layers, blocks, stages) counted as the config counts it,
every tensor the config implies present with the shape it implies, and no
other tensor unless the caller asks to ignore them. A disagreement stops
with one line naming the files, the config key or tensor, and both values.

A family describes what its config implies as a `TensorLayout`, with sizes
from `ConfigSizes`: each is a `Size`, an int that remembers the config key
it comes from, so that a shape which does not fit names that key.

Example:

>>> import numpy as np
>>> from keras_attention.models.checkpoints.checkpoint_folders import StateDict
>>> from keras_attention.models.checkpoints.checkpoint_consistency import (
...     ConfigSizes, TensorLayout, check_tensors)
>>> sizes = ConfigSizes("vit", {"hidden_size": 4})
>>> layout = TensorLayout({"layernorm.weight": (sizes("hidden_size"),)})
>>> check_tensors("vit", StateDict({"layernorm.weight": np.ones(4)}, "model.safetensors"), layout)
>>> check_tensors("vit", StateDict({"layernorm.weight": np.ones(8)}, "model.safetensors"), layout)
Traceback (most recent call last):
...
ValueError: vit/config.json: hidden_size is 4 but model.safetensors holds layernorm.weight of
shape (8,), not (4,)
"""

import os
import re
from typing import NamedTuple

from keras_attention.models.checkpoints.checkpoint_folders import CONFIG_FILE

# What the message for tensors the config does not account for tells the user to do.
IGNORE_HINT = (
    "from_preset(..., ignore_unexpected_weights=True) (python -m keras_attention.convert "
    "--ignore-unexpected-weights) loads without them"
)


class Size(int):
    """A size a checkpoint's config implies, and why: `Size(16, "hidden_size is 16") == 16`."""

    def __new__(cls, value, reason):
        size = super().__new__(cls, value)
        size.reason = reason
        return size


class ConfigSizes:
    """The sizes of a checkpoint folder's config, as `Size`s naming their keys.

    Args:
        folder: the checkpoint folder, for the messages.
        config: its `config.json` as a dict.

    Example:

    >>> from keras_attention.models.checkpoints.checkpoint_consistency import ConfigSizes
    >>> sizes = ConfigSizes("swin", {"depths": [2, 6], "embed_dim": 96})
    >>> sizes("embed_dim").reason, sizes.item("depths", 1).reason
    ('embed_dim is 96', 'depths[1] is 6')
    >>> sizes("hidden_size")
    Traceback (most recent call last):
    ...
    ValueError: swin/config.json: no hidden_size, which the architecture needs
    """

    def __init__(self, folder, config):
        self.path = os.path.join(folder, CONFIG_FILE)
        self.config = config

    def __call__(self, key, default=None):
        """The positive int `config[key]` (or `default`, said so, where the config has none)."""
        if key not in self.config and default is not None:
            return Size(default, f"{key} is {default} (its default)")
        return Size(self._whole_number(key, self.config.get(key)), f"{key} is {self.config[key]}")

    def item(self, key, index):
        """The positive int `config[key][index]` of a list of sizes (`depths`, `num_heads`)."""
        values = self._list(key)
        if index >= len(values):
            raise ValueError(f"{self.path}: {key} is {values}, with no entry {index}")
        value = self._whole_number(f"{key}[{index}]", values[index])
        return Size(value, f"{key}[{index}] is {value}")

    def length(self, key):
        """The number of entries of the list `config[key]` (e.g. stages for `depths`)."""
        values = self._list(key)
        return Size(len(values), f"{key} is {values}")

    def divisible(self, size, by):
        """Checks that `size` is a multiple of `by` (both `Size`s), as attention heads need."""
        if size % by:
            raise ValueError(f"{self.path}: {size.reason} but {by.reason}: it must divide evenly")

    def _list(self, key):
        values = self.config.get(key)
        if not isinstance(values, list) or not values:
            raise ValueError(f"{self.path}: {key} is {values!r}; a list of sizes was expected")
        return values

    def _whole_number(self, key, value):
        if value is None:
            raise ValueError(f"{self.path}: no {key}, which the architecture needs")
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(
                f"{self.path}: {key} is {value!r}; a positive whole number was expected"
            )
        return value


class NumberedParts(NamedTuple):
    """A run of numbered parts, e.g. layers: `prefix.format(i)` starts the names of part i.

    Attributes:
        count: the `Size` the config gives, e.g. `sizes("num_hidden_layers")`.
        prefix: the tensor names of part i start with `prefix.format(i)`,
            e.g. "vit.encoder.layer.{}.".
        noun: what the parts are, in the plural, for the messages ("layers").
    """

    count: Size
    prefix: str
    noun: str


class TensorLayout(NamedTuple):
    """The tensors a checkpoint's config implies.

    Attributes:
        required: `{tensor name: shape}`; a dimension is an int (a `Size`
            where the config gives it) or None for any size.
        optional: `{tensor name: shape}` of tensors a folder may hold and
            the reader does not need (a pooler, buffers, tied copies);
            checked where present. None: no such tensor.
        numbered: `NumberedParts` counted against the config, before the
            tensors are compared one by one.
    """

    required: dict
    optional: dict = None
    numbered: tuple = ()


def check_tensors(folder, tensors, layout, ignore_unexpected=False):
    """Checks a checkpoint's tensors against what its config implies; a ValueError otherwise.

    Args:
        folder: the checkpoint folder, for the messages.
        tensors: its `checkpoint_folders.StateDict`.
        layout: the `TensorLayout` its config implies.
        ignore_unexpected: accept tensors the layout does not name (they are
            not read); by default they stop the reading, as a sign that the
            config does not describe the weights.

    Raises:
        ValueError: one line naming the files, the key and both values: a
            count of numbered parts, a missing tensor, a shape, or tensors
            the config does not account for.
    """
    config = os.path.join(folder, CONFIG_FILE)
    for parts in layout.numbered:
        _check_count(config, tensors, parts)
    expected = {**layout.required, **(layout.optional or {})}
    missing = [name for name in layout.required if name not in tensors]
    if missing:
        raise ValueError(
            f"{os.path.join(folder, tensors.source)}: no tensor {missing[0]}, which {CONFIG_FILE} "
            f"implies (shape {_shape_text(layout.required[missing[0]])}); "
            f"{len(missing)} of {len(layout.required)} expected tensors are missing"
        )
    for name, shape in expected.items():
        if name in tensors:
            _check_shape(config, tensors, name, shape)
    unexpected = sorted(name for name in tensors if name not in expected)
    if unexpected and not ignore_unexpected:
        raise ValueError(
            f"{os.path.join(folder, tensors.files[unexpected[0]])}: {len(unexpected)} tensor(s) "
            f"that {CONFIG_FILE} does not account for, e.g. {unexpected[0]} of shape "
            f"{tuple(tensors[unexpected[0]].shape)}; {IGNORE_HINT}"
        )


def _check_count(config, tensors, parts):
    pattern = re.compile(re.escape(parts.prefix).replace(r"\{\}", r"(\d+)"))
    found = sorted({int(match[1]) for name in tensors if (match := pattern.match(name))})
    if found == list(range(parts.count)):
        return
    if found == list(range(len(found))):  # a complete run of another length
        names = [parts.prefix.format(index).rstrip(".") for index in (0, len(found) - 1)]
        held = (
            f"tensors of {len(found)} {parts.noun} ({names[0]} ... {names[1]})"
            if found
            else f"no tensor of {parts.noun} ({parts.prefix.format(0)}...)"
        )
    else:
        held = f"tensors of {parts.noun} numbered {found} ({parts.prefix.format('N')}...)"
    raise ValueError(f"{config}: {parts.count.reason} but {tensors.source} holds {held}")


def _check_shape(config, tensors, name, shape):
    actual = tuple(tensors[name].shape)
    fits = len(actual) == len(shape) and all(
        want is None or have == want for have, want in zip(actual, shape)
    )
    if fits:
        return
    reasons = [
        want.reason for have, want in zip(actual, shape) if isinstance(want, Size) and have != want
    ]
    given = f"{config}: {reasons[0]}" if reasons else f"{config} implies {_shape_text(shape)}"
    raise ValueError(
        f"{given} but {tensors.files[name]} holds {name} of shape {actual}, "
        f"not {_shape_text(shape)}"
    )


def _shape_text(shape):
    dims = ["any" if dim is None else str(int(dim)) for dim in shape]
    return f"({dims[0]},)" if len(dims) == 1 else f"({', '.join(dims)})"
