"""Hugging Face `datasets` folders written by `save_to_disk`, read offline (`hf:PATH`).

    PATH/                          (DatasetDict.save_to_disk(PATH))
      dataset_dict.json
      train/  validation/  test/   each: data-*.arrow, dataset_info.json, state.json

Read with `datasets.load_from_disk`, which needs no network. The splits
named "train", "validation" (or "valid", "val", "dev") and "test" are used;
others are left out and named. A folder written by `Dataset.save_to_disk`
(one split) is one set to draw the splits from.

- Translation: a `translation` column of `{language: text}` dicts, the
  schema of the WMT and OPUS sets; `source_lang` and `target_lang` pick the
  two sides (`hf_translation_splits`).
- Image classification: an `image` (or `img`) column of images and a
  `ClassLabel` column `label` (or `labels`), whose names are the class
  names (`hf_image_classification_files`, `hf_image_pairs`). The training
  split's names are the classes; another split's labels are matched to them
  by name, never by position, and a split naming a class the training split
  lacks is refused.

The `datasets` package is an optional dependency:
`pip install "keras-attention[hf]"`.

Example:

>>> from keras_attention.data.hf_datasets import HF_SPLITS
>>> HF_SPLITS["validation"]
('validation', 'valid', 'val', 'dev')
"""

import itertools
import os

import numpy as np
import tensorflow as tf

from keras_attention.data.classification_splits import ALL
from keras_attention.data.dataset_paths import names_for_message

HF_PREFIX = "hf:"
HF_SPLITS = {
    "train": ("train",),
    "validation": ("validation", "valid", "val", "dev"),
    "test": ("test",),
}
IMAGE_COLUMNS = ("image", "img")
LABEL_COLUMNS = ("label", "labels")


def _datasets_module(dataset):
    try:
        import datasets
    except ImportError:
        raise ValueError(
            "`hf:` data sets need the `datasets` package: pip install "
            f'"keras-attention[hf]" (or pip install datasets). Received: dataset={dataset!r}'
        ) from None
    return datasets


def load_hf_splits(dataset):
    """`({our split name: datasets.Dataset}, layout)` of a `save_to_disk` folder.

    Args:
        dataset: "hf:PATH" (`~` and `$VARIABLES` expanded).

    Returns:
        the splits, keyed "train", "validation", "test" (those the folder
        has), or `ALL` for a folder of one `Dataset`; and one line naming
        the folder, the splits used and those left out.
    """
    datasets = _datasets_module(dataset)
    path = os.path.expanduser(os.path.expandvars(dataset[len(HF_PREFIX) :]))
    if not os.path.isdir(path):
        raise ValueError(
            f"`dataset` must name a folder written by `save_to_disk` after 'hf:'; {path} is "
            f"not a folder. Received: dataset={dataset!r}"
        )
    try:
        loaded = datasets.load_from_disk(path)
    except (FileNotFoundError, ValueError) as error:
        raise ValueError(
            f"{path} must be a folder written by `datasets` `save_to_disk` ({error}). "
            f"Received: dataset={dataset!r}"
        ) from None
    if isinstance(loaded, datasets.Dataset):
        return {ALL: loaded}, f"datasets folder {path} (one split)"
    splits, used, left = {}, [], []
    for name in loaded:
        ours = [split for split, names in HF_SPLITS.items() if name.lower() in names]
        if ours and ours[0] not in splits:
            splits[ours[0]] = loaded[name]
            used.append(name)
        else:
            left.append(name)
    if "train" not in splits:
        raise ValueError(
            f"{path} must have a 'train' split; it has {', '.join(loaded) or 'none'}. "
            f"Received: dataset={dataset!r}"
        )
    layout = f"datasets folder {path} (splits {', '.join(used)}"
    layout += f"; left out: {', '.join(left)})" if left else ")"
    return splits, layout


def hf_translation_splits(dataset, source_lang, target_lang):
    """`({split: datasets.Dataset}, layout)` of a set with a `translation` column, checked.

    No row is read: the splits are memory-mapped Arrow tables, streamed or
    sampled later (`keras_attention.tasks.translation.pair_files`).

    Args:
        dataset: "hf:PATH".
        source_lang, target_lang: keys of the `translation` dicts, e.g.
            "en" and "de".

    Raises:
        ValueError: a split without a `translation` column, or languages
            that are not two different ones of the set's.
    """
    splits, layout = load_hf_splits(dataset)
    for name, split in splits.items():
        if "translation" not in split.column_names:
            raise ValueError(
                f"`hf:` translation sets need a 'translation' column of {{language: text}} "
                f"dicts; the {name} split has {split.column_names}. Received: dataset={dataset!r}"
            )
        feature = split.features["translation"]
        languages = list(getattr(feature, "languages", None) or feature)
        missing = [lang for lang in (source_lang, target_lang) if lang not in languages]
        if missing or source_lang == target_lang:
            raise ValueError(
                "--source-lang and --target-lang must be two of the set's languages "
                f"({', '.join(languages)}). Received: source_lang={source_lang!r}, "
                f"target_lang={target_lang!r}"
            )
    return splits, f"{layout}, {source_lang} -> {target_lang}"


def translation_sides(rows, source_lang, target_lang):
    """`(sources, targets)` as UTF-8 bytes of `translation` dicts; b"" for a missing side.

    Example:

    >>> from keras_attention.data.hf_datasets import translation_sides
    >>> translation_sides([{"en": "hi", "de": "hallo"}, {"en": None}], "en", "de")
    ([b'hi', b''], [b'hallo', b''])
    """
    sides = ([], [])
    for texts in rows:
        for side, lang in zip(sides, (source_lang, target_lang)):
            side.append(((texts or {}).get(lang) or "").encode("utf-8"))
    return sides


def _labels_by_name(name, names, class_names, labels, dataset):
    """A split's `labels` (ids into its own `names`) as ids into `class_names`, the train split's.

    Negative labels (`datasets`' "no label") are kept as they are.

    Raises:
        ValueError: the split names a class that `class_names` lacks; the
            message names the split, the classes and both lists.
    """
    index = {class_name: i for i, class_name in enumerate(class_names)}
    missing = [class_name for class_name in names if class_name not in index]
    if missing:
        raise ValueError(
            f"The {name} split of an `hf:` image classification set names class(es) "
            f"{', '.join(map(repr, missing))} that the train split lacks (train: "
            f"{names_for_message(class_names)}; {name}: {names_for_message(names)}). "
            f"Received: dataset={dataset!r}"
        )
    table = np.array([index[class_name] for class_name in names], np.int64)
    labels = np.asarray(labels, np.int64)
    known = (labels >= 0) & (labels < len(names))
    return np.where(known, table[np.where(known, labels, 0)], labels)


def hf_image_classification_files(dataset):
    """`(files, class names, image column, splits, layout)` of an image classification set.

    `files` maps each split to `[((split, row), label)]`, the form
    `complete_classification_splits` takes; `splits` holds the
    `datasets.Dataset`s, their image column left encoded (bytes). The class
    names are the training split's; a split that orders them otherwise has
    its labels matched to them by name (and the layout says so).
    """
    datasets = _datasets_module(dataset)
    splits, layout = load_hf_splits(dataset)
    reference = splits.get("train", next(iter(splits.values())))
    image_column = next((c for c in IMAGE_COLUMNS if c in reference.column_names), None)
    label_column = next((c for c in LABEL_COLUMNS if c in reference.column_names), None)
    class_names = None
    files, encoded, mapped = {}, {}, []
    # The training split first: its class names are the classes.
    for name, split in sorted(splits.items(), key=lambda item: item[1] is not reference):
        label_feature = split.features.get(label_column)
        if image_column not in split.column_names or not isinstance(
            label_feature, datasets.ClassLabel
        ):
            raise ValueError(
                "`hf:` image classification sets need an 'image' (or 'img') column and a "
                f"ClassLabel 'label' column in every split; the {name} split has "
                f"{split.features}. Received: dataset={dataset!r}"
            )
        names = list(label_feature.names)
        labels = split[label_column]
        if class_names is None:
            class_names = names
        elif names != class_names:
            labels = _labels_by_name(name, names, class_names, labels, dataset)
            mapped.append(name)
        encoded[name] = split.cast_column(image_column, datasets.Image(decode=False))
        files[name] = [((name, row), int(label)) for row, label in enumerate(labels)]
    if len(class_names) < 2:
        raise ValueError(
            "`hf:` image classification sets need two or more classes to tell apart; the "
            f"'{label_column}' column of {dataset} names {len(class_names)}: "
            f"{class_names}. Received: dataset={dataset!r}"
        )
    if mapped:
        layout += f"; the class names of {', '.join(mapped)} matched to train's by name"
    order = list(splits)
    files = {name: files[name] for name in order}
    encoded = {name: encoded[name] for name in order}
    return files, class_names, image_column, encoded, layout


def hf_image_pairs(entries, splits, image_column, shuffle_seed=None):
    """A `tf.data.Dataset` of `(encoded image bytes, name, label)` for `[((split, row), label)]`.

    The name ("train row 12") says which row an image that cannot be
    decoded comes from; a file that cannot be read gives empty bytes. With
    `shuffle_seed`, the rows come in a new order at every pass (drawn from
    the seed and the pass's number), none read before its turn.
    """
    passes = itertools.count()

    def rows():
        order = range(len(entries))
        if shuffle_seed is not None:
            order = np.random.default_rng([shuffle_seed, next(passes)]).permutation(len(entries))
        for position in order:
            (split, row), label = entries[position]
            image = splits[split][row][image_column] or {}
            data = image.get("bytes")
            if data is None and image.get("path"):
                try:
                    with open(image["path"], "rb") as file:
                        data = file.read()
                except OSError:
                    data = b""
            yield data or b"", f"{split} row {row + 1}", label

    signature = (
        tf.TensorSpec((), tf.string),
        tf.TensorSpec((), tf.string),
        tf.TensorSpec((), tf.int32),
    )
    pairs = tf.data.Dataset.from_generator(rows, output_signature=signature)
    return pairs.apply(tf.data.experimental.assert_cardinality(len(entries)))
