"""Sentence pairs for translation from the built-in corpus, files as downloaded, or tfds.

`load_translation_pairs(dataset)` understands the `--dataset` values of the
translation example:

- `"builtin"`: the offline English -> Spanish corpus of
  `keras_attention.tasks.translation.builtin_corpus`;
- `"tsv:PATH"`: a UTF-8 file of `source<TAB>target` lines, optionally with
  a third column that is ignored (Tatoeba / manythings.org files end each
  line with `<TAB>attribution`); a first line of column names
  (`source<TAB>target`, `en<TAB>de`: `tsv_header`) is skipped with a
  warning; `~` and `$VARIABLES` in PATH are expanded;
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

Files are never read whole before training: a uniform random sample of up
to `sample_size` lines (`pair_files.sample_pairs`) gives the sizes of the
splits (exact when the sample holds every line, estimated otherwise), the
pairs a run learns its vocabularies and lengths from (`splits.sample`), and
the malformed lines reported at once; the splits then stream the files with
`tf.data`, where the other malformed lines are skipped and named
(`skipped`). A file split into train, validation and test is split by a
seeded hash of the source sentence, so that the pairs of one source are in
one split: the sources whose hashes are the lowest of the sample make
`test_fraction` of them, the next ones `validation_fraction`.

Example:

>>> from keras_attention.tasks.translation.sources import load_translation_pairs
>>> splits = load_translation_pairs("builtin", num_pairs=40)
>>> sorted(splits)
['test', 'train', 'validation']
>>> source, target = next(iter(splits["train"]))
>>> source.dtype.name, target.dtype.name, source.shape.rank
('string', 'string', 0)
"""

import dataclasses
import os
import re
import sys
import warnings

import numpy as np
import tensorflow as tf

from keras_attention.data.classification_splits import ALL
from keras_attention.data.dataset_splits import SPLIT_NAMES
from keras_attention.data.dataset_splits import DatasetSplits
from keras_attention.data.held_out_splits import split_counts
from keras_attention.data.hf_datasets import HF_PREFIX
from keras_attention.data.hf_datasets import hf_translation_splits
from keras_attention.data.line_files import clean_line
from keras_attention.data.line_files import read_lines_at
from keras_attention.data.skipped_items import SkippedItems
from keras_attention.data.text_lines import report_lines
from keras_attention.data.tfds_download import load_tfds
from keras_attention.data.worker_shards import ONE_WORKER
from keras_attention.tasks.translation.builtin_corpus import builtin_translation_splits
from keras_attention.tasks.translation.pair_files import HASH_RANGE
from keras_attention.tasks.translation.pair_files import PairFiles
from keras_attention.tasks.translation.pair_files import sample_pairs
from keras_attention.tasks.translation.pair_files import source_hashes
from keras_attention.tasks.translation.parallel_text import PARALLEL_PREFIX
from keras_attention.tasks.translation.parallel_text import parallel_split_files
from keras_attention.tasks.translation.tsv_header import is_column_names
from keras_attention.training.tfds_names import tfds_name_problem

TSV_PREFIX = "tsv:"
# Dataset names as tfds spells them: "name", "name/config", "name/config:1.0.0".
_TFDS_NAME = re.compile(r"[a-z][a-z0-9_]*(/[A-Za-z0-9_.\-]+)?(:[0-9.*]+)?")
_MAX_REPORTED_LINES = 10
# A tsv file whose first column is a number on this share of the lines read, with two
# columns after it, is taken for `id<TAB>source<TAB>target` (a few lines are re-read to see).
_ID_COLUMN_SHARE = 0.9
_ID_LINES_LOOKED_AT = 20
# Lines of a data set's files read before training, at most: the sample its
# sizes, vocabularies and length limits come from.
SAMPLE_SIZE = 200_000
_TSV_RULE = (
    "a line must be `source<TAB>target` (a third field is ignored) in UTF-8 with both sides "
    "non-empty"
)
_PARALLEL_PROBLEM = "are blank or not UTF-8 on one side"


def _unknown_dataset_error(dataset, reason=None):
    """The ValueError of a `dataset` that is no source, with why where it is known."""
    return ValueError(
        "`dataset` must be 'builtin', 'tsv:PATH', 'parallel:DIR', 'hf:PATH' or a "
        "tensorflow-datasets name such as 'ted_hrlr_translate/pt_to_en'"
        f"{'; ' + reason if reason else ''}. Received: dataset={dataset!r}"
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
    One warning names the first skipped line numbers and their count. The
    whole file is read: for files of any size, `load_translation_pairs`
    streams them.

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
    sample = _tsv_sample(path, None, strict, show_progress=False)
    return [(source, target) for _, source, target in sample.pairs]


def _tsv_sample(path, sample_size, strict, seed=0, show_progress=True):
    """The `PairSample` of a tsv file (every line without `sample_size`), its bad lines reported."""
    if not os.path.isfile(path):
        raise ValueError(f"The translation file does not exist. Received: path={path!r}")
    files = PairFiles("tsv", (path,), column_names=_has_column_names(path))
    sample = sample_pairs(files, sample_size or sys.maxsize, seed, show_progress)
    _report_tsv_lines(path, sample, strict)
    _check_no_id_column(path, sample)
    if not sample.pairs:
        raise ValueError(
            "The translation file must hold at least one valid `source<TAB>target` line. "
            f"Received: path={path!r} with {len(sample.bad_lines)} malformed line(s) and no "
            "valid one" + ("" if sample.is_whole else f" among {sample.num_sampled} sampled")
        )
    return sample


def _has_column_names(path):
    """Whether the tsv file's first line names its columns (`tsv_header`), said in a warning."""
    first = read_lines_at(path, [0])
    try:
        line = clean_line(first[0]).decode("utf-8") if first else ""
    except UnicodeDecodeError:
        return False
    if not is_column_names(line.split("\t")):
        return False
    warnings.warn(
        f"{path}: line 1 ({line!r}) names the columns, it is no sentence pair: skipped.",
        stacklevel=4,
    )
    return True


def _check_no_id_column(path, sample):
    """Refuses a tsv file laid out `id<TAB>source<TAB>target`: it would learn ids -> sources.

    Such a file is three well-formed fields a line (a third one is ignored, as
    Tatoeba's attribution), so nothing else would stop it: the sign is a
    first column that is a number on (nearly) every line read, followed by
    two more. Lines of numbers to translate ("12<TAB>doce") have no third column.
    """
    numbered = [number for number, source, _ in sample.pairs if source.isdigit()]
    if not numbered or len(numbered) < _ID_COLUMN_SHARE * len(sample.pairs):
        return
    looked_at = numbered[:_ID_LINES_LOOKED_AT]
    raw_lines = read_lines_at(path, [number - 1 for number in looked_at])  # 0-based
    if not all(line.count(b"\t") == 2 for line in raw_lines):
        return
    first = raw_lines[0].decode("utf-8", "replace").rstrip("\r").removeprefix("\ufeff")
    raise ValueError(
        f"{path}: the first column is a number on {len(numbered)} of the {len(sample.pairs)} "
        f"lines read, and two more follow (line {looked_at[0]}: {first!r}): an id column "
        "first? A tsv: line is `source<TAB>target` (a third column is ignored), so this would "
        f"learn to translate ids. Put the two sentence columns first, e.g. "
        f"`cut -f2,3 {path} > pairs.tsv` (numbers to translate: `cut -f1,2`)."
    )


def _report_tsv_lines(path, sample, strict):
    """Warns about (or with `strict`, refuses) the malformed lines of a tsv file's sample."""
    bad = sample.bad_lines
    if not bad:
        return
    shown = ", ".join(str(number) for number in bad[:_MAX_REPORTED_LINES])
    more = len(bad) - _MAX_REPORTED_LINES
    lines = f"line(s) {shown}" + (f" and {more} more." if more > 0 else ".")
    among = "" if sample.is_whole else _among(sample)
    if strict:
        raise ValueError(f"{len(bad)} malformed line(s) of {path}{among} ({_TSV_RULE}): {lines}")
    warnings.warn(
        f"Skipped {len(bad)} malformed line(s) of {path}{among} ({_TSV_RULE}): {lines}",
        stacklevel=4,
    )


def _among(sample):
    """How a warning about a sample's lines says that the others are checked later."""
    return (
        f" among {sample.num_sampled} of its {sample.num_lines} lines read before training (the "
        "others are checked where training meets them)"
    )


def hash_thresholds(sources, validation_fraction, test_fraction):
    """`(test end, validation end)`: hash bounds giving the fractions of the distinct `sources`.

    The distinct sources whose hashes are the lowest `test_fraction` of them
    are the test split's, the next `validation_fraction` the validation
    split's (`split_counts`: at least one each of three or more sources);
    exact on a whole file, the fractions of the sample's sources otherwise.

    Args:
        sources: the seeded hashes (`pair_files.source_hashes`) of the
            sampled source sentences, one per pair.
        validation_fraction, test_fraction: the shares of the held-out splits.

    Example:

    >>> from keras_attention.tasks.translation.sources import hash_thresholds
    >>> hash_thresholds([50, 10, 10, 30, 40, 20, 60, 70, 80, 90, 100], 0.2, 0.1)
    (20, 40)
    """
    hashes = np.unique(np.asarray(sources, np.int64))  # sorted
    _, num_validation, num_test = split_counts(len(hashes), validation_fraction, test_fraction)

    def bound(count):
        if count == 0:  # an empty split: no hash is below 0
            return 0
        return int(hashes[count]) if count < len(hashes) else HASH_RANGE

    return bound(num_test), bound(num_test + num_validation)


def _hash_split(files, sample, fractions, seed):
    """`({split: PairFiles}, {split: PairSample})`: `files` split by source-sentence hash."""
    sources = [source for _, source, _ in sample.pairs]
    test_end, validation_end = hash_thresholds(
        source_hashes(sources, seed).numpy() if sources else [], *fractions
    )
    ranges = {
        "train": (validation_end, HASH_RANGE),
        "validation": (test_end, validation_end),
        "test": (0, test_end),
    }
    # Malformed lines have no source to hash: the training split names them.
    splits = {
        name: dataclasses.replace(
            files, hash_range=bounds, seed=seed, reports_bad_lines=name == "train"
        )
        for name, bounds in ranges.items()
    }
    return splits, {name: sample.select(split) for name, split in splits.items()}


def _complete_file_splits(files, samples, fractions, seed):
    """`(splits, samples, rule)`: a file data set's own splits, the missing ones made.

    Without a test split, a validation file is halved by line (odd lines
    stay for validation, even ones are the test split); without either, or
    without a validation split, they are drawn from train by source hash.
    """
    validation_fraction, test_fraction = fractions
    if "validation" in files and "test" in files:
        return files, samples, ""
    if "validation" in files:
        halves = {
            name: dataclasses.replace(files["validation"], parity=parity)
            for name, parity in (("validation", 1), ("test", 0))
        }
        files = {**files, **halves}
        samples = {**samples, **{n: samples["validation"].select(f) for n, f in halves.items()}}
        return files, samples, "test: the even lines of the validation files, validation the odd"
    drawn_fractions = (validation_fraction, 0.0 if "test" in files else test_fraction)
    drawn, drawn_samples = _hash_split(files["train"], samples["train"], drawn_fractions, seed)
    if "test" in files:
        drawn["test"], drawn_samples["test"] = files["test"], samples["test"]
        rule = f"validation: {validation_fraction:.0%} of the train sources drawn at random"
    else:
        rule = (
            f"validation {validation_fraction:.0%} and test {test_fraction:.0%} of the train "
            "sources drawn at random"
        )
    return drawn, drawn_samples, f"{rule} (seed {seed})"


def _load_tfds(name, splits, data_dir, sample_size):
    """The `DatasetSplits` of a tensorflow-datasets translation set, its own splits kept.

    Its sizes are tfds' own counts; its sample is the first `sample_size`
    training pairs (tfds shuffles a set's examples when it prepares it).
    """
    problem = tfds_name_problem(name, data_dir)
    if problem is not None:  # tfds' own error would list every set it knows
        raise _unknown_dataset_error(name, problem)
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
    train = datasets[splits.index("train")] if "train" in splits else datasets[0]
    sample = [
        (source.decode("utf-8"), target.decode("utf-8"))
        for source, target in train.take(sample_size).as_numpy_iterator()
    ]
    return DatasetSplits(
        dict(zip(splits, datasets)),
        sizes,
        f"tensorflow-datasets {name}",
        f"its own splits {', '.join(splits)}",
        unit="sentence pairs",
        sample=sample,
    )


def _hf_files(
    dataset, source_lang, target_lang, test_prefix, strict, sample_size, seed, outside_links
):
    """`(files by split, samples by split, layout)` of an `hf:` folder, blank rows said."""
    del outside_links  # its rows hold the text, no file names
    if test_prefix:
        raise ValueError(
            "`test_prefix` applies to 'parallel:' folders. Received: "
            f"dataset={dataset!r}, test_prefix={test_prefix!r}"
        )
    tables, layout = hf_translation_splits(dataset, source_lang, target_lang)
    if ALL in tables:  # a folder of one `Dataset`: the splits are drawn from it
        tables = {"train": tables.pop(ALL)}
    folder = os.path.expanduser(os.path.expandvars(dataset[len(HF_PREFIX) :]))
    files, samples = {}, {}
    for split, table in tables.items():
        languages = (source_lang, target_lang)
        files[split] = PairFiles("hf", (folder, split), languages=languages, table=table)
        samples[split] = sample_pairs(files[split], sample_size, seed)
        report_lines(
            f"{dataset} ({split} split, rows)"
            + ("" if samples[split].is_whole else _among(samples[split])),
            samples[split].bad_lines,
            "have a blank side",
            strict,
            stacklevel=4,
        )
    return files, samples, layout


def _parallel_files(
    dataset, source_lang, target_lang, test_prefix, strict, sample_size, seed, outside_links
):
    """`(files by split, samples by split, layout)` of a `parallel:DIR` folder, bad lines said."""
    folder = os.path.expanduser(os.path.expandvars(dataset[len(PARALLEL_PREFIX) :]))
    if not os.path.isdir(folder):
        raise ValueError(
            f"`dataset` must name a folder after 'parallel:'; {folder} is not one. "
            f"Received: dataset={dataset!r}"
        )
    found = parallel_split_files(folder, source_lang, target_lang, test_prefix, outside_links)
    files = {split: PairFiles("parallel", sides) for split, sides in found.items()}
    samples = {}
    for split, split_files in files.items():
        samples[split] = sample_pairs(split_files, sample_size, seed)
        source_path, target_path = split_files.paths
        report_lines(
            f"{source_path} / {os.path.basename(target_path)}"
            + ("" if samples[split].is_whole else _among(samples[split])),
            samples[split].bad_lines,
            _PARALLEL_PROBLEM,
            strict,
            stacklevel=4,
        )
    names = ", ".join(os.path.basename(source).split(".")[0] for source, _ in found.values())
    return files, samples, f"parallel files {folder} ({names}; {source_lang} -> {target_lang})"


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
    allow_outside_links=False,
    sample_size=SAMPLE_SIZE,
    skipped=None,
    shard=ONE_WORKER,
):
    """Load translation pairs as `tf.data` datasets, one per split.

    The built-in corpus is split by a seeded shuffle and a TSV file by a
    seeded hash of the source sentence, so that no source sentence is in two
    splits; parallel files, `datasets` folders and tfds datasets keep their
    own splits. TSV and parallel files are streamed, never read whole (see
    the module docstring).

    One function on purpose: its length is this docstring, every source's arguments in
    one place; the code hands each source to its own reader.

    Args:
        dataset: `"builtin"`, `"tsv:PATH"`, `"parallel:DIR"`, `"hf:PATH"`
            or a tensorflow-datasets name such as
            `"ted_hrlr_translate/pt_to_en"`.
        num_pairs: number of built-in pairs over all splits (builtin only).
        seed: seed of the built-in sentences, of the split of a set without
            its own splits and of the sample.
        validation_fraction: share of the "validation" split (builtin, TSV,
            and parallel or hf sets without a validation split).
        test_fraction: share of the "test" split (builtin, TSV, and parallel
            or hf sets with neither a validation nor a test split).
        tfds_splits: the tfds splits to load (tfds only).
        data_dir: tfds data directory; None for the tfds default (tfds only).
        strict: malformed lines (TSV, parallel files) or blank rows (hf)
            raise a ValueError naming them instead of being skipped with a
            warning naming them; in a file's lines read only while training,
            the first stops the run (`skipped_items.strict_errors_as_exit`).
        source_lang, target_lang: the two languages of a parallel or hf
            set, e.g. "en" and "de" (those sources only).
        test_prefix: the test set of a parallel folder holding several
            (e.g. "test_2016_flickr").
        allow_outside_links: accept files of a parallel folder that are
            symbolic links leading outside it (refused by default).
        sample_size: lines of a file read before training, at most.
        skipped: the `SkippedItems` told of the malformed lines the streamed
            splits meet; by default one that counts them (stopping at the
            first with `strict`).
        shard: `(num_workers, index)`: the training split of a TSV or
            parallel files is this worker's blocks of lines alone
            (`worker_shards`); one worker by default.

    Returns:
        a `DatasetSplits` (a dict) of split name -> `tf.data.Dataset` of
        `(source, target)` scalar `tf.string` pairs; "train", "validation",
        "test", or `tfds_splits` for tfds. Its `sizes` count the pairs
        (estimated from the sample where it does not hold every line:
        `estimated`), its `sample` holds training pairs as `(source,
        target)` strings (all of them for a small data set) and its
        `skipped` the `SkippedItems` of its streams.

    Raises:
        DatasetDownloadError: a tfds data set is not prepared and cannot be
            downloaded.

    Example:

    >>> from keras_attention.tasks.translation.sources import load_translation_pairs
    >>> splits = load_translation_pairs("builtin", num_pairs=100, seed=1)
    >>> {name: int(split.cardinality()) for name, split in splits.items()}
    {'train': 90, 'validation': 5, 'test': 5}
    >>> len(splits.sample), splits.estimated
    (90, False)
    """
    if not isinstance(dataset, str):
        raise _unknown_dataset_error(dataset)
    own_splits = dataset.startswith((PARALLEL_PREFIX, HF_PREFIX))
    if not own_splits:
        _check_no_language_arguments(dataset, source_lang, target_lang, test_prefix)
    fractions = (validation_fraction, test_fraction)
    if skipped is None:
        skipped = SkippedItems("malformed lines", strict=strict)
    if dataset.startswith(TSV_PREFIX):
        path = os.path.expanduser(os.path.expandvars(dataset[len(TSV_PREFIX) :]))
        sample = _tsv_sample(path, sample_size, strict, seed)
        files, samples = _hash_split(sample.files, sample, fractions, seed)
        rule = f"validation and test drawn at random by source sentence (seed {seed})"
        return _file_splits(files, samples, f"tsv file {path}", rule, skipped, shard)
    if own_splits:
        languages = (source_lang, target_lang, test_prefix)
        read = _parallel_files if dataset.startswith(PARALLEL_PREFIX) else _hf_files
        files, samples, layout = read(
            dataset, *languages, strict, sample_size, seed, allow_outside_links
        )
        files, samples, rule = _complete_file_splits(files, samples, fractions, seed)
        if not samples["train"].pairs:
            raise ValueError(f"`dataset` has no training pair. Received: dataset={dataset!r}")
        return _file_splits(files, samples, layout, rule, skipped, shard)
    if dataset == "builtin":
        pair_splits, layout, rule = _builtin_splits(num_pairs, seed, fractions)
    elif _TFDS_NAME.fullmatch(dataset):
        return _load_tfds(dataset, tuple(tfds_splits), data_dir, sample_size)
    else:
        raise _unknown_dataset_error(dataset)
    return DatasetSplits(
        {name: _pairs_dataset(pair_splits[name]) for name in SPLIT_NAMES},
        {name: len(pair_splits[name]) for name in SPLIT_NAMES},
        layout,
        rule,
        unit="sentence pairs",
        sample=list(pair_splits["train"]),
    )


def _file_splits(files, samples, layout, rule, skipped, shard):
    """The `DatasetSplits` streaming `files` (the training ones by `shard`), sized by `samples`."""
    return DatasetSplits(
        {
            name: files[name].dataset(skipped, shard if name == "train" else ONE_WORKER)
            for name in SPLIT_NAMES
        },
        {name: samples[name].estimated_size() for name in SPLIT_NAMES},
        layout,
        rule,
        unit="sentence pairs",
        sample=[(source, target) for _, source, target in samples["train"].pairs],
        estimated=not all(samples[name].is_whole for name in SPLIT_NAMES),
        skipped=(skipped,),
    )
