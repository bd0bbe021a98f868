"""A translator's training data: the pairs, vocabularies, token statistics, recipe and batches.

`load_translation_splits(args)` reads the `--dataset` with its flags (a data
set that cannot be downloaded ends the run with one line): files are
streamed, and a sample of their training pairs (all of them for a small
data set) is read before training. `prepare_translation_data` turns the
splits into what training needs, in three steps that can also be called
alone, each on that sample, never on every pair:

- `train_translation_vocabularies` learns one reversible vocabulary per
  language and saves it under `<output_dir>/vocabulary/{source,target}`;
- `translation_token_statistics` measures the pairs in tokens: the lengths
  (the sequence length fits `LENGTH_PERCENTILE` percent of them) and the
  unigram loss of the target tokens (what a model that ignores the source
  can reach);
- `apply_translation_recipe` fills in the flags left out (sequence length,
  batch size, epochs), then the pairs become teacher-forcing batches, the
  training pairs that do not fit left out (`--long-pairs drop`, counted)
  or cut.
"""

import dataclasses
import os

import numpy as np

from keras_attention.data.dataset_splits import check_scored_split
from keras_attention.data.length_limits import LENGTH_PERCENTILE
from keras_attention.data.length_limits import covering_length
from keras_attention.data.length_limits import share_longer
from keras_attention.data.skipped_items import SkippedItems
from keras_attention.data.worker_shards import ONE_WORKER
from keras_attention.losses.prior_cross_entropy import prior_cross_entropy
from keras_attention.progress import ProgressBar
from keras_attention.tasks.run_vocabulary import kept_tokenizers
from keras_attention.tasks.translation.batches import make_translation_batches
from keras_attention.tasks.translation.recipe_from_flags import apply_translation_recipe
from keras_attention.tasks.translation.sources import load_translation_pairs
from keras_attention.text.frequent_merges import frequent_piece_count
from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
from keras_attention.training import command_line as cli
from keras_attention.training.input_errors import download_errors_as_exit
from keras_attention.validation import check_positive_int

# The run's file of the malformed lines its pipelines skip.
SKIPPED_LINES_FILE = "skipped_lines.txt"
# Pairs a training batch's shuffle draws from: enough to mix a file's neighbouring lines.
SHUFFLE_BUFFER = 50_000
# Pairs measured of a plain dict of datasets, which comes without a sample.
SAMPLE_FOR_PLAIN_SPLITS = 200_000

# Sentences tokenized at once while measuring the training set.
TOKENIZE_BATCH_SIZE = 1024


def load_translation_splits(args, shard=ONE_WORKER):
    """The sentence pairs of `args.dataset`, read with the flags that concern them.

    Args:
        args: the parsed flags (`parse_translation_arguments`).
        shard: `(num_workers, index)`: this worker's share of the training
            files (`TrainingRun.input_shard`).

    Returns:
        the `DatasetSplits` of `load_translation_pairs`.

    Raises:
        SystemExit: a tensorflow-datasets set cannot be downloaded (one line).

    Example:

    >>> from keras_attention.tasks.translation.flags import parse_translation_arguments
    >>> from keras_attention.tasks.translation.training_data import load_translation_splits
    >>> splits = load_translation_splits(parse_translation_arguments(["--builtin-pairs", "100"]))
    >>> splits.sizes
    {'train': 90, 'validation': 5, 'test': 5}
    """
    malformed = SkippedItems(
        "malformed lines", os.path.join(args.output_dir, SKIPPED_LINES_FILE), strict=args.strict
    )
    with download_errors_as_exit():
        return load_translation_pairs(
            args.dataset,
            num_pairs=args.builtin_pairs,
            skipped=malformed,
            shard=shard,
            **cli.flag_values(
                args,
                "seed",
                "strict",
                "data_dir",
                "source_lang",
                "target_lang",
                "test_prefix",
                "allow_outside_links",
            ),
        )


def train_translation_vocabularies(train_pairs, vocabulary_size, output_dir):
    """Reversible vocabularies of both languages, saved under `output_dir/vocabulary`.

    Args:
        train_pairs: the `(source, target)` string pairs to learn from: a
            list (a sample of the training pairs, `DatasetSplits.sample`)
            or a `tf.data.Dataset`.
        vocabulary_size: the most tokens per language (see
            `ReversibleTokenizer.train`). Merges made fewer than
            `frequent_piece_count` times (50 from 5,000 pairs on) are left
            out, so a small corpus gets fewer: pieces a model meets too
            seldom to learn, such as two parts of a compound joined, would
            replace the well-learned parts.
        output_dir: the run's folder; the vocabularies go to
            `vocabulary/source` and `vocabulary/target` in it.

    Returns:
        `(source_encoder, target_encoder)`, two `ReversibleTokenizer`.

    Example:

    >>> import tempfile, tensorflow as tf
    >>> from keras_attention.tasks.translation.training_data import (
    ...     train_translation_vocabularies)
    >>> pairs = [("the cat", "el gato")]
    >>> source, target = train_translation_vocabularies(pairs, 300, tempfile.mkdtemp())
    learning the source vocabulary: 1 sentence in ...
    learning the target vocabulary: 1 sentence in ...
    >>> target.decode(target.encode(["el gato"], 12)).numpy().tolist()
    [b'el gato']
    """
    check_positive_int("vocabulary_size", vocabulary_size)
    pairs = _pair_list(train_pairs)
    encoders = []
    for index, name in enumerate(("source", "target")):
        side = [pair[index] for pair in pairs]
        with ProgressBar(f"learning the {name} vocabulary", len(side), "sentences") as bar:
            encoder = ReversibleTokenizer.train(
                side,
                vocabulary_size,
                min_piece_count=frequent_piece_count(len(side)),
                progress=bar,
            )
        encoder.save(os.path.join(output_dir, "vocabulary", name))
        encoders.append(encoder)
    return tuple(encoders)


def checkpoint_tokenizers(checkpoint, output_dir):
    """`--init-from`: the checkpoint's tokenizers, saved under `output_dir/vocabulary` too.

    Args:
        checkpoint: a Marian checkpoint folder with its tokenizer files.
        output_dir: the run's folder; the tokenizers go to `vocabulary/source`
            and `vocabulary/target` in it, as a learned vocabulary would.

    Returns:
        `(source_encoder, target_encoder)`, two `SentencePieceTokenizer`.

    Raises:
        SystemExit: the folder is not a Marian checkpoint with its tokenizer (one line).
    """
    from keras_attention.models.checkpoints.marian_checkpoints import marian_tokenizers
    from keras_attention.text.tokenizer_files import save_tokenizer

    try:
        encoders = marian_tokenizers(checkpoint)
    except ValueError as error:
        raise SystemExit(f"--init-from {checkpoint}: {error}") from None
    for name, encoder in zip(("source", "target"), encoders):
        save_tokenizer(encoder, os.path.join(output_dir, "vocabulary", name))
    print(f"tokenizers of {checkpoint}: {encoders[0].vocabulary_size} tokens, kept")
    return encoders


def _pair_list(pairs):
    """`[(source, target)]` strings of a list of pairs or a `tf.data.Dataset` of them."""
    if isinstance(pairs, (list, tuple)):
        return list(pairs)
    return [
        (source.decode("utf-8"), target.decode("utf-8"))
        for source, target in pairs.as_numpy_iterator()
    ]


@dataclasses.dataclass
class TokenStatistics:
    """The training pairs measured in tokens.

    Args:
        source_lengths, target_lengths: int arrays, the tokens of each
            pair's source and target (without start and end tokens).
        unigram_loss: the loss of predicting the target tokens' frequencies
            (and the end token), which a model that ignores the source can
            reach, in nats.
    """

    source_lengths: np.ndarray
    target_lengths: np.ndarray
    unigram_loss: float

    def fitting_lengths(self, percentile=LENGTH_PERCENTILE):
        """`(source, target)` tokens that `percentile` percent of the pairs' sentences fit."""
        return (
            covering_length(self.source_lengths, percentile),
            covering_length(self.target_lengths, percentile),
        )


def translation_token_statistics(train_pairs, source_encoder, target_encoder):
    """The token lengths of training pairs, and the unigram loss of their target tokens.

    The unigram loss counts the target tokens the model predicts (the text's
    tokens and the end token): a model that ignores the source can reach it.

    Args:
        train_pairs: `(source, target)` string pairs: a list (a sample of
            the training pairs) or a `tf.data.Dataset`.
        source_encoder, target_encoder: the languages' tokenizers.

    Returns:
        a `TokenStatistics`.

    Example:

    >>> from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
    >>> from keras_attention.tasks.translation.training_data import (
    ...     translation_token_statistics)
    >>> encoder = ReversibleTokenizer.train(["a", "a a"], 300)
    >>> statistics = translation_token_statistics([("a", "a"), ("a a", "a")], encoder, encoder)
    >>> statistics.target_lengths.tolist(), round(statistics.unigram_loss, 4)  # "a", end: ln 2
    ([1, 1], 0.6931)
    """
    pairs = _pair_list(train_pairs)
    lengths, target_ids = ([], []), []
    for start in range(0, len(pairs), TOKENIZE_BATCH_SIZE):
        batch = pairs[start : start + TOKENIZE_BATCH_SIZE]
        sources = source_encoder.tokenize([source for source, _ in batch])
        targets = target_encoder.tokenize([target for _, target in batch])
        lengths[0].append(sources.row_lengths().numpy())
        lengths[1].append(targets.row_lengths().numpy())
        target_ids += [targets.flat_values.numpy(), np.full(len(batch), target_encoder.end_id)]
    source_lengths, target_lengths = (
        np.concatenate(side) if side else np.zeros(0, np.int64) for side in lengths
    )
    return TokenStatistics(source_lengths, target_lengths, prior_cross_entropy(target_ids))


@dataclasses.dataclass
class TranslationData:
    """What `prepare_translation_data` made of a run's sentence pairs.

    Args:
        splits: dict split name -> `tf.data.Dataset` of `(source, target)` strings.
        held_out: the split to score on: "test" where there is one, else "validation".
        source_encoder, target_encoder: the languages' `ReversibleTokenizer`.
        num_train: number of training pairs (estimated for a large file).
        unigram_loss: the loss of a model that ignores the source, in nats.
        recipe: the `TranslationTrainingRecipe`.
        train: shuffled training batches of one shape.
        validation: validation batches, or None without a validation split.
        split_sizes: dict split name -> number of sentence pairs.
        layout: what was read and how it was split, one line ("" if unknown).
        long_pairs: one line on the training pairs longer than the
            sequence length, or "" when the sample has none.
        skipped: the `SkippedItems` of the pipelines (malformed lines, long
            pairs left out), for a run to report once an epoch.
    """

    splits: dict
    held_out: str
    source_encoder: object
    target_encoder: object
    num_train: int
    unigram_loss: float
    recipe: object
    train: object
    validation: object
    split_sizes: dict
    layout: str = ""
    long_pairs: str = ""
    skipped: tuple = ()

    def summary_lines(self):
        """The data, the vocabularies' sizes and the recipe's choices, one line each, to print."""
        return (
            ([f"data: {self.layout}"] if self.layout else [])
            + [
                f"vocabularies: {self.source_encoder.vocabulary_size} source and "
                f"{self.target_encoder.vocabulary_size} target tokens",
                f"training on {self.num_train} sentence pairs:",
            ]
            + [f"  {line}" for line in self.recipe.summary_lines()]
            + ([f"  {self.long_pairs}"] if self.long_pairs else [])
        )


def translation_split_batches(
    pairs, encoders, args, num_pairs, shuffle, skipped=None, shuffle_seed=None
):
    """Teacher-forcing batches of `pairs` at `args.batch_size` and `args.max_length`.

    Shuffled (training) batches drop the last partial one where there is a
    full one, one batch shape, so XLA compiles the step once; they leave out
    the pairs longer than `args.max_length` (`--long-pairs drop`, told to
    `skipped`) or cut them. Other batches cut them.

    Args:
        pairs: a `tf.data.Dataset` of `(source, target)` strings.
        encoders: `(source_encoder, target_encoder)`.
        args: the parsed flags (`batch_size`, `max_length`, `seed`, `long_pairs`).
        num_pairs: the pairs in `pairs`, about.
        shuffle: training batches.
        skipped: the `SkippedItems` of the pairs left out.
        shuffle_seed: the seed of the shuffle (default `args.seed`).
    """
    return make_translation_batches(
        pairs,
        *encoders,
        args.batch_size,
        args.max_length,
        args.max_length,
        shuffle=shuffle,
        seed=args.seed if shuffle_seed is None else shuffle_seed,
        drop_remainder=shuffle and num_pairs >= args.batch_size,
        shuffle_buffer_size=SHUFFLE_BUFFER,
        long_pairs=getattr(args, "long_pairs", "truncate") if shuffle else "truncate",
        skipped=skipped,
    )


def _validation_pairs(splits, streamed):
    """The validation pairs; streamed ones kept in memory after the first pass.

    A streamed validation split is drawn by hash from a file it shares with
    the training pairs: kept, the next epochs' validation reads its pairs
    (a twentieth of the file, strings only) instead of the whole file again.
    """
    pairs = splits["validation"]
    return pairs.cache() if streamed else pairs


def _training_sample(splits):
    """The training pairs a run measures: the splits' sample, or the first of a plain dict's."""
    sample = getattr(splits, "sample", None)
    if sample is None:
        sample = _pair_list(splits["train"].take(SAMPLE_FOR_PLAIN_SPLITS))
    return sample


def _split_sizes(splits):
    """The pairs of each split: their `sizes`, or counted for a plain dict of datasets."""
    sizes = getattr(splits, "sizes", None)
    if sizes is None:
        sizes = {
            name: int(split.reduce(np.int64(0), lambda count, _: count + 1))
            for name, split in splits.items()
        }
    return dict(sizes)


def _long_pairs_line(statistics, source_encoder, args, num_train):
    """One line on the sampled training pairs that do not fit `args.max_length`, or "".

    Raises:
        SystemExit: left out (`--long-pairs drop`), they would leave less
            than a batch to train on: one line saying what to change.
    """
    # A source with the end token its tokenizer always adds; a target with
    # the start (decoder input) or end (labels) token.
    source_extra = int(bool(getattr(source_encoder, "always_add_end", False)))
    longer = np.maximum(statistics.source_lengths + source_extra, statistics.target_lengths + 1)
    share = share_longer(longer, args.max_length)
    if share == 0:
        return ""
    kept = round((1 - share) * num_train)
    if args.long_pairs == "drop" and kept < args.batch_size:
        raise SystemExit(
            f"error: --max-length {args.max_length} leaves about {kept} of the {num_train} "
            f"training pairs ({share:.1%} of those measured are longer), fewer than a batch of "
            f"{args.batch_size}: give a larger --max-length, or --long-pairs truncate to cut them"
        )
    action = "left out of training" if args.long_pairs == "drop" else "cut to it"
    return (
        f"pairs longer than {args.max_length} tokens: {share:.2%} of the "
        f"{len(longer)} measured (about {round(share * num_train)} of the training pairs), "
        f"{action} (--long-pairs)"
    )


def prepare_translation_data(splits, args, shuffle_seed=None):
    """Vocabularies, statistics, recipe and batches of a run's sentence pairs.

    Fills `args.max_length`, `args.batch_size` and `args.epochs` where the
    user left them out (see `apply_translation_recipe`). Everything measured
    before training is measured on the training sample (`splits.sample`).

    Args:
        splits: the `DatasetSplits` of `load_translation_pairs` (or a dict
            split name -> `(source, target)` pairs, with "train" and "test"
            or "validation").
        args: the parsed flags (`parse_translation_arguments`): their
            `vocabulary_size`, `output_dir`, `seed` and the recipe's flags.
        shuffle_seed: the seed of the training batches' shuffle (default
            `args.seed`; a resumed run passes another, not to see the same
            batches again).

    Returns:
        a `TranslationData`.

    Example:

    >>> import tempfile
    >>> from keras_attention.tasks.translation.sources import load_translation_pairs
    >>> from keras_attention.tasks.translation.flags import parse_translation_arguments
    >>> from keras_attention.tasks.translation.training_data import prepare_translation_data
    >>> args = parse_translation_arguments(["--output-dir", tempfile.mkdtemp()])
    >>> data = prepare_translation_data(load_translation_pairs("builtin", num_pairs=200), args)
    learning the source vocabulary: 180 sentences in ...
    learning the target vocabulary: 180 sentences in ...
    >>> data.held_out, data.num_train, args.batch_size, args.epochs
    ('test', 180, 16, 100)
    >>> data.split_sizes, data.summary_lines()[0]
    ({'train': 180, 'validation': 10, 'test': 10}, 'data: built-in English -> Spanish corpus: ...')
    """
    sizes = _split_sizes(splits)
    held_out = "test" if "test" in splits else "validation"
    source = splits.layout if hasattr(splits, "layout") else "the data"
    check_scored_split(sizes, held_out, "sentence pairs", source)  # before any training
    sample = _training_sample(splits)
    encoders = kept_tokenizers(args.output_dir, ("source", "target"))  # a run that goes on
    if encoders is None and getattr(args, "init_from", None):
        encoders = checkpoint_tokenizers(args.init_from, args.output_dir)
    elif encoders is None:
        encoders = train_translation_vocabularies(sample, args.vocabulary_size, args.output_dir)
    statistics = translation_token_statistics(sample, *encoders)
    num_train = sizes["train"]
    estimated = getattr(splits, "estimated", False)
    basis = (
        f"{LENGTH_PERCENTILE:g}% of the {len(sample)} "
        + ("sampled " if estimated else "")
        + "training pairs have sentences of at most"
    )
    recipe = apply_translation_recipe(args, num_train, *statistics.fitting_lengths(), basis)
    long_pairs = SkippedItems(f"training pairs longer than {args.max_length} tokens")
    has_validation = sizes.get("validation", 0) > 0
    return TranslationData(
        splits=splits,
        held_out=held_out,
        source_encoder=encoders[0],
        target_encoder=encoders[1],
        num_train=num_train,
        unigram_loss=statistics.unigram_loss,
        recipe=recipe,
        train=translation_split_batches(
            splits["train"], encoders, args, num_train, True, long_pairs, shuffle_seed
        ),
        validation=(
            translation_split_batches(
                _validation_pairs(splits, estimated), encoders, args, sizes["validation"], False
            )
            if has_validation
            else None
        ),
        split_sizes=sizes,
        layout=splits.summary() if hasattr(splits, "summary") else "",
        long_pairs=_long_pairs_line(statistics, encoders[0], args, num_train),
        skipped=(*getattr(splits, "skipped", ()), long_pairs),
    )
