"""Sentence pairs for translation from the built-in corpus, files as downloaded, or tfds.

`load_translation_pairs(dataset)` understands the `--dataset` values of the
translation example:

- `"builtin"`: the offline English -> Spanish corpus of
  `keras_attention.tasks.translation.builtin_corpus`;
- `"tsv:PATH"`: a UTF-8 file of `source<TAB>target` lines, optionally with
  a third column that is ignored (Tatoeba / manythings.org files end each
  line with `<TAB>attribution`); `~` and `$VARIABLES` in PATH are expanded;
- `"parallel:DIR"`: one file per split and language, `train.en`,
  `valid.en` (or `val`, `dev`), `test*.en` and the same for the other
  language (Multi30k, fairseq), see `parallel_text`;
- `"hf:PATH"`: a `datasets` `save_to_disk` folder with a `translation`
  column of `{language: text}` dicts (WMT, OPUS), see `hf_datasets`;
- a tensorflow-datasets name such as `"ted_hrlr_translate/pt_to_en"`, read
  with `as_supervised=True`.

`parallel:` and `hf:` take `source_lang` and `target_lang` and keep the
data set's own splits; a missing validation or test split is made from the
others, and `summary()` says how.

Example:

>>> from keras_attention.tasks.translation.sources import load_translation_pairs
>>> splits = load_translation_pairs("builtin", num_pairs=40)
>>> sorted(splits)
['test', 'train', 'validation']
>>> source, target = next(iter(splits["train"]))
>>> source.dtype.name, target.dtype.name, source.shape.rank
('string', 'string', 0)
"""

import os
import re
import warnings

import tensorflow as tf

from keras_attention.data.dataset_splits import SPLIT_NAMES
from keras_attention.data.dataset_splits import DatasetSplits
from keras_attention.data.held_out_splits import every_other
from keras_attention.data.hf_datasets import HF_PREFIX
from keras_attention.data.hf_datasets import hf_translation_pairs
from keras_attention.data.tfds_download import load_tfds
from keras_attention.tasks.translation.builtin_corpus import builtin_translation_splits
from keras_attention.tasks.translation.builtin_corpus import split_translation_pairs
from keras_attention.tasks.translation.parallel_text import PARALLEL_PREFIX
from keras_attention.tasks.translation.parallel_text import parallel_split_files
from keras_attention.tasks.translation.parallel_text import read_parallel_pairs

TSV_PREFIX = "tsv:"
# Dataset names as tfds spells them: "name", "name/config", "name/config:1.0.0".
_TFDS_NAME = re.compile(r"[a-z][a-z0-9_]*(/[A-Za-z0-9_.\-]+)?(:[0-9.*]+)?")
_MAX_REPORTED_LINES = 10


def _unknown_dataset_error(dataset):
    return ValueError(
        "`dataset` must be 'builtin', 'tsv:PATH', 'parallel:DIR', 'hf:PATH' or a "
        "tensorflow-datasets name such as 'ted_hrlr_translate/pt_to_en'. "
        f"Received: dataset={dataset!r}"
    )


def _pairs_dataset(pairs):
    sources = tf.constant([source for source, _ in pairs], dtype=tf.string, shape=[len(pairs)])
    targets = tf.constant([target for _, target in pairs], dtype=tf.string, shape=[len(pairs)])
    return tf.data.Dataset.from_tensor_slices((sources, targets))


def read_tsv_pairs(path, strict=False):
    """Read `source<TAB>target[<TAB>attribution]` lines, warning about the lines it skips.

    A third field (Tatoeba's attribution) is ignored. A line is skipped when
    it has fewer than two or more than three tab-separated fields, when a
    side is empty (after stripping spaces) or when it is not valid UTF-8.
    One warning names the first skipped line numbers and their count.

    Args:
        path: path of a UTF-8 text file.
        strict: raise a ValueError naming the malformed lines instead of
            skipping them.

    Returns:
        list of `(source, target)` string tuples, in file order.

    Example:

    >>> import os, tempfile
    >>> from keras_attention.tasks.translation.sources import read_tsv_pairs
    >>> with tempfile.TemporaryDirectory() as directory:
    ...     path = os.path.join(directory, "pairs.tsv")
    ...     with open(path, "w", encoding="utf-8") as file:
    ...         _ = file.write("hello\\thola\\nthank you\\tgracias\\n")
    ...     read_tsv_pairs(path)
    [('hello', 'hola'), ('thank you', 'gracias')]
    """
    if not os.path.isfile(path):
        raise ValueError(f"The translation file does not exist. Received: path={path!r}")
    pairs, bad_lines = [], []
    with open(path, "rb") as file:
        for number, raw_line in enumerate(file, start=1):
            try:
                line = raw_line.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError:
                bad_lines.append(number)
                continue
            fields = [field.strip() for field in line.rstrip("\r\n").split("\t")]
            if len(fields) in (2, 3) and fields[0] and fields[1]:
                pairs.append((fields[0], fields[1]))
            else:
                bad_lines.append(number)
    if bad_lines:
        shown = ", ".join(str(number) for number in bad_lines[:_MAX_REPORTED_LINES])
        more = len(bad_lines) - _MAX_REPORTED_LINES
        rule = (
            "a line must be `source<TAB>target` (a third field is ignored) in UTF-8 with both "
            "sides non-empty"
        )
        lines = f"line(s) {shown}" + (f" and {more} more." if more > 0 else ".")
        if strict:
            raise ValueError(f"{len(bad_lines)} malformed line(s) of {path} ({rule}): {lines}")
        warnings.warn(
            f"Skipped {len(bad_lines)} malformed line(s) of {path} ({rule}): {lines}",
            stacklevel=2,
        )
    if not pairs:
        raise ValueError(
            "The translation file must hold at least one valid `source<TAB>target` line. "
            f"Received: path={path!r} with {len(bad_lines)} malformed line(s) and no valid one"
        )
    return pairs


def _load_tfds(name, splits, data_dir):
    import tensorflow_datasets as tfds  # Imported here: slow, and only this source needs it.

    try:
        tfds.builder(name, data_dir=data_dir)
    except tfds.core.registered.DatasetNotFoundError as error:
        raise _unknown_dataset_error(name) from error
    datasets = load_tfds(name, split=list(splits), as_supervised=True, data_dir=data_dir)
    spec = datasets[0].element_spec
    if not (
        isinstance(spec, tuple)
        and len(spec) == 2
        and all(isinstance(s, tf.TensorSpec) and s.dtype == tf.string for s in spec)
    ):
        raise ValueError(
            "`dataset` must be a tensorflow-datasets translation set whose supervised "
            f"examples are (source, target) strings. Received: dataset={name!r} "
            f"with element_spec={spec}"
        )
    sizes = {name: max(int(split.cardinality()), 0) for name, split in zip(splits, datasets)}
    return DatasetSplits(
        dict(zip(splits, datasets)),
        sizes,
        f"tensorflow-datasets {name}",
        f"its own splits {', '.join(splits)}",
        unit="sentence pairs",
    )


def _complete_translation_splits(pairs, validation_fraction, test_fraction, seed):
    """`({split: pairs}, rule)`: a data set's own splits, the missing ones made."""
    if "train" not in pairs:  # one set to draw from (a `datasets` folder of one split)
        pairs = {"train": next(iter(pairs.values()))}
    has = [name for name in ("validation", "test") if pairs.get(name)]
    if len(has) == 2:
        return dict(pairs), ""
    if has == ["validation"]:
        validation, test = every_other(pairs["validation"])
        rule = "test: every other validation pair (sorted), the others stay for validation"
        return {"train": pairs["train"], "validation": validation, "test": test}, rule
    drawn = split_translation_pairs(
        pairs["train"], validation_fraction, 0.0 if has else test_fraction, seed
    )
    if has == ["test"]:
        drawn["test"] = pairs["test"]
        return (
            drawn,
            f"validation: {validation_fraction:.0%} of train drawn at random (seed {seed})",
        )
    rule = (
        f"validation {validation_fraction:.0%} and test {test_fraction:.0%} of train drawn at "
        f"random (seed {seed})"
    )
    return drawn, rule


def _own_splits(dataset, source_lang, target_lang, test_prefix, strict, fractions, seed):
    """`(pairs by split, layout, rule)` of a `parallel:` or `hf:` set, its gaps filled."""
    if dataset.startswith(PARALLEL_PREFIX):
        pairs, layout = _parallel(dataset, source_lang, target_lang, test_prefix, strict)
    else:
        if test_prefix:
            raise ValueError(
                "`test_prefix` applies to 'parallel:' folders. Received: "
                f"dataset={dataset!r}, test_prefix={test_prefix!r}"
            )
        pairs, layout = hf_translation_pairs(dataset, source_lang, target_lang, strict)
    pair_splits, rule = _complete_translation_splits(pairs, *fractions, seed)
    if not pair_splits["train"]:
        raise ValueError(f"`dataset` has no training pair. Received: dataset={dataset!r}")
    return pair_splits, layout, rule


def _parallel(dataset, source_lang, target_lang, test_prefix, strict):
    """`({split: pairs}, layout)` of a `parallel:DIR` folder."""
    folder = os.path.expanduser(os.path.expandvars(dataset[len(PARALLEL_PREFIX) :]))
    if not os.path.isdir(folder):
        raise ValueError(
            f"`dataset` must name a folder after 'parallel:'; {folder} is not one. "
            f"Received: dataset={dataset!r}"
        )
    files = parallel_split_files(folder, source_lang, target_lang, test_prefix)
    pairs = {split: read_parallel_pairs(*sides, strict) for split, sides in files.items()}
    names = ", ".join(os.path.basename(source).split(".")[0] for source, _ in files.values())
    return pairs, f"parallel files {folder} ({names}; {source_lang} -> {target_lang})"


def _check_no_language_arguments(dataset, source_lang, target_lang, test_prefix):
    """Refuses languages or a test prefix for a data set that is not parallel: or hf:."""
    if source_lang or target_lang or test_prefix:
        raise ValueError(
            "`source_lang`, `target_lang` and `test_prefix` (--source-lang, --target-lang, "
            "--test-prefix) apply to 'parallel:' and 'hf:' data sets only. Received: "
            f"dataset={dataset!r}, source_lang={source_lang!r}, target_lang={target_lang!r}, "
            f"test_prefix={test_prefix!r}"
        )


def _builtin_splits(num_pairs, seed, fractions):
    """`(pair_splits, layout, rule)` of the built-in corpus (it splits itself)."""
    validation_fraction, test_fraction = fractions
    pair_splits = builtin_translation_splits(
        num_pairs=num_pairs,
        seed=seed,
        validation_fraction=validation_fraction,
        test_fraction=test_fraction,
    )
    return pair_splits, "built-in English -> Spanish corpus", ""


def _tsv_splits(path, strict, fractions, seed):
    """`(pair_splits, layout, rule)` of a TSV file, split at random by source sentence."""
    path = os.path.expanduser(os.path.expandvars(path))
    pairs = read_tsv_pairs(path, strict=strict)
    pair_splits = split_translation_pairs(pairs, *fractions, seed)
    rule = f"validation and test drawn at random by source sentence (seed {seed})"
    return pair_splits, f"tsv file {path}", rule


def load_translation_pairs(
    dataset="builtin",
    *,
    num_pairs=20000,
    seed=0,
    validation_fraction=0.05,
    test_fraction=0.05,
    tfds_splits=("train", "validation", "test"),
    data_dir=None,
    strict=False,
    source_lang=None,
    target_lang=None,
    test_prefix=None,
):
    """Load translation pairs as `tf.data` datasets, one per split.

    The built-in corpus and TSV files are split by a seeded shuffle so that no
    source sentence is in two splits; parallel files, `datasets` folders and
    tfds datasets keep their own splits.

    Args:
        dataset: `"builtin"`, `"tsv:PATH"` or a tensorflow-datasets name such
            as `"ted_hrlr_translate/pt_to_en"`.
        num_pairs: number of built-in pairs over all splits (builtin only).
        seed: seed of the built-in sentences and of the builtin/TSV split.
        validation_fraction: share of the "validation" split (builtin, TSV,
            and parallel or hf sets without a validation split).
        test_fraction: share of the "test" split (builtin, TSV, and parallel
            or hf sets with neither a validation nor a test split).
        tfds_splits: the tfds splits to load (tfds only).
        data_dir: tfds data directory; None for the tfds default (tfds only).
        strict: malformed lines (TSV, parallel files) or blank rows (hf)
            raise a ValueError naming them instead of being skipped with a
            warning naming them.
        source_lang, target_lang: the two languages of a parallel or hf
            set, e.g. "en" and "de" (those sources only).
        test_prefix: the test set of a parallel folder holding several
            (e.g. "test_2016_flickr").

    Returns:
        a `DatasetSplits` (a dict) of split name -> `tf.data.Dataset` of
        `(source, target)` scalar `tf.string` pairs; "train", "validation",
        "test", or `tfds_splits` for tfds; its `sizes` count the pairs.

    Raises:
        DatasetDownloadError: a tfds data set is not prepared and cannot be
            downloaded.

    Example:

    >>> from keras_attention.tasks.translation.sources import load_translation_pairs
    >>> splits = load_translation_pairs("builtin", num_pairs=100, seed=1)
    >>> {name: int(split.cardinality()) for name, split in splits.items()}
    {'train': 90, 'validation': 5, 'test': 5}
    """
    if not isinstance(dataset, str):
        raise _unknown_dataset_error(dataset)
    own_splits = dataset.startswith((PARALLEL_PREFIX, HF_PREFIX))
    if not own_splits:
        _check_no_language_arguments(dataset, source_lang, target_lang, test_prefix)
    fractions = (validation_fraction, test_fraction)
    if dataset == "builtin":
        pair_splits, layout, rule = _builtin_splits(num_pairs, seed, fractions)
    elif dataset.startswith(TSV_PREFIX):
        pair_splits, layout, rule = _tsv_splits(dataset[len(TSV_PREFIX) :], strict, fractions, seed)
    elif own_splits:
        pair_splits, layout, rule = _own_splits(
            dataset, source_lang, target_lang, test_prefix, strict, fractions, seed
        )
    elif _TFDS_NAME.fullmatch(dataset):
        return _load_tfds(dataset, tuple(tfds_splits), data_dir)
    else:
        raise _unknown_dataset_error(dataset)
    return DatasetSplits(
        {name: _pairs_dataset(pair_splits[name]) for name in SPLIT_NAMES},
        {name: len(pair_splits[name]) for name in SPLIT_NAMES},
        layout,
        rule,
        unit="sentence pairs",
    )
