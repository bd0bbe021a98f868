"""The three splits of a labelled data set from the splits it has, and how they were made.

A data set may come with train, validation and test splits, or only some:
`complete_classification_splits` keeps those it has and makes the others,
saying how in one phrase:

- no split at all (class folders): validation and test are seeded random
  shares of the images;
- train and validation, no test (ImageNet's `train/` and `val/`): test is
  every other image of each class of the validation split, the others stay
  for validation, the same for every seed;
- train and test, no validation: validation is a seeded share of train;
- train only: validation and test are a seeded share of train.

Example:

>>> from keras_attention.data.classification_splits import complete_classification_splits
>>> files = {"train": [("t0", 0), ("t1", 1)], "validation": [(f"v{i}", i % 2) for i in range(4)]}
>>> groups, rule = complete_classification_splits(files, {"validation": "val/"}, 2, 0.1, 0.1, 0)
>>> groups["validation"], groups["test"]
([('v0', 0), ('v1', 1)], [('v2', 0), ('v3', 1)])
>>> rule
'no test split: test is every other image of each class of val/'
"""

import numpy as np

from keras_attention.data.dataset_splits import SPLIT_NAMES
from keras_attention.data.held_out_splits import every_other
from keras_attention.data.held_out_splits import seeded_split

# The key of the files of a data set without splits.
ALL = "all"


def complete_classification_splits(
    files, names, num_classes, validation_fraction, test_fraction, seed
):
    """`({"train", "validation", "test": [(key, label)]}, rule)` from the splits `files` has.

    Args:
        files: dict split name ("train", "validation", "test", or only
            `ALL`) -> list of `(key, label)`, keys sortable (file paths).
        names: dict split name -> how to name that split in the rule, e.g.
            "val/"; the split name where missing.
        num_classes: number of labels.
        validation_fraction, test_fraction: shares drawn at random where a
            split is missing (see the module docstring).
        seed: the seed of those draws and of the training order.

    Returns:
        the three lists (train in a fixed shuffled order), and the rule
        that made the missing splits ("" when none was missing).
    """
    if ALL in files:
        groups = seeded_split(files[ALL], validation_fraction, test_fraction, seed)
        rule = (
            f"no splits of its own: validation {validation_fraction:.0%} and test "
            f"{test_fraction:.0%} of the images drawn at random (seed {seed})"
        )
        return dict(zip(SPLIT_NAMES, groups)), rule
    train = sorted(files["train"])
    groups = {"train": [train[i] for i in np.random.default_rng(seed).permutation(len(train))]}
    if "validation" in files and "test" in files:
        return {**groups, "validation": files["validation"], "test": files["test"]}, ""
    if "validation" in files:
        by_class = [[] for _ in range(num_classes)]
        for entry in files["validation"]:
            by_class[entry[1]].append(entry)
        groups["validation"], groups["test"] = [], []
        for entries in by_class:
            first, second = every_other(entries)
            groups["validation"] += first
            groups["test"] += second
        name = names.get("validation", "validation")
        return groups, f"no test split: test is every other image of each class of {name}"
    fraction = validation_fraction if "test" in files else validation_fraction + test_fraction
    kept, drawn, _ = seeded_split(groups["train"], fraction, 0.0, seed)
    train_name = names.get("train", "train")
    if "test" in files:
        groups.update(train=kept, validation=drawn, test=files["test"])
        rule = f"no validation split: validation is {fraction:.0%} of {train_name} drawn at random"
    else:
        validation, test = every_other(drawn)
        groups.update(train=kept, validation=validation, test=test)
        rule = f"{train_name} only: validation and test are {fraction:.0%} of it drawn at random"
    return groups, f"{rule} (seed {seed})"
