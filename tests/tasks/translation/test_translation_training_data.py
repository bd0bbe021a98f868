"""A translation run's data: vocabularies saved and reversible, token statistics, batches."""

import collections
import math

import numpy as np
import tensorflow as tf

from keras_attention.tasks.translation.flags import parse_translation_arguments
from keras_attention.tasks.translation.sources import load_translation_pairs
from keras_attention.tasks.translation.training_data import prepare_translation_data
from keras_attention.tasks.translation.training_data import train_translation_vocabularies
from keras_attention.tasks.translation.training_data import translation_token_statistics
from keras_attention.text.reversible_tokenizer import ReversibleTokenizer

SOURCES = ["the dog sleeps", "a cat", "the old dog sees a cat", "hello"]
TARGETS = ["el perro duerme", "un gato", "el perro viejo ve un gato", "hola"]


def _pairs():
    return tf.data.Dataset.from_tensor_slices((SOURCES, TARGETS))


def test_vocabularies_are_saved_and_give_the_text_back(tmp_path):
    source, target = train_translation_vocabularies(_pairs(), 300, str(tmp_path))
    for encoder, name, texts in ((source, "source", SOURCES), (target, "target", TARGETS)):
        reloaded = ReversibleTokenizer.load(tmp_path / "vocabulary" / name)
        assert reloaded.vocabulary == encoder.vocabulary
        decoded = reloaded.decode(reloaded.encode(texts, 40, add_end=True)).numpy().tolist()
        assert decoded == [text.encode() for text in texts]


def test_token_statistics_match_a_count_of_the_tokens(tmp_path):
    source, target = train_translation_vocabularies(_pairs(), 300, str(tmp_path))
    statistics = translation_token_statistics(_pairs(), source, target)
    source_lengths = [len(source.tokenize([text]).flat_values) for text in SOURCES]
    target_tokens = [list(target.tokenize([text]).flat_values.numpy()) for text in TARGETS]
    assert statistics.source_lengths.tolist() == source_lengths
    assert statistics.target_lengths.tolist() == [len(tokens) for tokens in target_tokens]
    # Four pairs: the 99.9th percentile is the longest sentence.
    longest = (max(source_lengths), max(len(tokens) for tokens in target_tokens))
    assert statistics.fitting_lengths() == longest
    unigram_loss = statistics.unigram_loss
    # The entropy of the target tokens' frequencies, each sentence's end token included.
    counts = collections.Counter(
        token for tokens in target_tokens for token in tokens + [target.end_id]
    )
    total = sum(counts.values())
    entropy = -sum(count / total * math.log(count / total) for count in counts.values())
    np.testing.assert_allclose(unigram_loss, entropy, rtol=1e-6)


def test_prepare_translation_data_fills_the_flags_and_batches(tmp_path):
    args = parse_translation_arguments(["--output-dir", str(tmp_path), "--max-length", "12"])
    splits = load_translation_pairs("builtin", num_pairs=200)
    data = prepare_translation_data(splits, args)
    assert (data.held_out, data.num_train) == ("test", 180)
    # 180 pairs: the smallest batch (16), and 54,000 pairs seen at most 100 epochs.
    assert (args.max_length, args.batch_size, args.epochs) == (12, 16, 100)
    assert (tmp_path / "vocabulary" / "source").exists()
    assert data.split_sizes == {"train": 180, "validation": 10, "test": 10}
    lines = data.summary_lines()
    assert lines[0] == (
        "data: built-in English -> Spanish corpus: train 180 sentence pairs, validation 10, test 10"
    )
    assert lines[1] == (
        f"vocabularies: {data.source_encoder.vocabulary_size} source and "
        f"{data.target_encoder.vocabulary_size} target tokens"
    )
    assert lines[2] == "training on 180 sentence pairs:"
    assert lines[3] == "  max_length 12: set by the user"
    # Pairs that do not fit 12 tokens uncut (a source of 12 at most, a target of 11 and its
    # start or end token) are left out of training, counted, and said in the summary.
    fits = [
        len(data.source_encoder.tokenize([source]).flat_values) <= 12
        and len(data.target_encoder.tokenize([target]).flat_values) <= 11
        for source, target in splits.sample
    ]
    assert len(fits) == 180 and 0 < fits.count(False) < 180
    assert lines[-1].startswith(f"  pairs longer than 12 tokens: {fits.count(False) / 180:.2%}")
    # Training batches all have one shape (the partial one is dropped).
    shapes = [inputs["source"].shape for inputs, _ in data.train]
    assert len(shapes) == fits.count(True) // 16 and set(shapes) == {(16, 12)}
    long_pairs = data.skipped[-1]
    assert long_pairs.take_count() == fits.count(False)
    assert data.validation is not None
    assert sum(int(labels.shape[0]) for _, labels in data.validation) == 10  # kept whole
