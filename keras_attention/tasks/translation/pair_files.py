"""Sentence pairs as they lie on disk, read without holding them: a tsv file or two parallel files.

`PairFiles` is one split's sentence pairs in a `tsv:` file
(`source<TAB>target[<TAB>attribution]` lines), in the two files of a
`parallel:` folder (line `n` of one with line `n` of the other) or in a split
of an `hf:` folder (row `n` of its `translation` column), and which of their
lines (or rows) are the split's:

- every line;
- the lines whose source sentence's seeded hash falls in a range: a file
  split into train, validation and test by source sentence, so that all
  pairs of one source sentence are in one split, decided line by line;
- every other line: a held-out file halved into validation and test.

`sample_pairs` reads a uniform random sample of a file's lines (the sizes,
vocabularies and length limits of a run come from it: every line when the
file is small); `PairFiles.dataset` streams a split's pairs with `tf.data`,
where a malformed line (a blank side, not UTF-8, not two or three fields) is
skipped and named (`SkippedItems`). A line blank on every side (a tsv file's
empty line, the empty lines parallel corpora put between documents) holds
no pair and is passed over without a word.

Example:

>>> import os, tempfile
>>> from keras_attention.tasks.translation.pair_files import PairFiles, sample_pairs
>>> path = os.path.join(tempfile.mkdtemp(), "pairs.tsv")
>>> _ = open(path, "w").write("hello\\thola\\n\\tbroken\\n\\nthanks\\tgracias\\n")
>>> sample = sample_pairs(PairFiles("tsv", (path,)), 100)
counting and sampling the lines of pairs.tsv: 4 lines in ...
>>> sample.pairs, sample.bad_lines
([(1, 'hello', 'hola'), (4, 'thanks', 'gracias')], [2])
"""

import contextlib
import dataclasses
import os

import numpy as np
import tensorflow as tf

from keras_attention.data.hf_datasets import translation_sides
from keras_attention.data.line_files import LineSample
from keras_attention.data.line_files import clean_lines
from keras_attention.data.line_files import line_dataset
from keras_attention.data.line_files import sample_indices
from keras_attention.data.line_files import sample_lines
from keras_attention.data.worker_shards import shard_for_worker
from keras_attention.progress import ProgressBar

KINDS = ("tsv", "parallel", "hf")
# Seeded hashes of source sentences lie in [0, HASH_RANGE).
HASH_RANGE = 2**62
# Lines parsed at once in the pipeline: string ops on batches, not on each line.
_PARSE_BATCH = 1024
_ASCII_WHITESPACE = " \t\n\r\f\v"


@dataclasses.dataclass(frozen=True)
class PairFiles:
    """One split's sentence pairs in a tsv file or in two parallel files.

    Args:
        kind: "tsv" (one file of `source<TAB>target` lines, a third field
            ignored), "parallel" (a source file and a target file) or "hf"
            (a `datasets` folder's split, its rows read as lines).
        paths: `(tsv path,)` or `(source path, target path)`, `.gz` read
            compressed; for "hf", `(folder, split name)`, which messages
            name.
        hash_range: None, or `(low, high)`: only the pairs whose source
            sentence's hash (`source_hashes` with `seed`) is in
            `[low, high)` are the split's.
        parity: None, or 1 (odd lines) or 0 (even lines): only those
            lines are the split's.
        seed: the key of the hash.
        reports_bad_lines: whether this split's stream names the malformed
            lines it meets (one split of a file does; with `parity`, each
            names those of its own lines).
        languages: for "hf", `(source language, target language)`: the keys
            of the `translation` dicts.
        table: for "hf", the split's memory-mapped `datasets.Dataset`.
        column_names: the first line names the columns (`tsv_header`): it
            is no pair, and passed over without a word.

    Example:

    >>> from keras_attention.tasks.translation.pair_files import PairFiles
    >>> PairFiles("parallel", ("train.en", "train.de")).describe()
    'train.en / train.de'
    """

    kind: str
    paths: tuple
    hash_range: tuple = None
    parity: int = None
    seed: int = 0
    reports_bad_lines: bool = True
    languages: tuple = None
    table: object = dataclasses.field(default=None, compare=False, repr=False)
    column_names: bool = False

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"`kind` must be one of {KINDS}. Received: kind={self.kind!r}")
        expected = 1 if self.kind == "tsv" else 2
        if len(self.paths) != expected:
            raise ValueError(
                f"`paths` must hold {expected} file(s) for kind {self.kind!r}. "
                f"Received: paths={self.paths!r}"
            )

    def describe(self):
        """The files (or the `datasets` split), as messages name them."""
        if self.kind == "hf":
            return f"the {self.paths[1]} split of {self.paths[0]}"
        return " / ".join(os.path.basename(path) for path in self.paths)

    def selected(self, numbers, sources):
        """Whether the pairs at line `numbers` with `sources` are the split's: a bool tensor."""
        keep = tf.ones_like(numbers, dtype=tf.bool)
        if self.parity is not None:
            keep &= tf.equal(numbers % 2, self.parity)
        if self.hash_range is not None:
            hashes = source_hashes(sources, self.seed)
            keep &= (hashes >= self.hash_range[0]) & (hashes < self.hash_range[1])
        return keep

    def dataset(self, skipped, shard=(1, 0)):
        """The split's `(source, target)` string pairs, in file order, streamed from the files.

        Args:
            skipped: the `SkippedItems` told of malformed lines (when this
                split reports them), named "FILE line N".
            shard: `(num_workers, index)`: one worker's blocks of lines,
                one in `num_workers` from block `index` on, taken before
                parsing (`worker_shards.shard_for_worker`).

        Returns:
            a `tf.data.Dataset` of scalar `tf.string` pairs.
        """
        # Lines are read, numbered and parsed in blocks: string ops on a
        # batch cost little more than on one line.
        if self.kind == "hf":
            sides = _hf_blocks(self)
        else:
            sides = tuple(line_dataset(path).batch(_PARSE_BATCH) for path in self.paths)
            sides = tf.data.Dataset.zip(sides)
        blocks = shard_for_worker(sides.enumerate(), shard)
        rows = blocks.map(self._parse_block(skipped), num_parallel_calls=tf.data.AUTOTUNE)
        return rows.unbatch()

    def _parse_block(self, skipped):
        name = self.describe()

        @tf.autograph.experimental.do_not_convert  # plain TensorFlow ops: faster tracing
        def parse(block, lines):
            # Blank lines that end one parallel file and not the other are not pairs: the
            # last block keeps the lines both sides hold.
            size = tf.reduce_min([tf.size(side, out_type=tf.int64) for side in lines])
            lines = [side[:size] for side in lines]
            numbers = block * _PARSE_BATCH + 1 + tf.range(size)
            if self.kind != "hf":  # the rows of a table are read as they are
                lines = [clean_lines(side) for side in lines]
            sources, targets, usable, passed_over = _parse_batch(self.kind, lines)  # (N,) each
            if self.column_names:  # line 1 names the columns
                passed_over |= tf.equal(numbers, 1)
                usable &= tf.logical_not(passed_over)
            if self.reports_bad_lines:
                passed = usable | passed_over
                if self.parity is not None:  # each half names the bad lines of its own parity
                    passed |= tf.not_equal(numbers % 2, self.parity)
                line = ", row " if self.kind == "hf" else " line "
                names = tf.strings.join([name + line, tf.strings.as_string(numbers)])
                usable &= skipped.keep_all(passed, names)
            keep = usable & self.selected(numbers, sources)
            return tf.boolean_mask(sources, keep), tf.boolean_mask(targets, keep)

        return parse


def _hf_blocks(files):
    """`(sources, targets)` UTF-8 string blocks of `_PARSE_BATCH` rows of an "hf" split."""

    def blocks():
        for rows in files.table.iter(batch_size=_PARSE_BATCH):
            yield translation_sides(rows["translation"], *files.languages)

    signature = (tf.TensorSpec([None], tf.string), tf.TensorSpec([None], tf.string))
    return tf.data.Dataset.from_generator(blocks, output_signature=signature)


def _parse_batch(kind, lines):
    """`(sources, targets, usable, blank)` of a batch of raw lines, as `parse_line` reads one.

    `blank` marks the lines blank on every side (`is_blank_line`): not usable, not malformed.
    """
    if kind == "tsv":
        (raw,) = lines
        blank = tf.strings.strip(raw) == ""  # tabs are whitespace too
        fields = tf.strings.split(raw, "\t")  # (N, None)
        count = fields.row_lengths()  # (N,)
        padded = fields.to_tensor(default_value="", shape=[None, 2])  # (N, 2)
        sources, targets = padded[:, 0], padded[:, 1]
        usable = (count >= 2) & (count <= 3) & _is_utf8(raw)
    else:
        sources, targets = lines
        usable = _is_utf8(sources) & _is_utf8(targets)
    sources, targets = tf.strings.strip(sources), tf.strings.strip(targets)
    if kind != "tsv":  # the two sides are the two lines
        blank = (sources == "") & (targets == "")
    usable &= (sources != "") & (targets != "")
    return sources, targets, usable, blank


def _is_utf8(texts):
    """Whether each string is valid UTF-8 (replacing bad bytes would change it)."""
    return tf.equal(tf.strings.unicode_transcode(texts, "UTF-8", "UTF-8", errors="replace"), texts)


def source_hashes(sources, seed):
    """Seeded hashes of source sentences in `[0, HASH_RANGE)`, as int64 (SipHash, keyed by seed).

    Example:

    >>> from keras_attention.tasks.translation.pair_files import source_hashes
    >>> first, again = source_hashes(["a b", "a b"], seed=0).numpy()
    >>> bool(first == again), bool(source_hashes(["a b"], seed=1)[0] != first)
    (True, True)
    """
    return tf.strings.to_hash_bucket_strong(sources, HASH_RANGE, key=[int(seed), 0x5EED])


def is_blank_line(raw_lines):
    """Whether one line (tsv) or two (parallel), as bytes, are ASCII whitespace alone.

    Such a line holds no pair and is no mistake: it is passed over, not named.

    Example:

    >>> from keras_attention.tasks.translation.pair_files import is_blank_line
    >>> is_blank_line((b" \\t",)), is_blank_line((b"", b"")), is_blank_line((b"", b"hola"))
    (True, True, False)
    """
    return not any(raw.strip(_ASCII_WHITESPACE.encode()) for raw in raw_lines)


def parse_line(kind, raw_lines):
    """`(source, target)` of one line (tsv) or two (parallel) as bytes, else None.

    None stands for a blank line (`is_blank_line`) or a malformed one: not
    UTF-8, a side blank after removing the ASCII whitespace at its ends, or
    (tsv) fewer than two or more than three tab-separated fields.

    Example:

    >>> from keras_attention.tasks.translation.pair_files import parse_line
    >>> parse_line("tsv", (b" hi \\tsalut\\tCC-BY",)), parse_line("tsv", (b"hi",))
    (('hi', 'salut'), None)
    """
    try:
        texts = [raw.decode("utf-8") for raw in raw_lines]
    except UnicodeDecodeError:
        return None
    if kind == "tsv":
        texts = texts[0].split("\t")
        if len(texts) not in (2, 3):
            return None
    source, target = (text.strip(_ASCII_WHITESPACE) for text in texts[:2])
    return (source, target) if source and target else None


@dataclasses.dataclass
class PairSample:
    """A uniform random sample of the lines of a split's files, parsed.

    Args:
        files: the `PairFiles` sampled.
        num_lines: the lines of the files.
        num_sampled: the lines sampled (all of them when `is_whole`).
        pairs: `[(line number, source, target)]` of the usable sampled lines
            that are the split's, in line order.
        bad_lines: the numbers of the malformed sampled lines.
    """

    files: PairFiles
    num_lines: int
    num_sampled: int
    pairs: list
    bad_lines: list

    @property
    def is_whole(self):
        """Whether every line of the files was read."""
        return self.num_sampled == self.num_lines

    def estimated_size(self, count=None):
        """The pairs of the files that `count` sampled pairs stand for (exact when whole)."""
        count = len(self.pairs) if count is None else count
        if self.is_whole or self.num_sampled == 0:
            return count
        return int(round(count * self.num_lines / self.num_sampled))

    def select(self, files):
        """The same sample restricted to the pairs of another split of the same files."""
        numbers = np.array([number for number, _, _ in self.pairs], np.int64)
        sources = [source for _, source, _ in self.pairs]
        keep = files.selected(numbers, sources).numpy() if self.pairs else []
        pairs = [pair for pair, kept in zip(self.pairs, keep) if kept]
        bad = [
            number
            for number in self.bad_lines
            if files.reports_bad_lines and files.parity in (None, number % 2)
        ]
        return PairSample(files, self.num_lines, self.num_sampled, pairs, bad)


def sample_pairs(files, sample_size, seed=0, show_progress=True):
    """The parsed `PairSample` of up to `sample_size` lines of `files`, drawn at random.

    Args:
        files: a `PairFiles`.
        sample_size: the most lines read.
        seed: the seed of the draw.
        show_progress: print the lines counted, in how long (a `ProgressBar`).

    Raises:
        ValueError: parallel files with different numbers of lines.
    """
    unit = "rows" if files.kind == "hf" else "lines"
    description = f"counting and sampling the {unit} of {files.describe()}"
    with ProgressBar(description, None, unit) if show_progress else contextlib.nullcontext() as bar:
        if files.kind == "hf":
            sample = _hf_sample(files, sample_size, seed)
        else:
            sample = sample_lines(files.paths, sample_size, seed)
        if bar is not None:
            bar.add(sample.num_lines)
    pairs, bad = [], []
    for number, raw_lines in sample.lines:
        pair = parse_line("tsv" if files.kind == "tsv" else "parallel", raw_lines)
        if (files.column_names and number == 1) or (pair is None and is_blank_line(raw_lines)):
            continue  # column names, or a blank line: no pair, and no mistake
        if pair is None:
            bad.append(number)
        else:
            pairs.append((number, *pair))
    every_line = PairFiles(files.kind, files.paths, languages=files.languages, table=files.table)
    whole = PairSample(every_line, sample.num_lines, len(sample.lines), pairs, bad)
    return whole.select(files)


def _hf_sample(files, sample_size, seed):
    """A `LineSample` of the rows of an "hf" split, each `(source bytes, target bytes)`."""
    table = files.table
    count = table.num_rows
    indices = sample_indices(count, sample_size, seed)
    rows = table.select(indices)["translation"] if len(indices) else []
    sources, targets = translation_sides(rows, *files.languages)
    lines = [(int(index) + 1, pair) for index, *pair in zip(indices, sources, targets)]
    return LineSample(count, [(number, tuple(pair)) for number, pair in lines], files.paths)
