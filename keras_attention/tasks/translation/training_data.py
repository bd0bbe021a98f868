"""A translator's training data: the pairs, vocabularies, token statistics, recipe and batches.

`load_translation_splits(args)` reads the `--dataset` with its flags (a data
set that cannot be downloaded ends the run with one line).
`prepare_translation_data` turns the sentence pairs of a run into what
training needs, in three steps that can also be called alone:

- `train_translation_vocabularies` learns one reversible vocabulary per
  language and saves it under `<output_dir>/vocabulary/{source,target}`;
- `translation_token_statistics` measures the training pairs in tokens: the
  longest sentences (the sequence length) and the unigram loss of the
  target tokens (what a model that ignores the source can reach);
- `apply_translation_recipe` fills in the flags left out (sequence length,
  batch size, epochs), then the pairs become teacher-forcing batches.
"""

import dataclasses
import os

import numpy as np

from keras_attention.data.dataset_length import dataset_length
from keras_attention.losses.prior_cross_entropy import prior_cross_entropy
from keras_attention.progress import ProgressBar
from keras_attention.progress import dataset_size
from keras_attention.tasks.translation.batches import make_translation_batches
from keras_attention.tasks.translation.recipe_from_flags import apply_translation_recipe
from keras_attention.tasks.translation.sources import load_translation_pairs
from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
from keras_attention.training import command_line as cli
from keras_attention.training.download_errors import download_errors_as_exit
from keras_attention.validation import check_positive_int

# Sentences tokenized at once while measuring the training set.
TOKENIZE_BATCH_SIZE = 1024


def load_translation_splits(args):
    """The sentence pairs of `args.dataset`, read with the flags that concern them.

    Args:
        args: the parsed flags (`parse_translation_arguments`).

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
    with download_errors_as_exit():
        return load_translation_pairs(
            args.dataset,
            num_pairs=args.builtin_pairs,
            **cli.flag_values(
                args, "seed", "strict", "data_dir", "source_lang", "target_lang", "test_prefix"
            ),
        )


def train_translation_vocabularies(train_pairs, vocabulary_size, output_dir):
    """Reversible vocabularies of both languages, saved under `output_dir/vocabulary`.

    Args:
        train_pairs: a `tf.data.Dataset` of `(source, target)` strings.
        vocabulary_size: the most tokens per language (see
            `ReversibleTokenizer.train`).
        output_dir: the run's folder; the vocabularies go to
            `vocabulary/source` and `vocabulary/target` in it.

    Returns:
        `(source_encoder, target_encoder)`, two `ReversibleTokenizer`.

    Example:

    >>> import tempfile, tensorflow as tf
    >>> from keras_attention.tasks.translation.training_data import (
    ...     train_translation_vocabularies)
    >>> pairs = tf.data.Dataset.from_tensor_slices((["the cat"], ["el gato"]))
    >>> source, target = train_translation_vocabularies(pairs, 300, tempfile.mkdtemp())
    learning the source vocabulary: 1 sentence in ... s
    learning the target vocabulary: 1 sentence in ... s
    >>> target.decode(target.encode(["el gato"], 12)).numpy().tolist()
    [b'el gato']
    """
    check_positive_int("vocabulary_size", vocabulary_size)
    texts = {
        "source": train_pairs.map(lambda source, target: source),
        "target": train_pairs.map(lambda source, target: target),
    }
    encoders = []
    for name, side in texts.items():
        with ProgressBar(f"learning the {name} vocabulary", dataset_size(side), "sentences") as bar:
            encoder = ReversibleTokenizer.train(side, vocabulary_size, progress=bar)
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
    from keras_attention.models.translation.marian_checkpoints import marian_tokenizers
    from keras_attention.text.tokenizer_files import save_tokenizer

    try:
        encoders = marian_tokenizers(checkpoint)
    except ValueError as error:
        raise SystemExit(f"--init-from {checkpoint}: {error}") from None
    for name, encoder in zip(("source", "target"), encoders):
        save_tokenizer(encoder, os.path.join(output_dir, "vocabulary", name))
    print(f"tokenizers of {checkpoint}: {encoders[0].vocabulary_size} tokens, kept")
    return encoders


def translation_token_statistics(train_pairs, source_encoder, target_encoder):
    """Longest source and target in tokens, and the unigram loss of the target tokens.

    The unigram loss counts the target tokens the model predicts (the text's
    tokens and the end token): a model that ignores the source can reach it.

    Args:
        train_pairs: a `tf.data.Dataset` of `(source, target)` strings.
        source_encoder, target_encoder: the languages' tokenizers.

    Returns:
        `(longest_source, longest_target, unigram_loss)`: two ints (at
        least 1) and a float in nats.

    Example:

    >>> import tensorflow as tf
    >>> from keras_attention.text.reversible_tokenizer import ReversibleTokenizer
    >>> from keras_attention.tasks.translation.training_data import (
    ...     translation_token_statistics)
    >>> encoder = ReversibleTokenizer.train(["a", "a a"], 300)
    >>> pairs = tf.data.Dataset.from_tensor_slices((["a", "a a"], ["a", "a"]))
    >>> longest_source, longest_target, loss = translation_token_statistics(pairs, encoder, encoder)
    >>> longest_target, round(loss, 4)  # "a" then the end token, twice: ln 2
    (1, 0.6931)
    """
    longest = [1, 1]
    target_ids = []
    for sources, targets in train_pairs.batch(TOKENIZE_BATCH_SIZE):
        source_lengths = source_encoder.tokenize(sources).row_lengths().numpy()
        target_tokens = target_encoder.tokenize(targets)
        longest[0] = max(longest[0], int(source_lengths.max(initial=0)))
        longest[1] = max(longest[1], int(target_tokens.row_lengths().numpy().max(initial=0)))
        target_ids.append(target_tokens.flat_values.numpy())
        target_ids.append(np.full(len(targets), target_encoder.end_id))
    return longest[0], longest[1], prior_cross_entropy(target_ids)


@dataclasses.dataclass
class TranslationData:
    """What `prepare_translation_data` made of a run's sentence pairs.

    Args:
        splits: dict split name -> `tf.data.Dataset` of `(source, target)` strings.
        held_out: the split to score on: "test" where there is one, else "validation".
        source_encoder, target_encoder: the languages' `ReversibleTokenizer`.
        num_train: number of training pairs.
        unigram_loss: the loss of a model that ignores the source, in nats.
        recipe: the `TranslationTrainingRecipe`.
        train: shuffled training batches of one shape.
        validation: validation batches, or None without a validation split.
        split_sizes: dict split name -> number of sentence pairs.
        layout: what was read and how it was split, one line ("" if unknown).
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
        )


def translation_split_batches(pairs, source_encoder, target_encoder, args, shuffle):
    """Teacher-forcing batches of `pairs` at `args.batch_size` and `args.max_length`.

    Shuffled batches drop the last partial one where there is a full one:
    one batch shape while training, so XLA compiles the step once.
    """
    enough = int(pairs.cardinality()) >= args.batch_size
    return make_translation_batches(
        pairs,
        source_encoder,
        target_encoder,
        args.batch_size,
        args.max_length,
        args.max_length,
        shuffle=shuffle,
        seed=args.seed,
        drop_remainder=shuffle and enough,
    )


def prepare_translation_data(splits, args):
    """Vocabularies, statistics, recipe and batches of a run's sentence pairs.

    Fills `args.max_length`, `args.batch_size` and `args.epochs` where the
    user left them out (see `apply_translation_recipe`).

    Args:
        splits: dict split name -> `(source, target)` pairs, with "train"
            and "test" or "validation" (as `load_translation_pairs` gives).
        args: the parsed flags (`parse_translation_arguments`): their
            `vocabulary_size`, `output_dir`, `seed` and the recipe's flags.

    Returns:
        a `TranslationData`.

    Example:

    >>> import tempfile
    >>> from keras_attention.tasks.translation.sources import load_translation_pairs
    >>> from keras_attention.tasks.translation.flags import parse_translation_arguments
    >>> from keras_attention.tasks.translation.training_data import prepare_translation_data
    >>> args = parse_translation_arguments(["--output-dir", tempfile.mkdtemp()])
    >>> data = prepare_translation_data(load_translation_pairs("builtin", num_pairs=200), args)
    learning the source vocabulary: 180 sentences in ... s
    learning the target vocabulary: 180 sentences in ... s
    >>> data.held_out, data.num_train, args.batch_size, args.epochs
    ('test', 180, 16, 100)
    >>> data.split_sizes, data.summary_lines()[0]
    ({'train': 180, 'validation': 10, 'test': 10}, 'data: built-in English -> Spanish corpus: ...')
    """
    if getattr(args, "init_from", None):
        source_encoder, target_encoder = checkpoint_tokenizers(args.init_from, args.output_dir)
    else:
        source_encoder, target_encoder = train_translation_vocabularies(
            splits["train"], args.vocabulary_size, args.output_dir
        )
    longest_source, longest_target, unigram_loss = translation_token_statistics(
        splits["train"], source_encoder, target_encoder
    )
    num_train = dataset_length(splits["train"])
    recipe = apply_translation_recipe(args, num_train, longest_source, longest_target)
    has_validation = "validation" in splits and int(splits["validation"].cardinality()) != 0
    encoders = (source_encoder, target_encoder)
    sizes = getattr(splits, "sizes", None) or {
        name: dataset_length(split) for name, split in splits.items()
    }
    return TranslationData(
        splits=splits,
        held_out="test" if "test" in splits else "validation",
        source_encoder=source_encoder,
        target_encoder=target_encoder,
        num_train=num_train,
        unigram_loss=unigram_loss,
        recipe=recipe,
        train=translation_split_batches(splits["train"], *encoders, args, shuffle=True),
        validation=(
            translation_split_batches(splits["validation"], *encoders, args, shuffle=False)
            if has_validation
            else None
        ),
        split_sizes=dict(sizes),
        layout=splits.summary() if hasattr(splits, "summary") else "",
    )
